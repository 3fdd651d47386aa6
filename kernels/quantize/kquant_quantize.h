// Quantizing f32 weights to GGML's K-quants (q4_k, q5_k, q6_k): a search over scales
// and minimums per sub-block, as llama.cpp's quantize_row_q4_K/q5_K/q6_K do without an
// importance matrix. Conversion-time code (the converter and tests), scalar.
#ifndef EMBER_KERNELS_QUANTIZE_KQUANT_QUANTIZE_H_
#define EMBER_KERNELS_QUANTIZE_KQUANT_QUANTIZE_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kquant_layout.h"

namespace ember::kernels {

// One super-block x[0, 256) (finite values) quantized as `kind`.
//
// q4_k, q5_k: per sub-block of 32, weights w_i = rms(sub-block) + |x_i|; the affine fit
// x ~ scale * q - min (q in 0..nmax, nmax 15 or 31, min >= 0) starts from q spanning
// [min(x, 0), max(x)] and tries nsteps + 1 narrower or wider ranges (nmax + rmin +
// rdelta * step, with (-1, 0.1, 20) for q4_k and (-0.5, 0.1, 15) for q5_k), each time
// solving weighted least squares for scale and min given its q, keeping the one with
// the smallest weighted squared error. Then the 8 scales and 8 minimums are coded in 6
// bits against the largest (d = max scale / 63 and dmin = max min / 63, rounded to f16),
// and every q is rounded again against its coded scale and minimum.
// q6_k: per sub-block of 16, the symmetric fit x ~ scale * (q - 32) with weights x^2:
// 19 candidate scales around -max|x| / 32 (the value of largest magnitude maps to -32),
// the least-squares scale for each q, the best kept; the 16 scales are coded as int8
// against the one of largest magnitude (d = -that / 128), and q rounded again.
void QuantizeKQuantBlock(KQuantKind kind, const float* x, KQuantBlockValues* out);

// A row of cols (a multiple of 256) finite values as GGML blocks
// (GgmlKQuantRowBytes(kind, cols) bytes): what llama.cpp writes into a GGUF file.
void QuantizeKQuantRowGgml(KQuantKind kind, const float* x, size_t cols, uint8_t* out);

// The row-major (rows, cols) matrix w quantized into the panel layout (every byte of
// KQuantPackedBytes written). Returns false, writing nothing, unless rows >= 1 and cols
// is a positive multiple of 256.
bool PackKQuant(KQuantKind kind, const float* w, size_t rows, size_t cols, uint8_t* out);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_QUANTIZE_KQUANT_QUANTIZE_H_
