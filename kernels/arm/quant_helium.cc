// The q8 and q4 products over quant_layout.h's panels in Helium (MVE) code, for the
// Cortex-M55 and other Armv8.1-M cores. Helium has no 4-way byte dot product into lanes
// (Arm's sdot); it has VMLADAV, the sum of all 16 byte products of two vectors. So each
// row gathers its own bytes: in a group, row r's 4 bytes of chunk (q4: block) c are the
// 32-bit word r of that chunk, and one gather of word r of 4 chunks (VLDRW with a vector
// of offsets, 64 bytes apart, from the row's first word) is a vector of 16 consecutive
// inputs of that row.
//   q8: chunks 0-3 and 4-7 are inputs 0-15 and 16-31, stored q + 128: XOR 0x80 makes
//       them q as signed bytes, and two VMLADAV give the exact int32 dot.
//   q4: blocks 0-3 hold inputs 0-15 in their low nibbles and 16-31 in their high ones,
//       as q + 8 (0..15, already valid signed bytes): dot = the two VMLADAV - 8 xsum.
//
// The float part is quant-inl.h's, per group in order and four rows to a vector: acc =
// fma(float(dot), wscale * xscale, acc). matvec and matmul are one function, each token
// on its own, so their rows are bitwise identical.
#include "kernels/arm/quant_helium.h"

#include <arm_mve.h>

#include <cstring>

#include "kernels/dcheck.h"
#include "kernels/quant_layout.h"

