// KvCache: names, row sizes, and the conversions between f32 rows and the stored type
// (see kv_cache.h).
#include "runtime/kv_cache.h"

#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "kernels/half.h"

namespace ember {

const char* KvTypeName(KvType type) {
  switch (type) {
    case KvType::kF32:
      return "f32";
    case KvType::kF16:
      return "f16";
    case KvType::kQ8:
      return "q8";
  }
  return "?";
}

bool ParseKvType(const char* name, KvType* type) {
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kQ8}) {
    if (strcmp(name, KvTypeName(t)) == 0) {
      *type = t;
      return true;
    }
  }
  return false;
}

size_t KvRowBytes(KvType type, size_t n_kv_heads, size_t head_dim) {
  const size_t values = n_kv_heads * head_dim;
  switch (type) {
    case KvType::kF32:
      return values * sizeof(float);
    case KvType::kF16:
      return values * sizeof(uint16_t);
    case KvType::kQ8:
      return values + n_kv_heads * kernels::KvGroups(head_dim) * sizeof(float);
  }
  return 0;
}

kernels::KvRows KvCache::AttentionRows(size_t layer) const {
  kernels::KvRows rows;
  rows.type = type;
  switch (type) {
    case KvType::kF32:
      rows.keys = f32_row(layer, kKeys, 0);
      rows.values = f32_row(layer, kValues, 0);
      break;
    case KvType::kF16:
      rows.keys = f16_row(layer, kKeys, 0);
      rows.values = f16_row(layer, kValues, 0);
      break;
    case KvType::kQ8: {
      const KvQ8Rows keys = q8_row(layer, kKeys, 0), values = q8_row(layer, kValues, 0);
      rows.keys = keys.values;
      rows.key_scales = keys.scales;
      rows.values = values.values;
      rows.value_scales = values.scales;
      break;
    }
  }
  rows.kv_stride = kv_dim;
  rows.scale_stride = scale_stride;
  const KvLayer& l = layers[layer];
  if (l.ring > 0) {  // a sliding layer's ring: windows may wrap around its end
    rows.ring_end = l.capacity;
    rows.ring_rows = l.ring;
  }
  return rows;
}

float* KvCache::InPlaceRows(size_t layer, KvSide side, size_t pos0, size_t count) const {
  if (type != KvType::kF32 || count == 0) return nullptr;
  // In one piece unless they wrap around a ring's end (back) or cross from its sink into
  // a rotated ring (forward): count <= the ring, so one check of the ends tells.
  if (Slot(layer, pos0 + count - 1) != Slot(layer, pos0) + count - 1) return nullptr;
  return f32_row(layer, side, pos0);
}

void KvCache::StoreRow(const kernels::KernelTable& k, size_t layer, KvSide side,
                       size_t pos, const float* row) const {
  switch (type) {
    case KvType::kF32:
      memcpy(f32_row(layer, side, pos), row, kv_dim * sizeof(float));
      break;
    case KvType::kF16: {
      uint16_t* out = f16_row(layer, side, pos);
      for (size_t i = 0; i < kv_dim; ++i) out[i] = kernels::FloatToHalf(row[i]);
      break;
    }
    case KvType::kQ8: {
      const KvQ8Rows out = q8_row(layer, side, pos);
      k.quantize_kv(row, n_kv_heads, head_dim, head_dim, out.values, out.scales);
      break;
    }
  }
}

void KvCache::Store(const kernels::KernelTable& k, size_t layer, size_t pos0,
                    size_t count, const float* keys, const float* values) const {
  for (size_t i = 0; i < count; ++i) {
    const float* key = keys + i * kv_dim;
    const float* value = values + i * kv_dim;
    // An f32 row already in place (InPlaceRows) needs no copy.
    if (type != KvType::kF32 || f32_row(layer, kKeys, pos0 + i) != key) {
      StoreRow(k, layer, kKeys, pos0 + i, key);
    }
    if (type != KvType::kF32 || f32_row(layer, kValues, pos0 + i) != value) {
      StoreRow(k, layer, kValues, pos0 + i, value);
    }
  }
}

void KvCache::Load(size_t layer, KvSide side, size_t pos, float* out) const {
  switch (type) {
    case KvType::kF32:
      memcpy(out, f32_row(layer, side, pos), kv_dim * sizeof(float));
      break;
    case KvType::kF16: {
      const uint16_t* in = f16_row(layer, side, pos);
      for (size_t i = 0; i < kv_dim; ++i) out[i] = kernels::HalfToFloat(in[i]);
      break;
    }
    case KvType::kQ8: {
      const KvQ8Rows in = q8_row(layer, side, pos);
      const size_t groups = kernels::KvGroups(head_dim);
      for (size_t h = 0; h < n_kv_heads; ++h) {
        for (size_t i = 0; i < head_dim; ++i) {
          out[h * head_dim + i] = in.scales[h * groups + i / kernels::kKvGroup] *
                                  static_cast<float>(in.values[h * head_dim + i]);
        }
      }
      break;
    }
  }
}

