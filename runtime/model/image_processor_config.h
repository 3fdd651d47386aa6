// What a vision model's file says about its image processor (the resize, tiling,
// rescale and normalization its Hugging Face processor runs: runtime/vision/
// image_processor.h runs it) and how a prompt holds an image. Plain data: the loader
// reads it into VisionConfig (config.h), the converters write it.
#ifndef EMBER_RUNTIME_MODEL_IMAGE_PROCESSOR_CONFIG_H_
#define EMBER_RUNTIME_MODEL_IMAGE_PROCESSOR_CONFIG_H_

#include <cstring>
#include <string_view>

#include "runtime/status.h"

namespace ember {

// Pillow's filters by their numbers (PIL.Image.Resampling), as processor configs store
// them: 1 LANCZOS, 2 BILINEAR, 3 BICUBIC, 4 BOX, 5 HAMMING. NEAREST (0) is another
// algorithm in Pillow and is not supported.
enum class ResampleFilter : int {
  kLanczos = 1,
  kBilinear = 2,
  kBicubic = 3,
  kBox = 4,
  kHamming = 5,
};

enum class ImageLayout {
  // Resized to height x width, one tile (SigLIP, Gemma 3's Gemma3ImageProcessor).
  kFixed,
  // Idefics3ImageProcessor (SmolVLM): the longest edge resized to `longest_edge`, then
  // (with `split`) to whole tiles of tile_size, cut into rows x cols tiles in row order,
  // then the whole image resized to one tile as the global view, last; without `split`,
  // the image squashed to one tile.
  kSplitTiles,
};

struct ImageProcessorConfig {
  ImageLayout layout = ImageLayout::kFixed;
  int height = 0;  // kFixed: the output size
  int width = 0;
  int longest_edge = 0;  // kSplitTiles: size.longest_edge; 0: no first resize
  int tile_size = 0;     // kSplitTiles: max_image_size.longest_edge
  bool split = true;     // kSplitTiles: do_image_splitting
  ResampleFilter resample = ResampleFilter::kBilinear;
  // A pixel with alpha: composited on white (Idefics3's convert_to_rgb), or its alpha
  // dropped (Pillow's convert("RGB"), as Gemma 3's processor does).
  bool alpha_over_white = true;
  bool rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool normalize = true;
  float mean[3] = {0.5f, 0.5f, 0.5f};
  float std[3] = {0.5f, 0.5f, 0.5f};
};

// Checks a config's values (positive sizes, nonzero std).
Status ValidateImageProcessorConfig(const ImageProcessorConfig& config);

// A short text held in place: the loader fills it on boards too, where nothing may
// allocate (a std::string would also link libstdc++'s exception machinery).
class PromptText {
 public:
  static constexpr size_t kMax = 256;
  PromptText() = default;
  PromptText(const char* text) { Assign(text); }  // NOLINT: literals in writers, tests
  // False, leaving it empty, when `text` is longer than kMax bytes or holds a NUL.
  bool Assign(std::string_view text) {
    size_ = 0;
    data_[0] = '\0';
    if (text.size() > kMax || text.find('\0') != std::string_view::npos) return false;
    if (!text.empty()) memcpy(data_, text.data(), text.size());
    size_ = text.size();
    data_[size_] = '\0';
    return true;
  }
  PromptText& operator=(std::string_view text) {
    Assign(text);
    return *this;
  }
  PromptText& operator=(const char* text) { return *this = std::string_view(text); }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const char* c_str() const { return data_; }
  operator std::string_view() const { return std::string_view(data_, size_); }
  bool operator==(std::string_view other) const {
    return std::string_view(*this) == other;
  }

 private:
  char data_[kMax + 1] = {};
  size_t size_ = 0;
};

// How a prompt holds an image (text, before tokenization, as the Hugging Face processor
// expands it; runtime/vision/image_prompt.h writes it).
//   kSingle: each `marker` a prompt or chat template writes becomes `before`, then
//     `token` once per image row, then `after`. Gemma 3: "<start_of_image>" becomes
//     "\n\n<start_of_image>", 256 x "<image_soft_token>", "<end_of_image>\n\n".
//   kTiles: Idefics3's (SmolVLM's) tiles: each tile named by its place,
//     "<fake_token_around_image><row_1_col_1>" and 64 x "<image>", ..., then the global
//     view as "<fake_token_around_image><global-img>" and its tokens (schema/model.fbs
//     spells it out). The marker is the token itself, "<image>".
enum class ImagePromptLayout : uint8_t { kSingle = 0, kTiles = 1 };

struct ImagePrompt {
  PromptText marker;  // empty: the model has no image prompt
  PromptText before;
  PromptText after;
  PromptText token;
  ImagePromptLayout layout = ImagePromptLayout::kSingle;
  PromptText around;        // kTiles
  PromptText global_token;  // kTiles
};

}  // namespace ember

#endif  // EMBER_RUNTIME_MODEL_IMAGE_PROCESSOR_CONFIG_H_
