// GGML's block formats for the weight types ember imports: decoding a row to f32 as GGML
// dequantizes it, and reading the blocks that are "an f16 scale times 32 integers"
// (Q8_0, Q4_0, Q5_0, IQ4_NL) as exactly that, for a lossless repack into ember's q8/q4.
//
// Layouts (little-endian; d, m, dmin are IEEE half):
//   Q8_0   32 values: d, int8 q[32]                          y = d q
//   Q4_0   32 values: d, qs[16]                              y = d (nibble - 8)
//   Q4_1   32 values: d, m, qs[16]                           y = d nibble + m
//   Q5_0   32 values: d, uint32 qh, qs[16]                   y = d ((nibble | high << 4)
//   - 16) Q5_1   32 values: d, m, uint32 qh, qs[16]                y = d (nibble | high
//   << 4) + m IQ4_NL 32 values: d, qs[16]                              y = d
//   kIq4nlValues[nibble] (element j < 16 is the low nibble of qs[j], element j + 16 the
//   high one; its fifth bit is bit j, resp. j + 16, of qh) Q4_K  256 values: d, dmin,
//   scales[12], qs[128]: 8 sub-blocks of 32 with 6-bit scale
//         and min: y = d sc q - dmin m, q a nibble (qs[32 c + l] low: sub-block 2c,
//         high: 2c + 1)
//   Q5_K  256 values: d, dmin, scales[12], qh[32], qs[128]: as Q4_K with a fifth bit
//         (bit 2c of qh[l] for sub-block 2c, bit 2c + 1 for 2c + 1)
//   Q6_K  256 values: ql[128], qh[64], int8 scales[16], d: 16 sub-blocks of 16,
//         y = d sc (q - 32), q 6 bits (4 from ql, 2 from qh)
// Every product the decoders form is exact in f32 except Q6_K's (d sc) q, which GGML
// rounds the same way; a sum rounds once. So the decoded values do not depend on the
// compiler contracting a multiply-add, and equal GGML's on every host.
#ifndef EMBER_TOOLS_CONVERT_GGUF_GGUF_BLOCKS_H_
#define EMBER_TOOLS_CONVERT_GGUF_GGUF_BLOCKS_H_

#include <cstddef>
#include <cstdint>

namespace ember::tools {

// IQ4_NL's 16 non-uniform levels.
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Whether DecodeGgmlRow handles `type` (a GgmlType number).
bool CanDecodeGgml(uint32_t type);

// Decodes `n` elements (whole blocks) of `type` at `data` into out[0, n).
void DecodeGgmlRow(uint32_t type, const uint8_t* data, size_t n, float* out);

// Whether `type` is "an f16 scale per 32 elements times an integer" (Q8_0, Q4_0, Q5_0,
// IQ4_NL), with the integers' range [*min_q, *max_q].
bool IsScaledInt32(uint32_t type, int* min_q, int* max_q);

// For such a type: the integers q[0, n) and the scales' bit patterns scale_bits[0, n/32)
// of `n` elements at `data`, so that element i = HalfToFloat(scale_bits[i / 32]) q[i]
// exactly as GGML decodes it.
void ReadScaledInt32(uint32_t type, const uint8_t* data, size_t n, int8_t* q,
                     uint16_t* scale_bits);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_CONVERT_GGUF_GGUF_BLOCKS_H_
