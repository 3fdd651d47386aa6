// The checks of an image processor's config (image_processor_config.h).
#include "runtime/model/image_processor_config.h"

#include <cmath>

namespace ember {

Status ValidateImageProcessorConfig(const ImageProcessorConfig& config) {
  constexpr int kMaxEdge = 1 << 14;
  if (config.layout == ImageLayout::kFixed) {
    if (config.height <= 0 || config.width <= 0 || config.height > kMaxEdge ||
        config.width > kMaxEdge) {
      return InvalidArgument("image processor: size %dx%d", config.width, config.height);
    }
  } else {
    if (config.tile_size <= 0 || config.tile_size > kMaxEdge || config.longest_edge < 0 ||
        config.longest_edge > kMaxEdge) {
      return InvalidArgument("image processor: longest_edge %d, tile size %d",
                             config.longest_edge, config.tile_size);
    }
  }
  const int filter = static_cast<int>(config.resample);
  if (filter < static_cast<int>(ResampleFilter::kLanczos) ||
      filter > static_cast<int>(ResampleFilter::kHamming)) {
    return InvalidArgument("image processor: resample filter %d (Pillow's 1-5)", filter);
  }
  if (config.layout != ImageLayout::kFixed && config.layout != ImageLayout::kSplitTiles) {
    return InvalidArgument("image processor: layout %d", static_cast<int>(config.layout));
  }
  if (!(config.rescale_factor > 0.0) || !std::isfinite(config.rescale_factor)) {
    return InvalidArgument("image processor: rescale_factor %g", config.rescale_factor);
  }
  for (int c = 0; c < 3; ++c) {
    if (!std::isfinite(config.mean[c]) || !std::isfinite(config.std[c]) ||
        config.std[c] == 0.0f) {
      return InvalidArgument("image processor: mean %g, std %g", config.mean[c],
                             config.std[c]);
    }
  }
  return Status::Ok();
}

}  // namespace ember