void KvCache::MoveRows(size_t layer, size_t from, size_t to, size_t count) const {
  for (KvSide side : {kKeys, kValues}) {
    // Row by row: a ring's rows need not be contiguous (memmove: they may overlap).
    for (size_t i = 0; i < count; ++i) {
      const size_t src = Row(layer, side, from + i), dst = Row(layer, side, to + i);
      switch (type) {
        case KvType::kF32:
          memmove(f32 + dst * kv_dim, f32 + src * kv_dim, kv_dim * sizeof(float));
          break;
        case KvType::kF16:
          memmove(f16 + dst * kv_dim, f16 + src * kv_dim, kv_dim * sizeof(uint16_t));
          break;
        case KvType::kQ8:
          memmove(q8 + dst * kv_dim, q8 + src * kv_dim, kv_dim);
          memmove(q8_scales + dst * scale_stride, q8_scales + src * scale_stride,
                  scale_stride * sizeof(float));
          break;
      }
    }
  }
}

namespace {
// Reverses the order of rows [lo, hi) of `stride` elements each.
template <class T>
void ReverseRows(T* rows, size_t stride, size_t lo, size_t hi) {
  for (; lo + 1 < hi; ++lo, --hi) {
    std::swap_ranges(rows + lo * stride, rows + (lo + 1) * stride,
                     rows + (hi - 1) * stride);
  }
}

// Rotates rows [0, n) left by k (row k becomes row 0): three reversals, no scratch.
template <class T>
void RotateRows(T* rows, size_t stride, size_t n, size_t k) {
  ReverseRows(rows, stride, 0, k);
  ReverseRows(rows, stride, k, n);
  ReverseRows(rows, stride, 0, n);
}
}  // namespace

void KvCache::RotateRing(size_t layer, size_t by) const {
  const KvLayer& l = layers[layer];
  if (l.ring == 0 || by % l.ring == 0) return;
  const size_t k = by % l.ring;
  for (KvSide side : {kKeys, kValues}) {
    const size_t first = l.first_row + side * l.capacity + l.sink;  // the ring's row 0
    switch (type) {
      case KvType::kF32:
        RotateRows(f32 + first * kv_dim, kv_dim, l.ring, k);
        break;
      case KvType::kF16:
        RotateRows(f16 + first * kv_dim, kv_dim, l.ring, k);
        break;
      case KvType::kQ8:
        RotateRows(q8 + first * kv_dim, kv_dim, l.ring, k);
        RotateRows(q8_scales + first * scale_stride, scale_stride, l.ring, k);
        break;
    }
  }
}

bool KvLayerHolds(const KvLayer& l, size_t window, size_t written, size_t pos) {
  if (l.ring == 0 || pos <= l.sink || written <= l.sink + l.ring) return true;
  // The ring holds positions [written - ring, written); a pass from pos reads back to
  // pos + 1 - window (its first query's window), which must be among them.
  return window > 0 && pos + 1 >= window && pos + 1 - window >= written - l.ring;
}

void KvCache::CopySlotsOut(size_t layer, KvSide side, size_t n, uint8_t* block) const {
  const size_t row = layers[layer].first_row + side * layers[layer].capacity;
  switch (type) {
    case KvType::kF32:
      memcpy(block, f32 + row * kv_dim, n * kv_dim * sizeof(float));
      break;
    case KvType::kF16:
      memcpy(block, f16 + row * kv_dim, n * kv_dim * sizeof(uint16_t));
      break;
    case KvType::kQ8:
      memcpy(block, q8 + row * kv_dim, n * kv_dim);
      memcpy(block + n * kv_dim, q8_scales + row * scale_stride,
             n * scale_stride * sizeof(float));
      break;
  }
}

void KvCache::CopySlotsIn(size_t layer, KvSide side, size_t slot, const uint8_t* block,
                          size_t block_rows, size_t row0, size_t count) const {
  const size_t row = layers[layer].first_row + side * layers[layer].capacity + slot;
  switch (type) {
    case KvType::kF32:
      memcpy(f32 + row * kv_dim, block + row0 * kv_dim * sizeof(float),
             count * kv_dim * sizeof(float));
      break;
    case KvType::kF16:
      memcpy(f16 + row * kv_dim, block + row0 * kv_dim * sizeof(uint16_t),
             count * kv_dim * sizeof(uint16_t));
      break;
    case KvType::kQ8:
      memcpy(q8 + row * kv_dim, block + row0 * kv_dim, count * kv_dim);
      memcpy(q8_scales + row * scale_stride,
             block + block_rows * kv_dim + row0 * scale_stride * sizeof(float),
             count * scale_stride * sizeof(float));
      break;
  }
}

}  // namespace ember
