// The connectors between a vision tower and the language model, as data movement over one
// image's side x side grid of rows of `dim` floats (row y * side + x): Idefics3's pixel
// shuffle (SmolVLM) and Gemma 3's average pool. The projection that follows is a matmul.
// Nothing here allocates; `out` must not overlap `h`.
#ifndef EMBER_RUNTIME_VISION_CONNECTOR_H_
#define EMBER_RUNTIME_VISION_CONNECTOR_H_

#include <cstddef>

namespace ember {

// Idefics3Connector.pixel_shuffle (transformers): each scale x scale block of the grid
// becomes one row. Writes (side / scale)^2 rows of dim * scale * scale floats:
//   out[hb * (side / scale) + wb][(k * scale + j) * dim + e]
//       = h[(hb * scale + k) * side + wb * scale + j][e]
// for k (block row), j (block column) < scale. side is a multiple of scale.
void PixelShuffle(const float* h, size_t side, size_t dim, size_t scale, float* out);

// Gemma3MultiModalProjector's AvgPool2d(kernel = stride = pool) over the grid: writes
// (side / pool)^2 rows of dim floats,
//   out[hb * (side / pool) + wb][e]
//       = mean over k, j < pool of h[(hb * pool + k) * side + wb * pool + j][e],
// summed in float in row-major order (k, then j), then divided by pool * pool (as
// PyTorch's CPU kernel does). side is a multiple of pool.
void AveragePool(const float* h, size_t side, size_t dim, size_t pool, float* out);

}  // namespace ember

#endif  // EMBER_RUNTIME_VISION_CONNECTOR_H_
