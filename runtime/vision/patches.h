// A vision tower's patch embedding as data movement: the tile's pixels cut into patch
// rows, so that a matmul with the conv weight viewed as (D, 3 * patch * patch) is
// PyTorch's Conv2d(3, D, patch, stride=patch) followed by flatten(2).transpose(1, 2).
// Nothing here allocates.
#ifndef EMBER_RUNTIME_VISION_PATCHES_H_
#define EMBER_RUNTIME_VISION_PATCHES_H_

#include <cstddef>

namespace ember {

// pixels: one tile, planar (3, height, width), as ProcessImage writes it; height and
// width are multiples of `patch`. Writes (height / patch) * (width / patch) rows of
// 3 * patch * patch floats to `out`: row r is the patch at grid row r / (width / patch),
// column r % (width / patch), its values in (channel, ky, kx) order (F.unfold's order).
// `out` must not overlap `pixels`.
void Im2Patches(const float* pixels, size_t height, size_t width, size_t patch,
                float* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_PATCHES_H_
