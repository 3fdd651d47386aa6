// Packing q8 and q4 weights into the panel layout (see quant_pack.h).
#include "kernels/quantize/quant_pack.h"

#include <cmath>
#include <cstring>

#include "kernels/half.h"

namespace ember::kernels {
namespace {

// Stores q (without offset) as input i of row r within a group's values (zeroed first:
// q4 ORs its nibbles in).
void StoreValue(QuantKind kind, uint8_t* values, size_t r, size_t i, int q) {
  const uint8_t stored_q = static_cast<uint8_t>(q + (kind == QuantKind::kQ8 ? 128 : 8));
  const QuantValuePos pos = QuantValuePosition(kind, r, i);
  if (kind == QuantKind::kQ8) {
    values[pos.byte] = stored_q;
  } else {
    values[pos.byte] |= pos.high ? stored_q << 4 : stored_q;
  }
}

}  // namespace

void PackQuant(QuantKind kind, const float* w, size_t rows, size_t cols, uint8_t* out) {
  const size_t groups = QuantGroups(cols);
  const size_t panel_bytes = QuantPanelBytes(kind, cols);
  const size_t group_bytes = QuantGroupBytes(kind);
  memset(out, 0, QuantPackedBytes(kind, rows, cols));
  for (size_t p = 0; p < QuantPanels(rows); ++p) {
    uint8_t* panel = out + p * panel_bytes;
    for (size_t g = 0; g < groups; ++g) {
      uint8_t* values = panel + g * group_bytes;
      uint8_t* scales = values + QuantGroupValueBytes(kind);
      for (size_t r = 0; r < kQuantPanelRows; ++r) {
        const size_t row = p * kQuantPanelRows + r;
        const size_t begin = g * kQuantGroup;
        const size_t end = begin + kQuantGroup < cols ? begin + kQuantGroup : cols;
        // Padding rows and inputs are zeros: q = 0 with a zero scale.
        float scale = 0.0f;
        if (row < rows) {
          const float* x = w + row * cols;
          float extreme = 0.0f;  // the value of largest magnitude, with its sign
          for (size_t c = begin; c < end; ++c) {
            if (std::fabs(x[c]) > std::fabs(extreme)) extreme = x[c];
          }
          scale = kind == QuantKind::kQ8 ? std::fabs(extreme) / 127.0f : extreme / -8.0f;
        }
        const uint16_t scale_bits = FloatToHalf(scale);
        memcpy(scales + r * 2, &scale_bits, 2);
        const float stored = HalfToFloat(scale_bits);
        const float inverse = stored != 0.0f ? 1.0f / stored : 0.0f;
        for (size_t i = 0; i < kQuantGroup; ++i) {
          int q = 0;
          if (row < rows && begin + i < cols) {
            q = static_cast<int>(std::nearbyint(w[row * cols + begin + i] * inverse));
            const int lo = kind == QuantKind::kQ8 ? -127 : -8;
            const int hi = kind == QuantKind::kQ8 ? 127 : 7;
            q = q < lo ? lo : (q > hi ? hi : q);
          }
          StoreValue(kind, values, r, i, q);
        }
      }
    }
  }
}

void PackQuantValues(QuantKind kind, const int8_t* q, const uint16_t* scale_bits,
                     size_t rows, size_t cols, uint8_t* out) {
  const size_t groups = QuantGroups(cols);
  const size_t panel_bytes = QuantPanelBytes(kind, cols);
  const size_t group_bytes = QuantGroupBytes(kind);
  memset(out, 0, QuantPackedBytes(kind, rows, cols));
  // Padding (rows past `rows`, inputs past `cols`) is q = 0 with a zero scale, as
  // PackQuant writes it: the same values pack to the same bytes either way.
  for (size_t row = 0; row < QuantPanels(rows) * kQuantPanelRows; ++row) {
    uint8_t* panel = out + row / kQuantPanelRows * panel_bytes;
    const size_t r = row % kQuantPanelRows;
    for (size_t g = 0; g < groups; ++g) {
      uint8_t* values = panel + g * group_bytes;
      if (row < rows) {
        memcpy(values + QuantGroupValueBytes(kind) + r * 2, scale_bits + row * groups + g,
               2);
      }
      for (size_t i = 0; i < kQuantGroup; ++i) {
        const size_t c = g * kQuantGroup + i;
        StoreValue(kind, values, r, i, row < rows && c < cols ? q[row * cols + c] : 0);
      }
    }
  }
}

}  // namespace ember::kernels
