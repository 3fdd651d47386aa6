// A prompt's image markers expanded as the Hugging Face processor expands them, before
// tokenization: each marker (Gemma 3's "<start_of_image>", which its chat template
// writes for an image) becomes ImagePrompt::before, the image token once per row the
// image encodes to, then ImagePrompt::after. Tokenized with special tokens matched, the
// text holds exactly one image token per row, which Session::PrefillEmbedded fills.
// Writes into caller memory; nothing here allocates.
#ifndef EMBER_RUNTIME_VISION_IMAGE_PROMPT_H_
#define EMBER_RUNTIME_VISION_IMAGE_PROMPT_H_

#include <cstddef>
#include <string_view>

#include "runtime/model/image_processor_config.h"
#include "runtime/status.h"

namespace ember {

// The markers in `text`, not overlapping, left to right.
size_t CountImageMarkers(const ImagePrompt& prompt, std::string_view text);

// What a text with no marker at all does with images: refused, or given one marker
// per image at its start (the commands' and the C API's choice).
enum class UnmarkedImages { kRefuse, kFirst };

// The bytes of the expanded text when image i encodes to rows[i] rows (`images` of
// them, one per marker): InvalidArgument when the counts differ or the model's prompt
// has no marker, OutOfRange when the size overflows.
Result<size_t> ExpandedImagePromptBytes(
    const ImagePrompt& prompt, std::string_view text, const size_t* rows, size_t images,
    UnmarkedImages unmarked = UnmarkedImages::kRefuse);

// Writes the expanded text to out[0, *length) (at most `capacity` bytes).
Status ExpandImagePrompt(const ImagePrompt& prompt, std::string_view text,
                         const size_t* rows, size_t images, char* out, size_t capacity,
                         size_t* length,
                         UnmarkedImages unmarked = UnmarkedImages::kRefuse);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_IMAGE_PROMPT_H_
