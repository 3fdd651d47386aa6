// The packed byte layout of q8 and q4 weight matrices ("panels") and scalar decoders (the
// reference the kernels test against). The packers the converter writes it with are
// conversion-time code: kernels/quantize/quant_pack.h.
//
// A (rows, cols) matrix is quantized in groups of kQuantGroup = 32 consecutive inputs
// with one f16 scale per row and group: w ~= scale * q, q8 in [-127, 127] (-128 too
// when imported: PackQuantValues), q4 in [-8, 7]. cols is padded with zeros to a multiple
// of 32 and rows to a multiple of 16. Rows are interleaved in panels of kQuantPanelRows =
// 16 so that one 64-byte load holds 4 consecutive inputs of 16 rows: the operand of one
// AVX-512 VNNI vpdpbusd (16 int32 lanes, each a 4-way u8 x s8 dot product) or of four Arm
// sdot-by-element.
//
// Panel p (rows 16p .. 16p+15), panel_bytes = QuantPanelBytes(kind, cols), holds for
// each group g, at g * QuantGroupBytes(kind):
//   values: QuantGroupValueBytes(kind) bytes (below);
//   scales: 16 f16 bit patterns, one per row (row 16p + r at [r]);
// then zero padding up to a multiple of 64 bytes. A panel is one sequential stream, and
// panels follow each other, so decode reading one panel after the next reads a matrix
// front to back (with the scales after all of a panel's values, each panel was two
// streams; with 8 panels at a time, 16: single-thread decode was 9 to 11 % slower).
// Values of one group are 8 chunks; chunk c covers inputs 4c .. 4c+3 of the group and
// holds, for row r and input 4c+i, byte [r * 4 + i] (64 bytes per chunk).
//   q8: the chunks in order (512 bytes), each byte q + 128 (an unsigned byte).
//   q4: 4 blocks of 64 bytes (256 bytes); byte b of block j carries chunk j's value in
//       its low nibble and chunk j + 4's in its high nibble, each as q + 8 (0..15).
// The unsigned offsets (128, 8) let x86 multiply unsigned weights by signed activations;
// a kernel subtracts offset * sum(x_q) per group. On Arm, q8 ^ 0x80 is the signed value.
#ifndef EMBER_KERNELS_QUANT_LAYOUT_H_
#define EMBER_KERNELS_QUANT_LAYOUT_H_

#include <cstddef>
#include <cstdint>

namespace ember::kernels {

enum class QuantKind : uint8_t { kQ8, kQ4 };

inline constexpr size_t kQuantGroup = 32;      // inputs per scale
inline constexpr size_t kQuantPanelRows = 16;  // rows interleaved in one panel
inline constexpr size_t kQuantChunkBytes = 64; // 16 rows x 4 inputs

// Sizes in uint64_t so the loader's checks cannot wrap on 32-bit targets.
inline constexpr uint64_t QuantGroups(uint64_t cols) {
  return (cols + kQuantGroup - 1) / kQuantGroup;
}
inline constexpr uint64_t QuantPanels(uint64_t rows) {
  return (rows + kQuantPanelRows - 1) / kQuantPanelRows;
}
inline constexpr uint64_t QuantGroupValueBytes(QuantKind kind) {
  return kind == QuantKind::kQ8 ? 512 : 256;
}
// One group of a panel: its values, then its 16 f16 scales (at QuantGroupValueBytes).
inline constexpr uint64_t QuantGroupBytes(QuantKind kind) {
  return QuantGroupValueBytes(kind) + kQuantPanelRows * 2;
}
// All groups, padded to 64 bytes.
inline constexpr uint64_t QuantPanelBytes(QuantKind kind, uint64_t cols) {
  return (QuantGroups(cols) * QuantGroupBytes(kind) + 63) / 64 * 64;
}
// The whole packed matrix, for rows and cols below 2^48 (the loader's limit).
inline constexpr uint64_t QuantPackedBytes(QuantKind kind, uint64_t rows, uint64_t cols) {
  return QuantPanels(rows) * QuantPanelBytes(kind, cols);
}

// Where input i of row r (of its panel) lies in a group's values: the byte, and for q4
// whether it is the high nibble. What QuantValue reads and the packers write.
struct QuantValuePos {
  size_t byte;
  bool high;
};
inline constexpr QuantValuePos QuantValuePosition(QuantKind kind, size_t r, size_t i) {
  const size_t chunk = i / 4, lane = r * 4 + i % 4;
  if (kind == QuantKind::kQ8) return {chunk * kQuantChunkBytes + lane, false};
  return {(chunk % 4) * kQuantChunkBytes + lane, chunk >= 4};
}

// The quantized value q (without offset) and the scale of element (row, col).
int QuantValue(QuantKind kind, const uint8_t* packed, size_t cols, size_t row,
               size_t col);
float QuantScale(QuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                 size_t group);

// out[0, cols) = scale * q for one row (embedding lookups, tests).
void DequantizeRow(QuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                   float* out);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_QUANT_LAYOUT_H_
