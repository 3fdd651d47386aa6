// A vision model's image processor, as Hugging Face's slow image processors run it:
// resize (Pillow's filters, on bytes), optionally split into tiles plus a global view
// (Idefics3 / SmolVLM), rescale and normalize into float planes (C, H, W) per tile, in
// caller memory. The sizes are computed first (PlanImageGrid), so the prompt's image
// tokens and the arena are known before any pixel is touched.
#ifndef EMBER_RUNTIME_VISION_IMAGE_PROCESSOR_H_
#define EMBER_RUNTIME_VISION_IMAGE_PROCESSOR_H_

#include <cstddef>
#include <cstdint>

#include "runtime/status.h"
#include "runtime/vision/image.h"
#include "runtime/vision/resample.h"

namespace ember {

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

// What an image of a given size becomes.
struct ImageGrid {
  int resized_width = 0;  // after the first resize (kSplitTiles), or the output size
  int resized_height = 0;
  int split_width = 0;  // after the resize to whole tiles; 0 when not split
  int split_height = 0;
  int rows = 0;  // tiles cut from the image (0 x 0 when it was one tile)
  int cols = 0;
  int tiles = 0;  // rows * cols, plus the global view or the single tile
  int tile_height = 0;
  int tile_width = 0;
};

// The grid for a width x height image: pure size arithmetic, as the processor computes
// it in Python (its int() truncations and math.ceil roundings).
Result<ImageGrid> PlanImageGrid(const ImageProcessorConfig& config, int width,
                                int height);

// The scratch ProcessImage needs for any image within `limits`, and the most tiles such
// an image makes (each tile_height * tile_width * 3 floats).
size_t ProcessScratchBytes(const ImageProcessorConfig& config, const ImageLimits& limits);
int MaxImageTiles(const ImageProcessorConfig& config, const ImageLimits& limits);

// Runs the processor: tiles (grid.tiles, 3, tile_height, tile_width) floats into
// `pixels` (at most `pixel_values` floats), the grid into *grid.
Status ProcessImage(const ImageProcessorConfig& config, const RgbImage& image,
                    uint8_t* scratch, size_t scratch_bytes, float* pixels,
                    size_t pixel_values, ImageGrid* grid);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_IMAGE_PROCESSOR_H_
