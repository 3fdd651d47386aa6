// The commands' images (`ember run --image`, `ember image -m`): the files read, an
// ImageEncoder planned for exactly their sizes, each encoded and timed, and the prompt
// text with its image markers expanded and tokenized as the model's processor does.
#ifndef EMBER_TOOLS_CLI_IMAGE_FLAGS_H_
#define EMBER_TOOLS_CLI_IMAGE_FLAGS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model/model.h"
#include "runtime/pool/thread_pool.h"
#include "runtime/status.h"
#include "runtime/vision/image_encoder.h"
#include "tools/cli/args.h"

namespace ember::tools {

struct FlagImages {
  std::vector<std::string> paths;
  std::vector<std::vector<uint8_t>> files;  // their bytes, as read
  std::vector<EncodedImage> encoded;  // one per path
  ImageEncoderPlan plan;
  std::vector<uint8_t> storage;  // the encoder's arena
  std::optional<ImageEncoder> encoder;
  double encode_seconds = 0.0;
  bool empty() const { return paths.empty(); }
};

// Reads every --image FILE and encodes it with `model`'s tower (the model must have one),
// in an arena sized by the images' own headers.
Status EncodeFlagImages(const ArgParser& args, const Model& model, const ThreadPool* pool,
                        const char* isa, FlagImages* images);
// The same for the files at `paths`.
Status EncodeImageFiles(const std::vector<std::string>& paths, const Model& model,
                        const ThreadPool* pool, const char* isa, FlagImages* images);
// An encoder for images that come one at a time (`ember chat`'s): planned for the
// largest image the processor takes (ImageLimits' defaults) and `max_images` held.
Status StartImageEncoder(const Model& model, const ThreadPool* pool, const char* isa,
                         int max_images, FlagImages* images);
// Reads the file at `path` and encodes it after the images held, timed into
// encode_seconds; its rows stay in the encoder's arena until encoder->Clear().
Result<EncodedImage> AddImageFile(const std::string& path, FlagImages* images);
// Bytes an image's markers can expand to (image_prompt.h), at most.
size_t MaxImagePromptBytes(const Model& model, const ImageEncoderPlan& plan);
// Encodes images->files again in the same arena (after Clear: no heap call), timed into
// encode_seconds: what `ember bench --image` repeats.
Status ReencodeImages(FlagImages* images);

// The prompt with the images in it: markers the text holds take the images in order; a
// text with none gets one per image at its start. Expanded as the model's processor
// does, then tokenized with special tokens matched (as Hugging Face tokenizes a
// processor's text), BOS as the tokenizer says. Checks the image tokens are the rows'.
Status EncodeImagePrompt(const Model& model, const std::string& text,
                         const FlagImages& images, bool add_bos,
                         std::vector<int32_t>* ids);

// One stderr line: images, tiles, rows, time, arena.
void PrintImageStats(const char* command, const FlagImages& images);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CLI_IMAGE_FLAGS_H_
