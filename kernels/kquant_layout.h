// The packed byte layout of q4_k, q5_k and q6_k weight matrices (GGML's K-quants in
// panels) and scalar decoders (the reference the kernels and the importer test against).
// The packers, from GGML's own blocks and from f32 weights, are conversion-time code:
// kernels/quantize/kquant_pack.h and kquant_quantize.h.
//
// Values, exactly as GGML's Q4_K, Q5_K and Q6_K define them. A row is cut into
// super-blocks of kKQuantBlock = 256 inputs (cols must be a multiple of 256; the loader
// refuses other shapes and the converter stores such matrices as q8, README "Weight
// types"). Per row and super-block:
//   q4_k, q5_k: f16 d and dmin; 8 sub-blocks of 32 inputs, each with a 6-bit scale sc
//               (0..63) and a 6-bit minimum m (0..63); q in 0..15 (q4_k) or 0..31
//               (q5_k); w = d * sc * q - dmin * m.
//   q6_k:       f16 d; 16 sub-blocks of 16 inputs, each with an int8 scale sc
//               (-128..127); q in 0..63; w = d * sc * (q - 32).
// In float: d * sc * q and dmin * m are exact (at most 24 significant bits), so w is
// their difference rounded once, as GGML's dequantize_row_q*_K computes it.
//
// Panels. Rows are interleaved in panels of kQuantPanelRows = 16 (rows past the last
// are zero bytes: value 0), so that one 64-byte load holds 4 consecutive inputs of 16
// rows ("chunk": row r's input i at byte 4r + i), the operand of one AVX-512 VNNI
// vpdpbusd or of four Arm sdot-by-element, as in quant_layout.h. Panel p (rows
// 16p .. 16p+15) is KQuantPanelBytes(kind, cols) bytes, panels back to back, each one
// sequential stream. With S = cols / 256 super-blocks, a panel holds:
//
// 1. The super-block scale table, KQuantTableBytes = S * KQuantTableEntryBytes rounded
//    up to 64 with zero bytes. Entry s (at s * entry bytes), for row r:
//      q4_k, q5_k (64 bytes): d as f16 bits at 2r, dmin at 32 + 2r;
//      q6_k (32 bytes):       d as f16 bits at 2r.
// 2. Super-block s at KQuantTableBytes + s * KQuantSuperBlockBytes:
//    a. its sub-block scales (KQuantScaleBytes), one byte per row per field so 16 rows
//       load as one 16-byte vector:
//      q4_k, q5_k (192 bytes), for k = 0..3:
//        byte      16k + r: (sc[k] & 15) | (sc[k + 4] & 15) << 4
//        byte 64 + 16k + r: (m[k] & 15)  | (m[k + 4] & 15) << 4
//        byte 128 + 16k + r: sc[k] >> 4 | (sc[k + 4] >> 4) << 2 | (m[k] >> 4) << 4 |
//                            (m[k + 4] >> 4) << 6
//      q6_k (256 bytes): byte 16k + r = sc[k] (two's complement), k = 0..15.
//    b. 8 groups of 32 inputs (group g: inputs 32g .. 32g+31 of the super-block), group
//       g at KQuantScaleBytes + g * KQuantGroupBytes; chunk c of a group is its inputs
//       4c .. 4c+3. Every kind starts with q4's 256 nibble bytes: byte 64j + 4r + i
//       (j = 0..3) holds the low 4 bits of q of chunk j (input 4j + i) in its low
//       nibble and of chunk j + 4 (input 16 + 4j + i) in its high nibble. Then:
//      q4_k (256 bytes): nothing (q has 4 bits).
//      q5_k (320 bytes): byte 256 + 4r + i, bit c = bit 4 of q of chunk c (c = 0..7).
//      q6_k (384 bytes): byte 256 + 64h + 4r + i (h = 0, 1), bits 2k, 2k+1 = bits 4, 5 of
//                        q of chunk 4h + k (k = 0..3).
// Every load of values is 64-byte aligned (all sizes above are multiples of 64). The
// bytes per row equal GGML's (144, 176 and 210 per 256 inputs), except that q6_k's
// table is padded by 32 bytes per panel when S is odd.
//
// For a q4_k/q5_k group (one sub-block) the products need sum(q * xq) over the group
// and the activation sum, for the minimum; q is unsigned, a direct vpdpbusd operand.
// q6_k's sub-blocks are half groups: x86 subtracts 32 * (sum of that half of xq); Arm
// subtracts 32 from the bytes (signed, an sdot operand).
#ifndef EMBER_KERNELS_KQUANT_LAYOUT_H_
#define EMBER_KERNELS_KQUANT_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "kernels/quant_layout.h"

