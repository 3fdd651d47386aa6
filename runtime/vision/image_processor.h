// A vision model's image processor, as Hugging Face's slow image processors run it:
// resize (Pillow's filters, on bytes), optionally split into tiles plus a global view
// (Idefics3 / SmolVLM), rescale and normalize into float planes (C, H, W) per tile, in
// caller memory. The sizes are computed first (PlanImageGrid), so the prompt's image
// tokens and the arena are known before any pixel is touched.
#ifndef EMBER_RUNTIME_VISION_IMAGE_PROCESSOR_H_
#define EMBER_RUNTIME_VISION_IMAGE_PROCESSOR_H_

#include <cstddef>
#include <cstdint>

#include "runtime/model/image_processor_config.h"
#include "runtime/status.h"
#include "runtime/vision/image.h"
#include "runtime/vision/resample.h"

namespace ember {

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
