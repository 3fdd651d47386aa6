// Packing q8 and q4 weights into the panel layout (kernels/quant_layout.h): f32 weights
// quantized, or an imported file's integers and scales as they are. Conversion-time code
// (the model writer, the importers and tests), scalar; not part of the shipped library.
#ifndef EMBER_KERNELS_QUANTIZE_QUANT_PACK_H_
#define EMBER_KERNELS_QUANTIZE_QUANT_PACK_H_

#include <cstddef>
#include <cstdint>

#include "kernels/quant_layout.h"

namespace ember::kernels {

// Quantizes the row-major f32 matrix w (rows, cols) into `out` (QuantPackedBytes bytes;
// every byte is written, padding included). Scales are absmax / 127 (q8) and
// -(signed value of largest magnitude) / 8 (q4, as GGML's Q4_0), rounded to f16 before
// the values are rounded to the nearest integer with them.
void PackQuant(QuantKind kind, const float* w, size_t rows, size_t cols, uint8_t* out);

// Packs integers and scales as they are (an imported file's own, value for value): q is
// the row-major (rows, cols) matrix of values, scale_bits the (rows, QuantGroups(cols))
// f16 bit patterns, element (r, c) = scale(r, c / 32) q(r, c). q8 takes q in [-128, 127]
// (-128, which PackQuant never writes, is stored as byte 0; every kernel's int32 dot is
// exact for it), q4 in [-8, 7]. Writes every byte of `out` (QuantPackedBytes).
void PackQuantValues(QuantKind kind, const int8_t* q, const uint16_t* scale_bits,
                     size_t rows, size_t cols, uint8_t* out);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_QUANTIZE_QUANT_PACK_H_