namespace ember::kernels {

enum class KQuantKind : uint8_t { kQ4K, kQ5K, kQ6K };

inline constexpr size_t kKQuantBlock = 256;  // inputs per super-block (GGML's QK_K)
inline constexpr size_t kKQuantGroups = 8;   // groups of 32 inputs per super-block

// Sizes in uint64_t so the loader's checks cannot wrap on 32-bit targets.
inline constexpr uint64_t KQuantSuperBlocks(uint64_t cols) { return cols / kKQuantBlock; }
inline constexpr uint64_t KQuantTableEntryBytes(KQuantKind kind) {
  return kind == KQuantKind::kQ6K ? 32 : 64;
}
inline constexpr uint64_t KQuantScaleBytes(KQuantKind kind) {
  return kind == KQuantKind::kQ6K ? 256 : 192;
}
inline constexpr uint64_t KQuantGroupBytes(KQuantKind kind) {
  return kind == KQuantKind::kQ4K ? 256 : kind == KQuantKind::kQ5K ? 320 : 384;
}
inline constexpr uint64_t KQuantSuperBlockBytes(KQuantKind kind) {
  return KQuantScaleBytes(kind) + kKQuantGroups * KQuantGroupBytes(kind);
}
inline constexpr uint64_t KQuantTableBytes(KQuantKind kind, uint64_t cols) {
  return (KQuantSuperBlocks(cols) * KQuantTableEntryBytes(kind) + 63) / 64 * 64;
}
inline constexpr uint64_t KQuantPanelBytes(KQuantKind kind, uint64_t cols) {
  return KQuantTableBytes(kind, cols) +
         KQuantSuperBlocks(cols) * KQuantSuperBlockBytes(kind);
}
// The whole packed matrix (rows padded to 16), for rows and cols below 2^48.
inline constexpr uint64_t KQuantPackedBytes(KQuantKind kind, uint64_t rows,
                                            uint64_t cols) {
  return (rows + 15) / 16 * KQuantPanelBytes(kind, cols);
}

// One row's super-block, unpacked: what both formats hold.
struct KQuantBlockValues {
  uint16_t d = 0, dmin = 0;  // f16 bit patterns (dmin unused by q6_k)
  int16_t scales[16] = {};   // q4_k/q5_k: sc[0..7] (0..63); q6_k: sc[0..15]
  uint8_t mins[8] = {};      // q4_k/q5_k: m[0..7] (0..63)
  uint8_t q[kKQuantBlock] = {};
};

// Where row `row`'s parts of super-block `block` lie in a packed matrix with `cols`
// columns: its d (and dmin 32 bytes on) in the scale table entry, its byte of the
// sub-block scales, and its first byte (4r) of group 0. What GetKQuantBlock reads and
// the packers write.
struct KQuantBlockBytes {
  uint8_t* table;
  uint8_t* scales;
  uint8_t* groups;
};
inline KQuantBlockBytes LocateKQuantBlock(KQuantKind kind, const uint8_t* packed,
                                          size_t cols, size_t row, size_t block) {
  uint8_t* panel =
      const_cast<uint8_t*>(packed) + row / kQuantPanelRows * KQuantPanelBytes(kind, cols);
  const size_t r = row % kQuantPanelRows;
  uint8_t* super_block =
      panel + KQuantTableBytes(kind, cols) + block * KQuantSuperBlockBytes(kind);
  return {panel + block * KQuantTableEntryBytes(kind) + 2 * r, super_block + r,
          super_block + KQuantScaleBytes(kind) + 4 * r};
}
// Input i (0..31) of a group: the byte holding its low 4 bits, counted from the row's
// first byte of the group, and their shift in it (chunk i / 4 >= 4: the high nibble).
inline constexpr size_t KQuantNibbleByte(size_t i) { return 64 * (i / 4 % 4) + i % 4; }
inline constexpr int KQuantNibbleShift(size_t i) { return i / 4 >= 4 ? 4 : 0; }

// False in builds that leave the K-quants out (EMBER_WITH_KQUANTS=OFF, kquant_none.cc):
// the loader then refuses their weights.
bool KQuantsBuiltIn();

// Reads super-block `block` of `row` in a packed matrix with `cols` columns.
void GetKQuantBlock(KQuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                    size_t block, KQuantBlockValues* out);

// The weights of a super-block (the format's definition above): out[0, 256).
void KQuantBlockWeights(KQuantKind kind, const KQuantBlockValues& b, float* out);

// out[0, cols) = the weights of one row of a packed matrix (embedding lookups, tests).
void DequantizeKQuantRow(KQuantKind kind, const uint8_t* packed, size_t cols, size_t row,
                         float* out);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_KQUANT_LAYOUT_H_
