// Scalar decoding of the q8/q4 panel layout (see quant_layout.h).
#include "kernels/quant_layout.h"

#include <cstring>

#include "kernels/half.h"

namespace ember::kernels {
namespace {

const uint8_t* PanelOf(QuantKind kind, const uint8_t* packed, size_t cols, size_t row) {
  return packed + (row / kQuantPanelRows) * QuantPanelBytes(kind, cols);
}

}  // namespace

int QuantValue(QuantKind kind, const uint8_t* packed, size_t cols, size_t row,
               size_t col) {
  const uint8_t* values = PanelOf(kind, packed, cols, row) +
                          (col / kQuantGroup) * QuantGroupBytes(kind);
  const QuantValuePos pos =
      QuantValuePosition(kind, row % kQuantPanelRows, col % kQuantGroup);
  const uint8_t byte = values[pos.byte];
  if (kind == QuantKind::kQ8) return static_cast<int>(byte) - 128;
  return static_cast<int>(pos.high ? byte >> 4 : byte & 0xF) - 8;
}

float QuantScale(QuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                 size_t group) {
  const uint8_t* scales = PanelOf(kind, packed, cols, row) +
                          group * QuantGroupBytes(kind) + QuantGroupValueBytes(kind);
  uint16_t bits;
  memcpy(&bits, scales + (row % kQuantPanelRows) * 2, 2);
  return HalfToFloat(bits);
}

void DequantizeRow(QuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                   float* out) {
  for (size_t c = 0; c < cols; ++c) {
    out[c] = QuantScale(kind, packed, cols, row, c / kQuantGroup) *
             static_cast<float>(QuantValue(kind, packed, cols, row, c));
  }
}

}  // namespace ember::kernels
