// KvCache: the keys and values of every layer, stored as f32, f16 or q8 (int8 with a
// scale per group of 32 values of each head), as a typed view into a session's arena.
// Writing converts new rows once; a context shift moves rows and re-rotates keys.
#ifndef EMBER_RUNTIME_KV_CACHE_H_
#define EMBER_RUNTIME_KV_CACHE_H_

#include <cstddef>
#include <cstdint>

#include "kernels/kernel_table.h"

namespace ember {

// The element type of the cache (SessionOptions::kv_type): kF32, kF16 or kQ8. q8's
// grouping and encoding: kernels/attention.h (kKvGroup).
using KvType = kernels::KvType;
const char* KvTypeName(KvType type);  // "f32", "f16", "q8"
// "f32", "f16" or "q8"; false for anything else.
bool ParseKvType(const char* name, KvType* type);

// Bytes one position of one layer's keys (or values) takes: kv_dim values of the type,
// q8 adding an f32 scale per group of kKvGroup values of each head (36 bytes per 32
// values for a head_dim that is a multiple of 32).
size_t KvRowBytes(KvType type, size_t n_kv_heads, size_t head_dim);

enum KvSide : int { kKeys = 0, kValues = 1 };

// Where one layer's rows are in the cache's arrays: `capacity` rows of keys from
// first_row, then `capacity` rows of values; position p at slot p of them. A sliding
// layer whose window is shorter than the context keeps a ring instead (ring > 0): the
// first `sink` positions (a context shift's kept ones) at slots [0, sink), every later
// position p at slot sink + (p - sink) % ring, capacity = sink + ring. The table is data,
// planned per layer (KvLayerPositions, session_plan.h).
struct KvLayer {
  size_t first_row = 0;
  size_t capacity = 0;
  size_t sink = 0;
  size_t ring = 0;  // 0: no ring (capacity is the context)
};

// KvCache::Holds for a layer laid out as `l` (a plan's, before any arena is bound).
bool KvLayerHolds(const KvLayer& l, size_t window, size_t written, size_t pos);

// q8 rows: int8 values (rows of kv_dim) and their scales (rows of scale_stride).
struct KvQ8Rows {
  int8_t* values = nullptr;
  float* scales = nullptr;
};

struct KvCache {
  KvType type = KvType::kF32;
  size_t max_context = 0;  // positions a layer without a window holds
  size_t n_kv_heads = 0;
  size_t head_dim = 0;
  size_t kv_dim = 0;                // n_kv_heads * head_dim: values per row
  size_t scale_stride = 0;          // q8: n_kv_heads * KvGroups(head_dim) scales per row
  const KvLayer* layers = nullptr;  // (n_layers)
  // The rows, in the array of the type (the others null), (rows, kv_dim) where rows is
  // the sum of every layer's 2 * capacity; q8 has its scales beside, (rows,
  // scale_stride).
  float* f32 = nullptr;
  uint16_t* f16 = nullptr;
  int8_t* q8 = nullptr;
  float* q8_scales = nullptr;

  // The slot of position `pos` in a layer's keys (or values), and its row.
  size_t Slot(size_t layer, size_t pos) const {
    const KvLayer& l = layers[layer];
    return l.ring == 0 || pos < l.sink ? pos : l.sink + (pos - l.sink) % l.ring;
  }
  size_t Row(size_t layer, KvSide side, size_t pos) const {
    const KvLayer& l = layers[layer];
    return l.first_row + side * l.capacity + Slot(layer, pos);
  }
  // Rows [Row(pos0), Row(pos0) + count) of an f32 cache, when they lie in one piece (not
  // wrapping around a ring); else null: the caller writes elsewhere and Stores them.
  float* InPlaceRows(size_t layer, KvSide side, size_t pos0, size_t count) const;

  // Typed views of position `pos`'s row (of the cache's type).
  float* f32_row(size_t layer, KvSide side, size_t pos) const {
    return f32 + Row(layer, side, pos) * kv_dim;
  }
  uint16_t* f16_row(size_t layer, KvSide side, size_t pos) const {
    return f16 + Row(layer, side, pos) * kv_dim;
  }
  KvQ8Rows q8_row(size_t layer, KvSide side, size_t pos) const {
    const size_t row = Row(layer, side, pos);
    return KvQ8Rows{q8 + row * kv_dim, q8_scales + row * scale_stride};
  }
  // A layer's keys and values as the attention kernels read them (slot 0 at row 0; a
  // ring layer's ring as the last `ring` of its slots).
  kernels::KvRows AttentionRows(size_t layer) const;

  // Writes positions [pos0, pos0 + count) of a layer from f32 rows (count x kv_dim
  // each), converting each row once to the cache's type.
  void Store(const kernels::KernelTable& k, size_t layer, size_t pos0, size_t count,
             const float* keys, const float* values) const;
  // One stored row as f32 (exact for f32 and f16; q8 gives its scale times its values).
  void Load(size_t layer, KvSide side, size_t pos, float* out) const;
  // Writes one row from f32 (q8 quantizes it again).
  void StoreRow(const kernels::KernelTable& k, size_t layer, KvSide side, size_t pos,
                const float* row) const;
  // Moves positions [from, from + count) of a layer without a ring to [to, to + count),
  // to < from, in every array of the type (keys and values); rows the move leaves are
  // stale.
  void MoveRows(size_t layer, size_t from, size_t to, size_t count) const;
  // A ring layer's positions past its sink, every one `by` positions down (to < from as
  // MoveRows, for all of them at once): its ring rotated by `by` slots, in place.
  void RotateRing(size_t layer, size_t by) const;

  // Whether a layer that has stored positions [0, written) still holds every row a pass
  // from position `pos` (<= written) reads with its window of `window` positions (0:
  // all): a ring that wrapped has lost the positions before written - ring, so going
  // back (Session::Truncate, a prefix of a saved state) is refused past them.
  bool Holds(size_t layer, size_t window, size_t written, size_t pos) const {
    return KvLayerHolds(layers[layer], window, written, pos);
  }
  // The first n slots of a layer's keys (or values) as stored, copied out to a block of
  // n * KvRowBytes bytes: the rows of f32 or f16; q8's n rows of int8 values, then their
  // n rows of scales. Exact: no conversion (prompt_state.h).
  void CopySlotsOut(size_t layer, KvSide side, size_t n, uint8_t* block) const;
  // Rows [row0, row0 + count) of such a block of block_rows rows into slots [slot,
  // slot + count) of a layer's keys (or values).
  void CopySlotsIn(size_t layer, KvSide side, size_t slot, const uint8_t* block,
                   size_t block_rows, size_t row0, size_t count) const;
};

}  // namespace ember

#endif  // EMBER_RUNTIME_KV_CACHE_H_
