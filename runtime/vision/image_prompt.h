// A prompt's image markers expanded as the Hugging Face processor expands them, before
// tokenization (ImagePrompt's layouts): Gemma 3's marker "<start_of_image>", which its
// chat template writes for an image, becomes ImagePrompt::before, the image token once
// per row the image encodes to, then ImagePrompt::after; SmolVLM's "<image>" becomes
// each tile's name and tokens, then the global view's. Tokenized with special tokens
// matched, the text holds exactly one image token per row, which
// Session::PrefillEmbedded fills. Writes into caller memory; nothing here allocates.
#ifndef EMBER_RUNTIME_VISION_IMAGE_PROMPT_H_
#define EMBER_RUNTIME_VISION_IMAGE_PROMPT_H_

#include <cstddef>
#include <string_view>

#include "runtime/model/image_processor_config.h"
#include "runtime/status.h"

namespace ember {

// What one image became, as its text needs it: its rows in all, and its grid
// (ImageGrid::rows x cols tiles cut from it, then the global view; 0 x 0 when the image
// was one tile). kSingle reads only `rows`.
struct PromptImage {
  size_t rows = 0;
  int grid_rows = 0;
  int grid_cols = 0;
};

// The markers in `text`, not overlapping, left to right.
size_t CountImageMarkers(const ImagePrompt& prompt, std::string_view text);

// What a text with no marker at all does with images: refused, or given one marker
// per image at its start (the commands' and the C API's choice).
enum class UnmarkedImages { kRefuse, kFirst };

// The bytes of the expanded text for `images` images (one per marker): InvalidArgument
// when the counts differ, the model's prompt has no marker, or (kTiles) an image's rows
// do not split evenly over its tiles; OutOfRange when the size overflows.
Result<size_t> ExpandedImagePromptBytes(
    const ImagePrompt& prompt, std::string_view text, const PromptImage* images,
    size_t count, UnmarkedImages unmarked = UnmarkedImages::kRefuse);

// Writes the expanded text to out[0, *length) (at most `capacity` bytes).
Status ExpandImagePrompt(const ImagePrompt& prompt, std::string_view text,
                         const PromptImage* images, size_t count, char* out,
                         size_t capacity, size_t* length,
                         UnmarkedImages unmarked = UnmarkedImages::kRefuse);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_IMAGE_PROMPT_H_
