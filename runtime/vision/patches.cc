// The tile cut into patch rows (patches.h).
#include "runtime/vision/patches.h"

#include <cstring>

#include "kernels/dcheck.h"

namespace ember {

void Im2Patches(const float* pixels, size_t height, size_t width, size_t patch,
                float* out) {
  EMBER_DCHECK(patch > 0 && height % patch == 0 && width % patch == 0);
  const size_t rows = height / patch;
  const size_t cols = width / patch;
  const size_t plane = height * width;
  for (size_t pr = 0; pr < rows; ++pr) {
    for (size_t pc = 0; pc < cols; ++pc) {
      // One patch's row: for each channel, its `patch` image rows of `patch` pixels.
      const float* corner = pixels + pr * patch * width + pc * patch;
      for (size_t c = 0; c < 3; ++c) {
        const float* src = corner + c * plane;
        for (size_t ky = 0; ky < patch; ++ky) {
          std::memcpy(out, src + ky * width, patch * sizeof(float));
          out += patch;
        }
      }
    }
  }
}

}  // namespace ember
