// GGML's K-quant blocks (q4_k, q5_k, q6_k as llama.cpp's files hold them) and the panel
// layout (kernels/kquant_layout.h): reading and writing both, repacking GGML's rows into
// panels bit for bit, and decoding GGML's rows from the format's definition.
// Conversion-time code (the model writer, the GGUF importer and tests), scalar; not part
// of the shipped library.
#ifndef EMBER_KERNELS_QUANTIZE_KQUANT_PACK_H_
#define EMBER_KERNELS_QUANTIZE_KQUANT_PACK_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kquant_layout.h"

namespace ember::kernels {

// GGML's block of one row's super-block: block_q4_K (d, dmin, scales[12], qs[128]),
// block_q5_K (d, dmin, scales[12], qh[32], qs[128]), block_q6_K (ql[128], qh[64],
// scales[16], d), little-endian, unaligned.
inline constexpr uint64_t GgmlKQuantBlockBytes(KQuantKind kind) {
  return kind == KQuantKind::kQ4K ? 144 : kind == KQuantKind::kQ5K ? 176 : 210;
}
// One row of a GGML tensor of this type: its super-blocks back to back.
inline constexpr uint64_t GgmlKQuantRowBytes(KQuantKind kind, uint64_t cols) {
  return KQuantSuperBlocks(cols) * GgmlKQuantBlockBytes(kind);
}

// Repacks a (rows, cols) GGML tensor of `kind` into the panel layout, keeping every
// value bit for bit (d, dmin, each scale, minimum and q). ggml_rows: rows *
// GgmlKQuantRowBytes(kind, cols) bytes, rows one after the other as in a GGUF file (any
// alignment); out: KQuantPackedBytes(kind, rows, cols) bytes, every one written.
// Returns false, writing nothing, unless rows >= 1 and cols is a positive multiple of
// 256. Any bytes are accepted (an f16 d may be NaN or infinite: kept as it is).
bool PackKQuantFromGgml(KQuantKind kind, const uint8_t* ggml_rows, size_t rows,
                        size_t cols, uint8_t* out);

// The weights of one row of GGML blocks (cols a multiple of 256), decoded straight from
// GGML's format definition (not through the panel layout): out[0, cols).
void DequantizeGgmlKQuantRow(KQuantKind kind, const uint8_t* ggml_row, size_t cols,
                             float* out);

// Writes super-block `block` of `row` in a packed matrix with `cols` columns (the inverse
// of GetKQuantBlock).
void PutKQuantBlock(KQuantKind kind, const KQuantBlockValues& in, size_t cols, size_t row,
                    size_t block, uint8_t* packed);
// Reads / writes one GGML block.
void ReadGgmlKQuantBlock(KQuantKind kind, const uint8_t* ggml_block,
                         KQuantBlockValues* out);
void WriteGgmlKQuantBlock(KQuantKind kind, const KQuantBlockValues& in,
                          uint8_t* ggml_block);

}  // namespace ember::kernels

#endif  // EMBER_KERNELS_QUANTIZE_KQUANT_PACK_H_
