// The image processors' size arithmetic and pixel steps (image_processor.h).
#include "runtime/vision/image_processor.h"

#include <cmath>
#include <cstring>

#include "runtime/checked_math.h"

namespace ember {
namespace {

// transformers' MAX_IMAGE_SIZE for Idefics3 and SmolVLM: the first resize never
// exceeds it.
constexpr int kMaxResizedEdge = 4096;
constexpr size_t kAlign = 64;

uint64_t AlignUp(uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// _resize_output_size_rescale_to_max_len: the longest edge to max_len, the other edge
// by the aspect ratio (truncated, then made even), at least 1.
void RescaleToMaxLen(int max_len, int* height, int* width) {
  const double aspect = static_cast<double>(*width) / *height;
  if (*width >= *height) {
    *width = max_len;
    *height = static_cast<int>(*width / aspect);
    if (*height % 2 != 0) ++*height;
  } else {
    *height = max_len;
    *width = static_cast<int>(*height * aspect);
    if (*width % 2 != 0) ++*width;
  }
  if (*height < 1) *height = 1;
  if (*width < 1) *width = 1;
}

// _resize_output_size_scale_below_upper_bound.
void ScaleBelow(int max_len, int* height, int* width) {
  const double aspect = static_cast<double>(*width) / *height;
  if (*width >= *height && *width > max_len) {
    *width = max_len;
    *height = static_cast<int>(*width / aspect);
  } else if (*height > *width && *height > max_len) {
    *height = max_len;
    *width = static_cast<int>(*height * aspect);
  }
  if (*height < 1) *height = 1;
  if (*width < 1) *width = 1;
}

// resize_for_vision_encoder: both edges up to whole tiles, the shorter by the aspect
// ratio first.
void ToWholeTiles(int tile, int* height, int* width) {
  const double aspect = static_cast<double>(*width) / *height;
  if (*width >= *height) {
    *width = CeilDiv(*width, tile) * tile;
    *height = static_cast<int>(*width / aspect);
    *height = CeilDiv(*height, tile) * tile;
  } else {
    *height = CeilDiv(*height, tile) * tile;
    *width = static_cast<int>(*height * aspect);
    *width = CeilDiv(*width, tile) * tile;
  }
}

// In 64 bits: the totals are checked against SIZE_MAX (a 32-bit board's).
uint64_t RgbBytes(int width, int height) {
  return uint64_t{static_cast<uint32_t>(width)} * static_cast<uint32_t>(height) * 3;
}

// Rescale and normalize one tile's bytes (rows of `stride` bytes) into float planes, as
// image_transforms does: x = float(double(u) * factor), then (x - mean) / std in float.
void ToPlanes(const ImageProcessorConfig& config, const uint8_t* rgb, size_t stride,
              int tile_height, int tile_width, float* planes) {
  const size_t plane = static_cast<size_t>(tile_height) * tile_width;
  for (int y = 0; y < tile_height; ++y) {
    const uint8_t* row = rgb + y * stride;
    for (int x = 0; x < tile_width; ++x) {
      for (int c = 0; c < 3; ++c) {
        float v = row[3 * x + c];
        if (config.rescale) {
          v = static_cast<float>(static_cast<double>(row[3 * x + c]) *
                                 config.rescale_factor);
        }
        if (config.normalize) v = (v - config.mean[c]) / config.std[c];
        planes[c * plane + static_cast<size_t>(y) * tile_width + x] = v;
      }
    }
  }
}

// The longest edge after the first resize: longest_edge, or one more when it is odd (the
// other edge equals it only for a square image, and is then made even), at most 4096;
// the image's own without a first resize.
int FirstEdgeBound(const ImageProcessorConfig& config, const ImageLimits& limits) {
  if (config.longest_edge <= 0) {
    return limits.max_width > limits.max_height ? limits.max_width : limits.max_height;
  }
  const int edge = config.longest_edge + (config.longest_edge & 1);
  return edge < kMaxResizedEdge ? edge : kMaxResizedEdge;
}

}  // namespace

Result<ImageGrid> PlanImageGrid(const ImageProcessorConfig& config, int width,
                                int height) {
  EMBER_RETURN_IF_ERROR(ValidateImageProcessorConfig(config));
  // Edges up to 65536, as the decoders': the size arithmetic below stays in int.
  if (width <= 0 || height <= 0 || width > (1 << 16) || height > (1 << 16)) {
    return InvalidArgument("image processor: a %dx%d image", width, height);
  }
  ImageGrid grid;
  if (config.layout == ImageLayout::kFixed) {
    grid.resized_width = grid.tile_width = config.width;
    grid.resized_height = grid.tile_height = config.height;
    grid.tiles = 1;
    return grid;
  }
  int h = height, w = width;
  if (config.longest_edge > 0) {
    RescaleToMaxLen(config.longest_edge, &h, &w);
    ScaleBelow(kMaxResizedEdge, &h, &w);
  }
  grid.resized_width = w;
  grid.resized_height = h;
  grid.tile_width = grid.tile_height = config.tile_size;
  const int tile = config.tile_size;
  if (!config.split) {
    grid.tiles = 1;  // squashed to one tile
    return grid;
  }
  ToWholeTiles(tile, &h, &w);
  grid.split_width = w;
  grid.split_height = h;
  if (h > tile || w > tile) {
    grid.rows = CeilDiv(h, tile);
    grid.cols = CeilDiv(w, tile);
  }
  grid.tiles = grid.rows * grid.cols + 1;
  return grid;
}

int MaxImageTiles(const ImageProcessorConfig& config, const ImageLimits& limits) {
  if (config.layout == ImageLayout::kFixed || !config.split) return 1;
  const int edge = FirstEdgeBound(config, limits);
  // Resizing to whole tiles rounds the longest edge up to a multiple of the tile, and the
  // other edge to at most that (it is computed from the longest by the aspect ratio).
  const int per_side = CeilDiv(edge, config.tile_size);
  return per_side * per_side + 1;
}

size_t ProcessScratchBytes(const ImageProcessorConfig& config,
                           const ImageLimits& limits) {
  if (!ValidateImageProcessorConfig(config).ok()) return 0;
  const int in_w = limits.max_width, in_h = limits.max_height;
  if (config.layout == ImageLayout::kFixed) {
    const size_t resize =
        ResizeScratchBound(in_w, in_h, config.width, config.height, config.resample);
    const uint64_t total = AlignUp(RgbBytes(config.width, config.height)) + resize;
    return resize != 0 && total <= SIZE_MAX ? static_cast<size_t>(total) : 0;
  }
  // Edges after the first resize, and after the resize to whole tiles.
  const int edge1 = FirstEdgeBound(config, limits);
  const int tile = config.tile_size;
  const int edge2 = CeilDiv(edge1, tile) * tile;
  const uint64_t first = AlignUp(RgbBytes(edge1, edge1));
  const uint64_t second = config.split ? AlignUp(RgbBytes(edge2, edge2)) : 0;
  const uint64_t global = AlignUp(RgbBytes(tile, tile));
  const size_t to_first = ResizeScratchBound(in_w, in_h, edge1, edge1, config.resample);
  const size_t to_tiles = ResizeScratchBound(edge1, edge1, edge2, edge2, config.resample);
  const size_t to_global = ResizeScratchBound(edge2, edge2, tile, tile, config.resample);
  if (to_first == 0 || to_tiles == 0 || to_global == 0) return 0;  // past SIZE_MAX
  uint64_t resize = to_first;
  if (to_tiles > resize) resize = to_tiles;
  if (to_global > resize) resize = to_global;
  const uint64_t total = first + second + global + resize + kAlign;
  return total <= SIZE_MAX ? static_cast<size_t>(total) : 0;
}

Status ProcessImage(const ImageProcessorConfig& config, const RgbImage& image,
                    uint8_t* scratch, size_t scratch_bytes, float* pixels,
                    size_t pixel_values, ImageGrid* grid_out) {
  if (image.rgb == nullptr) return InvalidArgument("image processor: no pixels");
  Result<ImageGrid> planned = PlanImageGrid(config, image.width, image.height);
  if (!planned.ok()) return planned.status();
  const ImageGrid& grid = *planned;
  const size_t tile_values = static_cast<size_t>(grid.tile_width) * grid.tile_height * 3;
  if (pixels == nullptr || pixel_values / tile_values < static_cast<size_t>(grid.tiles)) {
    return ResourceExhausted(
        "image processor: %d tiles of %dx%d need %zu floats, %zu given", grid.tiles,
        grid.tile_width, grid.tile_height, tile_values * grid.tiles, pixel_values);
  }
  // Scratch: [resized image][image in whole tiles][global view][the resizer's].
  const size_t skew = (kAlign - reinterpret_cast<uintptr_t>(scratch) % kAlign) % kAlign;
  if (scratch == nullptr || scratch_bytes < skew) {
    return ResourceExhausted("image processor: %zu bytes of scratch are too few",
                             scratch_bytes);
  }
  uint8_t* base = scratch + skew;
  const size_t usable = scratch_bytes - skew;
  size_t used = 0;
  auto take = [&](uint64_t bytes, uint8_t** out) -> Status {
    if (AlignUp(bytes) > usable - used) {
      return ResourceExhausted("image processor: %zu bytes of scratch are too few",
                               scratch_bytes);
    }
    *out = base + used;
    used += static_cast<size_t>(AlignUp(bytes));
    return Status::Ok();
  };
  auto resize = [&](const RgbImage& from, int width, int height, uint8_t* to) -> Status {
    const size_t need =
        ResizeScratchBytes(from.width, from.height, width, height, config.resample);
    if (need == 0 || need > usable - used) {
      return ResourceExhausted(
          "image processor: resizing %dx%d to %dx%d needs %zu bytes "
          "of scratch, %zu left",
          from.width, from.height, width, height, need, usable - used);
    }
    return ResizeRgb(from, width, height, config.resample, base + used, usable - used,
                     to);
  };

  uint8_t* resized = nullptr;
  EMBER_RETURN_IF_ERROR(
      take(RgbBytes(grid.resized_width, grid.resized_height), &resized));
  EMBER_RETURN_IF_ERROR(resize(image, grid.resized_width, grid.resized_height, resized));
  RgbImage current{resized, grid.resized_width, grid.resized_height};
  float* out = pixels;
  if (config.layout == ImageLayout::kSplitTiles) {
    const int tile = config.tile_size;
    if (!config.split) {
      uint8_t* squashed = nullptr;
      EMBER_RETURN_IF_ERROR(take(RgbBytes(tile, tile), &squashed));
      EMBER_RETURN_IF_ERROR(resize(current, tile, tile, squashed));
      current = RgbImage{squashed, tile, tile};
    } else {
      uint8_t* whole = nullptr;
      EMBER_RETURN_IF_ERROR(take(RgbBytes(grid.split_width, grid.split_height), &whole));
      EMBER_RETURN_IF_ERROR(resize(current, grid.split_width, grid.split_height, whole));
      current = RgbImage{whole, grid.split_width, grid.split_height};
      const size_t stride = static_cast<size_t>(current.width) * 3;
      // Every tile is whole: the image was resized to a multiple of the tile size.
      for (int r = 0; r < grid.rows; ++r) {
        for (int c = 0; c < grid.cols; ++c) {
          const uint8_t* corner = whole + static_cast<size_t>(r) * tile * stride +
                                  static_cast<size_t>(c) * tile * 3;
          ToPlanes(config, corner, stride, tile, tile, out);
          out += tile_values;
        }
      }
      if (grid.rows > 0) {
        uint8_t* global = nullptr;
        EMBER_RETURN_IF_ERROR(take(RgbBytes(tile, tile), &global));
        EMBER_RETURN_IF_ERROR(resize(current, tile, tile, global));
        current = RgbImage{global, tile, tile};
      }
    }
  }
  // The last (or only) tile: the global view, the squashed image, or the fixed resize.
  if (current.width != grid.tile_width || current.height != grid.tile_height) {
    return Internal("image processor: a %dx%d view for %dx%d tiles", current.width,
                    current.height, grid.tile_width, grid.tile_height);
  }
  ToPlanes(config, current.rgb, static_cast<size_t>(current.width) * 3, grid.tile_height,
           grid.tile_width, out);
  if (grid_out != nullptr) *grid_out = grid;
  return Status::Ok();
}

}  // namespace ember
