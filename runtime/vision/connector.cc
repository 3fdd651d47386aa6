// Pixel shuffle and average pool over an image's grid of rows (connector.h).
#include "runtime/vision/connector.h"

#include <cstring>

#include "kernels/dcheck.h"

namespace ember {

void PixelShuffle(const float* h, size_t side, size_t dim, size_t scale, float* out) {
  EMBER_DCHECK(scale > 0 && side % scale == 0);
  const size_t blocks = side / scale;
  for (size_t hb = 0; hb < blocks; ++hb) {
    for (size_t wb = 0; wb < blocks; ++wb) {
      // The block's rows in row-major order, each dim floats, end to end.
      for (size_t k = 0; k < scale; ++k) {
        const float* src = h + ((hb * scale + k) * side + wb * scale) * dim;
        std::memcpy(out, src, scale * dim * sizeof(float));
        out += scale * dim;
      }
    }
  }
}

void AveragePool(const float* h, size_t side, size_t dim, size_t pool, float* out) {
  EMBER_DCHECK(pool > 0 && side % pool == 0);
  const size_t blocks = side / pool;
  const float count = static_cast<float>(pool * pool);
  for (size_t hb = 0; hb < blocks; ++hb) {
    for (size_t wb = 0; wb < blocks; ++wb) {
      for (size_t e = 0; e < dim; ++e) out[e] = 0.0f;
      for (size_t k = 0; k < pool; ++k) {
        for (size_t j = 0; j < pool; ++j) {
          const float* src = h + ((hb * pool + k) * side + wb * pool + j) * dim;
          for (size_t e = 0; e < dim; ++e) out[e] += src[e];
        }
      }
      for (size_t e = 0; e < dim; ++e) out[e] /= count;
      out += dim;
    }
  }
}

}  // namespace ember
