// Fuzzes image decoding and the processors: the input is a file someone sent (a PNG, a
// JPEG, or anything else). It decodes within the limits and the scratch planned for
// them, or fails with a message (never "out of memory" when its header is within the
// limits); a decoded image then runs through a tiling processor
// and a fixed-size one in exactly the scratch they plan, never a crash, a read outside
// the buffers, or a request for more memory than was planned.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/vision/image_decode.h"
#include "runtime/vision/image_processor.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "image_fuzzer: %s\n", what);
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  ImageLimits limits;
  limits.max_width = limits.max_height = 1024;
  limits.max_pixels = 512 * 512;
  static std::vector<uint8_t> scratch(DecodeScratchBytes(limits));
  static std::vector<uint8_t> rgb(limits.max_pixels * 3);
  Result<RgbImage> image =
      DecodeImage(data, size, limits, AlphaMode::kOverWhite, scratch.data(),
                  scratch.size(), rgb.data(), rgb.size());
  if (!image.ok()) {
    Check(image.status().message()[0] != '\0', "a refusal without a message");
    // A file whose header is within the limits never needs more than the plan.
    if (image.status().code() == StatusCode::kResourceExhausted &&
        ReadImageHeader(data, size, limits).ok()) {
      fprintf(stderr, "%s\n", image.status().message());
      Check(false, "an image within the limits does not fit the planned scratch");
    }
    return 0;
  }
  Check(image->width > 0 && image->height > 0 &&
            static_cast<size_t>(image->width) * image->height <= limits.max_pixels,
        "an image past the limits");

  ImageProcessorConfig tiles;
  tiles.layout = ImageLayout::kSplitTiles;
  tiles.longest_edge = 100;
  tiles.tile_size = 32;
  tiles.resample = ResampleFilter::kLanczos;
  ImageProcessorConfig fixed;
  fixed.height = 24;
  fixed.width = 40;
  fixed.resample = ResampleFilter::kBicubic;
  for (const ImageProcessorConfig& config : {tiles, fixed}) {
    std::vector<uint8_t> work(ProcessScratchBytes(config, limits));
    std::vector<float> pixels(static_cast<size_t>(MaxImageTiles(config, limits)) *
                                  config.tile_size * config.tile_size * 3 +
                              static_cast<size_t>(fixed.height) * fixed.width * 3);
    ImageGrid grid;
    const Status s = ProcessImage(config, *image, work.data(), work.size(), pixels.data(),
                                  pixels.size(), &grid);
    if (!s.ok()) fprintf(stderr, "%s\n", s.message());
    Check(s.ok(), "an image within the limits does not fit the planned memory");
  }
  return 0;
}