namespace ember::kernels {
namespace {

constexpr size_t kHalfGroup = kQuantGroup / 2;  // 16 inputs

// f32 of the f16 bit patterns in the low halves of four 32-bit lanes: MVE's
// VCVTB.F32.F16. GNU as 2.40 encodes that instruction with the wrong register fields for
// most Q registers (q1 assembles as q2, q3 as q6, q4 and q5 as undefined encodings), so
// it is emitted here by its encoding, on q0, the one register whose fields are all zero.
inline float32x4_t HalvesToFloat(uint32x4_t halves) {
  register uint32x4_t v asm("q0") = halves;
  asm(".inst.w 0xfe3f0e01" : "+w"(v));  // vcvtb.f32.f16 q0, q0
  return vreinterpretq_f32_u32(v);
}

// acc[0..3] (rows 0-3, 4-7, 8-11, 12-15) for one panel and one token.
template <QuantKind kKind>
void PanelToken(const uint8_t* panel, size_t groups, const int8_t* xb,
                const float* xscales, const int32_t* xsums, float32x4_t acc[4]) {
  constexpr size_t kGroupBytes = QuantGroupBytes(kKind);
  constexpr size_t kScales = QuantGroupValueBytes(kKind);
  // The byte offsets of word 0 of chunks (q4: blocks) 0..3 from a row's first word.
  const uint32x4_t kChunks = {0, kQuantChunkBytes, 2 * kQuantChunkBytes,
                              3 * kQuantChunkBytes};
  const uint8x16_t kFlip = vdupq_n_u8(0x80);
  const uint8x16_t kNibble = vdupq_n_u8(0x0F);
  const int8x16_t kHighNibble = vdupq_n_s8(-4);  // a right shift by 4
  for (size_t g = 0; g < groups; ++g) {
    const uint8_t* values = panel + g * kGroupBytes;
    const int8x16_t x0 = vld1q_s8(xb + g * kQuantGroup);
    const int8x16_t x1 = vld1q_s8(xb + g * kQuantGroup + kHalfGroup);
    const uint32_t* words = reinterpret_cast<const uint32_t*>(values);
    int32_t dots[kQuantPanelRows];
    if (kKind == QuantKind::kQ8) {
      const uint32_t* high = words + 4 * kQuantChunkBytes / 4;  // chunks 4-7
      for (size_t r = 0; r < kQuantPanelRows; ++r) {
        const int8x16_t w0 = vreinterpretq_s8_u8(veorq_u8(
            vreinterpretq_u8_u32(vldrwq_gather_offset_u32(words + r, kChunks)), kFlip));
        const int8x16_t w1 = vreinterpretq_s8_u8(veorq_u8(
            vreinterpretq_u8_u32(vldrwq_gather_offset_u32(high + r, kChunks)), kFlip));
        dots[r] = vmladavaq_s8(vmladavq_s8(w0, x0), w1, x1);
      }
    } else {
      const int32_t offset = -8 * xsums[g];
      for (size_t r = 0; r < kQuantPanelRows; ++r) {
        const uint8x16_t v =
            vreinterpretq_u8_u32(vldrwq_gather_offset_u32(words + r, kChunks));
        const int8x16_t w0 = vreinterpretq_s8_u8(vandq_u8(v, kNibble));
        const int8x16_t w1 = vreinterpretq_s8_u8(vshlq_u8(v, kHighNibble));
        dots[r] = vmladavaq_s8(vmladavaq_s8(offset, w0, x0), w1, x1);
      }
    }
    const uint16_t* scale_bits = reinterpret_cast<const uint16_t*>(values + kScales);
    for (int q = 0; q < 4; ++q) {
      // Four f16 scales, each in the bottom half of a 32-bit lane, widened to f32.
      const float32x4_t ws = HalvesToFloat(vldrhq_u32(scale_bits + 4 * q));
      const float32x4_t dot = vcvtq_f32_s32(vld1q_s32(dots + 4 * q));
      acc[q] = vfmaq_f32(acc[q], dot, vmulq_n_f32(ws, xscales[g]));
    }
  }
}

template <QuantKind kKind>
void MatMulHelium(const uint8_t* w, const int8_t* xq, const float* xscales,
                  const int32_t* xsums, size_t batch, float* y, size_t y_stride,
                  size_t rows, size_t cols) {
  EMBER_DCHECK(reinterpret_cast<uintptr_t>(w) % 4 == 0);  // gathers load aligned words
  const size_t groups = QuantGroups(cols);
  const size_t padded = groups * kQuantGroup;
  const size_t panel_bytes = QuantPanelBytes(kKind, cols);
  for (size_t b = 0; b < batch; ++b) {
    for (size_t row0 = 0; row0 < rows; row0 += kQuantPanelRows) {
      float32x4_t acc[4];
      for (float32x4_t& a : acc) a = vdupq_n_f32(0.0f);
      PanelToken<kKind>(w + row0 / kQuantPanelRows * panel_bytes, groups, xq + b * padded,
                        xscales + b * groups, xsums + b * groups, acc);
      float* out = y + b * y_stride + row0;
      const size_t n = rows - row0 < kQuantPanelRows ? rows - row0 : kQuantPanelRows;
      if (n == kQuantPanelRows) {
        for (int q = 0; q < 4; ++q) vst1q_f32(out + 4 * q, acc[q]);
      } else {  // the last panel's rows past `rows` are padding: not written
        float buf[kQuantPanelRows];
        for (int q = 0; q < 4; ++q) vst1q_f32(buf + 4 * q, acc[q]);
        memcpy(out, buf, n * sizeof(float));
      }
    }
  }
}

}  // namespace

void MatMulQ8Helium(const uint8_t* w, const int8_t* xq, const float* xscales,
                    const int32_t* xsums, size_t batch, float* y, size_t y_stride,
                    size_t rows, size_t cols) {
  MatMulHelium<QuantKind::kQ8>(w, xq, xscales, xsums, batch, y, y_stride, rows, cols);
}

void MatMulQ4Helium(const uint8_t* w, const int8_t* xq, const float* xscales,
                    const int32_t* xsums, size_t batch, float* y, size_t y_stride,
                    size_t rows, size_t cols) {
  MatMulHelium<QuantKind::kQ4>(w, xq, xscales, xsums, batch, y, y_stride, rows, cols);
}

bool FillHeliumKernels(KernelTable* table) {
  table->matvec_q8 = &MatMulQ8Helium;
  table->matmul_q8 = &MatMulQ8Helium;
  table->matvec_q4 = &MatMulQ4Helium;
  table->matmul_q4 = &MatMulQ4Helium;
  table->int8_dot = "helium";
  return true;
}

}  // namespace ember::kernels
