// An image as the vision path holds it: 8-bit RGB, interleaved, rows packed (a row is
// width * 3 bytes), in memory someone else owns. Also the limits on the images a session
// accepts, from which the arena is planned.
#ifndef EMBER_RUNTIME_VISION_IMAGE_H_
#define EMBER_RUNTIME_VISION_IMAGE_H_

#include <cstddef>
#include <cstdint>

namespace ember {

struct RgbImage {
  const uint8_t* rgb = nullptr;  // (height, width, 3)
  int width = 0;
  int height = 0;
};

// The largest image accepted, before any resize. Decoding, and the processor's buffers,
// are planned for it; a larger image is refused with a clear error, never grown into.
struct ImageLimits {
  int max_width = 8192;
  int max_height = 8192;
  size_t max_pixels = size_t{4096} * 3072;  // a 12.6-megapixel camera frame
};

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_IMAGE_H_
