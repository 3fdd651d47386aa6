// Per-target f32 matrix-vector (decode) and matrix-matrix (prefill) products, and the
// row dot products the 16-bit ones (matvec16-inl.h) share, over how a row's values load.
//
// Every output y[b, r] is computed in the same order in both kernels (one vector
// accumulator over the whole vectors of the row, a lane sum, then the remaining columns
// in order), so prefill and decode give bitwise-identical results for the same inputs,
// and so does any split of the rows across threads.
#if defined(EMBER_KERNELS_MATVEC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_MATVEC_INL_H_
#undef EMBER_KERNELS_MATVEC_INL_H_
#else
#define EMBER_KERNELS_MATVEC_INL_H_
#endif

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/dcheck.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// How a row's values are read as f32, for the dot products below: T the stored type,
// Load(d, p) the Lanes(d) values at p, ToFloat one value (the columns no whole vector
// covers). F32Format here; F16Format and BF16Format in matvec16-inl.h.
struct F32Format {
  using T = float;
  template <class D>
  static HWY_INLINE hn::Vec<D> Load(D d, const float* HWY_RESTRICT p) {
    return hn::LoadU(d, p);
  }
  static HWY_INLINE float ToFloat(float x) { return x; }
};

// sum + w[c] x[c] for c in [begin, cols), in order (the part no whole vector covers).
template <class Format = F32Format>
HWY_INLINE float DotTail(float sum, const typename Format::T* HWY_RESTRICT w,
                         const float* HWY_RESTRICT x, size_t begin, size_t cols) {
  for (size_t c = begin; c < cols; ++c) sum += Format::ToFloat(w[c]) * x[c];
  return sum;
}

// One row times one vector.
template <class Format = F32Format>
HWY_INLINE float DotRow(const typename Format::T* HWY_RESTRICT w,
                        const float* HWY_RESTRICT x, size_t cols) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  auto acc = hn::Zero(d);
  for (size_t c = 0; c < body; c += N) {
    acc = hn::MulAdd(Format::Load(d, w + c), hn::LoadU(d, x + c), acc);
  }
  return DotTail<Format>(ReduceSum(d, acc), w, x, body, cols);
}

// Four rows anywhere (r0..r3) times one vector, each sum exactly DotRow's: four
// independent chains share each load of x (attention's keys of four positions).
template <class Format = F32Format>
HWY_INLINE void DotRowsAt4(const typename Format::T* HWY_RESTRICT r0,
                           const typename Format::T* HWY_RESTRICT r1,
                           const typename Format::T* HWY_RESTRICT r2,
                           const typename Format::T* HWY_RESTRICT r3,
                           const float* HWY_RESTRICT x, size_t cols,
                           float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  for (size_t c = 0; c < body; c += N) {
    const auto xv = hn::LoadU(d, x + c);
    a0 = hn::MulAdd(Format::Load(d, r0 + c), xv, a0);
    a1 = hn::MulAdd(Format::Load(d, r1 + c), xv, a1);
    a2 = hn::MulAdd(Format::Load(d, r2 + c), xv, a2);
    a3 = hn::MulAdd(Format::Load(d, r3 + c), xv, a3);
  }
  y[0] = DotTail<Format>(ReduceSum(d, a0), r0, x, body, cols);
  y[1] = DotTail<Format>(ReduceSum(d, a1), r1, x, body, cols);
  y[2] = DotTail<Format>(ReduceSum(d, a2), r2, x, body, cols);
  y[3] = DotTail<Format>(ReduceSum(d, a3), r3, x, body, cols);
}

// Eight rows times one vector: eight independent FMA chains share each load of x.
// kPrefetchNext (the 16-bit matvec): the 8 rows are one contiguous block of 8 * cols
// weights and the next block follows; short rows (768 16-bit columns: 1.5 KiB) are too
// short for the hardware prefetcher to ramp up on 8 streams, so the next block is
// fetched in step (8 N weights per iteration).
template <class Format = F32Format, bool kPrefetchNext = false>
HWY_INLINE void DotRows8(const typename Format::T* HWY_RESTRICT w, size_t cols,
                         const float* HWY_RESTRICT x, float* HWY_RESTRICT y) {
  using T = typename Format::T;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  const T* w0 = w;
  const T* w1 = w0 + cols;
  const T* w2 = w1 + cols;
  const T* w3 = w2 + cols;
  const T* w4 = w3 + cols;
  const T* w5 = w4 + cols;
  const T* w6 = w5 + cols;
  const T* w7 = w6 + cols;
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  constexpr size_t kColumnBytes = 8 * sizeof(T);  // 8 rows' weights of a column
  const uint8_t* next = reinterpret_cast<const uint8_t*>(w + 8 * cols);
  for (size_t c = 0; c < body; c += N) {
    if constexpr (kPrefetchNext) {
      const uint8_t* ahead = next + c * kColumnBytes;
      for (size_t line = 0; line < N * kColumnBytes; line += 64) {
        hwy::Prefetch(ahead + line);
      }
    }
    const auto xv = hn::LoadU(d, x + c);
    a0 = hn::MulAdd(Format::Load(d, w0 + c), xv, a0);
    a1 = hn::MulAdd(Format::Load(d, w1 + c), xv, a1);
    a2 = hn::MulAdd(Format::Load(d, w2 + c), xv, a2);
    a3 = hn::MulAdd(Format::Load(d, w3 + c), xv, a3);
    a4 = hn::MulAdd(Format::Load(d, w4 + c), xv, a4);
    a5 = hn::MulAdd(Format::Load(d, w5 + c), xv, a5);
    a6 = hn::MulAdd(Format::Load(d, w6 + c), xv, a6);
    a7 = hn::MulAdd(Format::Load(d, w7 + c), xv, a7);
  }
  y[0] = DotTail<Format>(ReduceSum(d, a0), w0, x, body, cols);
  y[1] = DotTail<Format>(ReduceSum(d, a1), w1, x, body, cols);
  y[2] = DotTail<Format>(ReduceSum(d, a2), w2, x, body, cols);
  y[3] = DotTail<Format>(ReduceSum(d, a3), w3, x, body, cols);
  y[4] = DotTail<Format>(ReduceSum(d, a4), w4, x, body, cols);
  y[5] = DotTail<Format>(ReduceSum(d, a5), w5, x, body, cols);
  y[6] = DotTail<Format>(ReduceSum(d, a6), w6, x, body, cols);
  y[7] = DotTail<Format>(ReduceSum(d, a7), w7, x, body, cols);
}

// Sixteen rows at once: sixteen weight streams in flight keep a single core's memory
// pipeline fuller than eight (decode is bound by reading the weights). Each row's sum runs
// in the same order as in DotRows8 and DotBlock4x4, so results do not depend on the
// grouping. (Explicit variables: SVE vectors cannot be array elements.)
HWY_INLINE void DotRows16(const float* HWY_RESTRICT w, size_t cols,
                          const float* HWY_RESTRICT x, float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  auto a8 = hn::Zero(d), a9 = hn::Zero(d), a10 = hn::Zero(d), a11 = hn::Zero(d);
  auto a12 = hn::Zero(d), a13 = hn::Zero(d), a14 = hn::Zero(d), a15 = hn::Zero(d);
  // While the first 16 vectors of each row are read, the first 512 bytes of the next 16
  // rows are prefetched to L2, one row per iteration: their 16 streams then start warm
  // instead of each waiting for the hardware prefetcher to notice it. Single-thread f32
  // decode 8 to 11 % faster, 2 threads 7 to 9 % (A/B in one process). The address may lie
  // past the matrix: integer arithmetic, and a prefetch never faults.
  const uintptr_t next = reinterpret_cast<uintptr_t>(w + 16 * cols);
  for (size_t c = 0; c < body; c += N) {
    if (c < 16 * N) {
      const uintptr_t row = next + c / N * cols * sizeof(float);
      for (uintptr_t line = 0; line < 512; line += 64) {
        __builtin_prefetch(reinterpret_cast<const void*>(row + line), 0, 2);
      }
    }
    const auto xv = hn::LoadU(d, x + c);
    a0 = hn::MulAdd(hn::LoadU(d, w + 0 * cols + c), xv, a0);
    a1 = hn::MulAdd(hn::LoadU(d, w + 1 * cols + c), xv, a1);
    a2 = hn::MulAdd(hn::LoadU(d, w + 2 * cols + c), xv, a2);
    a3 = hn::MulAdd(hn::LoadU(d, w + 3 * cols + c), xv, a3);
    a4 = hn::MulAdd(hn::LoadU(d, w + 4 * cols + c), xv, a4);
    a5 = hn::MulAdd(hn::LoadU(d, w + 5 * cols + c), xv, a5);
    a6 = hn::MulAdd(hn::LoadU(d, w + 6 * cols + c), xv, a6);
    a7 = hn::MulAdd(hn::LoadU(d, w + 7 * cols + c), xv, a7);
    a8 = hn::MulAdd(hn::LoadU(d, w + 8 * cols + c), xv, a8);
    a9 = hn::MulAdd(hn::LoadU(d, w + 9 * cols + c), xv, a9);
    a10 = hn::MulAdd(hn::LoadU(d, w + 10 * cols + c), xv, a10);
    a11 = hn::MulAdd(hn::LoadU(d, w + 11 * cols + c), xv, a11);
    a12 = hn::MulAdd(hn::LoadU(d, w + 12 * cols + c), xv, a12);
    a13 = hn::MulAdd(hn::LoadU(d, w + 13 * cols + c), xv, a13);
    a14 = hn::MulAdd(hn::LoadU(d, w + 14 * cols + c), xv, a14);
    a15 = hn::MulAdd(hn::LoadU(d, w + 15 * cols + c), xv, a15);
  }
  y[0] = DotTail(ReduceSum(d, a0), w + 0 * cols, x, body, cols);
  y[1] = DotTail(ReduceSum(d, a1), w + 1 * cols, x, body, cols);
  y[2] = DotTail(ReduceSum(d, a2), w + 2 * cols, x, body, cols);
  y[3] = DotTail(ReduceSum(d, a3), w + 3 * cols, x, body, cols);
  y[4] = DotTail(ReduceSum(d, a4), w + 4 * cols, x, body, cols);
  y[5] = DotTail(ReduceSum(d, a5), w + 5 * cols, x, body, cols);
  y[6] = DotTail(ReduceSum(d, a6), w + 6 * cols, x, body, cols);
  y[7] = DotTail(ReduceSum(d, a7), w + 7 * cols, x, body, cols);
  y[8] = DotTail(ReduceSum(d, a8), w + 8 * cols, x, body, cols);
  y[9] = DotTail(ReduceSum(d, a9), w + 9 * cols, x, body, cols);
  y[10] = DotTail(ReduceSum(d, a10), w + 10 * cols, x, body, cols);
  y[11] = DotTail(ReduceSum(d, a11), w + 11 * cols, x, body, cols);
  y[12] = DotTail(ReduceSum(d, a12), w + 12 * cols, x, body, cols);
  y[13] = DotTail(ReduceSum(d, a13), w + 13 * cols, x, body, cols);
  y[14] = DotTail(ReduceSum(d, a14), w + 14 * cols, x, body, cols);
  y[15] = DotTail(ReduceSum(d, a15), w + 15 * cols, x, body, cols);
}

// Four rows times four vectors: each weight load feeds four FMAs (prefill).
HWY_INLINE void DotBlock4x4(const float* HWY_RESTRICT w, size_t cols,
                            const float* HWY_RESTRICT x, float* HWY_RESTRICT y,
                            size_t y_stride) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  const float* w0 = w;
  const float* w1 = w0 + cols;
  const float* w2 = w1 + cols;
  const float* w3 = w2 + cols;
  const float* x0 = x;
  const float* x1 = x0 + cols;
  const float* x2 = x1 + cols;
  const float* x3 = x2 + cols;
  auto a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
  auto a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
  auto a20 = hn::Zero(d), a21 = hn::Zero(d), a22 = hn::Zero(d), a23 = hn::Zero(d);
  auto a30 = hn::Zero(d), a31 = hn::Zero(d), a32 = hn::Zero(d), a33 = hn::Zero(d);
  for (size_t c = 0; c < body; c += N) {
    const auto v0 = hn::LoadU(d, x0 + c);
    const auto v1 = hn::LoadU(d, x1 + c);
    const auto v2 = hn::LoadU(d, x2 + c);
    const auto v3 = hn::LoadU(d, x3 + c);
    auto r = hn::LoadU(d, w0 + c);
    a00 = hn::MulAdd(r, v0, a00);
    a01 = hn::MulAdd(r, v1, a01);
    a02 = hn::MulAdd(r, v2, a02);
    a03 = hn::MulAdd(r, v3, a03);
    r = hn::LoadU(d, w1 + c);
    a10 = hn::MulAdd(r, v0, a10);
    a11 = hn::MulAdd(r, v1, a11);
    a12 = hn::MulAdd(r, v2, a12);
    a13 = hn::MulAdd(r, v3, a13);
    r = hn::LoadU(d, w2 + c);
    a20 = hn::MulAdd(r, v0, a20);
    a21 = hn::MulAdd(r, v1, a21);
    a22 = hn::MulAdd(r, v2, a22);
    a23 = hn::MulAdd(r, v3, a23);
    r = hn::LoadU(d, w3 + c);
    a30 = hn::MulAdd(r, v0, a30);
    a31 = hn::MulAdd(r, v1, a31);
    a32 = hn::MulAdd(r, v2, a32);
    a33 = hn::MulAdd(r, v3, a33);
  }
  // y[b * y_stride + r]
  y[0] = DotTail(ReduceSum(d, a00), w0, x0, body, cols);
  y[y_stride] = DotTail(ReduceSum(d, a01), w0, x1, body, cols);
  y[2 * y_stride] = DotTail(ReduceSum(d, a02), w0, x2, body, cols);
  y[3 * y_stride] = DotTail(ReduceSum(d, a03), w0, x3, body, cols);
  y[1] = DotTail(ReduceSum(d, a10), w1, x0, body, cols);
  y[1 + y_stride] = DotTail(ReduceSum(d, a11), w1, x1, body, cols);
  y[1 + 2 * y_stride] = DotTail(ReduceSum(d, a12), w1, x2, body, cols);
  y[1 + 3 * y_stride] = DotTail(ReduceSum(d, a13), w1, x3, body, cols);
  y[2] = DotTail(ReduceSum(d, a20), w2, x0, body, cols);
  y[2 + y_stride] = DotTail(ReduceSum(d, a21), w2, x1, body, cols);
  y[2 + 2 * y_stride] = DotTail(ReduceSum(d, a22), w2, x2, body, cols);
  y[2 + 3 * y_stride] = DotTail(ReduceSum(d, a23), w2, x3, body, cols);
  y[3] = DotTail(ReduceSum(d, a30), w3, x0, body, cols);
  y[3 + y_stride] = DotTail(ReduceSum(d, a31), w3, x1, body, cols);
  y[3 + 2 * y_stride] = DotTail(ReduceSum(d, a32), w3, x2, body, cols);
  y[3 + 3 * y_stride] = DotTail(ReduceSum(d, a33), w3, x3, body, cols);
}

// One row at a time, each row's sum as in DotRow, with an L2 prefetch every 256 bytes
// kStreamPrefetchBytes ahead: the matrix is read as one sequential stream. On x86 this
// reads faster than 16 interleaved row streams (single-thread 110M f32 decode kernels
// about 18 % faster, side by side), and the deep out-of-order window overlaps the rows'
// FMA chains. The address may lie past the matrix: integer arithmetic, and a prefetch
// never faults.
HWY_INLINE void DotRowsStream(const float* HWY_RESTRICT w, size_t rows, size_t cols,
                              const float* HWY_RESTRICT x, float* HWY_RESTRICT y) {
  constexpr uintptr_t kStreamPrefetchBytes = 4096;
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  for (size_t r = 0; r < rows; ++r) {
    const float* HWY_RESTRICT row = w + r * cols;
    auto acc = hn::Zero(d);
    for (size_t c = 0; c < body; c += N) {
      if ((c * sizeof(float)) % 256 < N * sizeof(float)) {
        __builtin_prefetch(
            reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(row + c) +
                                          kStreamPrefetchBytes),
            0, 2);
      }
      acc = hn::MulAdd(hn::LoadU(d, row + c), hn::LoadU(d, x + c), acc);
    }
    y[r] = DotTail(ReduceSum(d, acc), row, x, body, cols);
  }
}

inline void MatVecF32(const float* HWY_RESTRICT w, const float* HWY_RESTRICT x,
                      float* HWY_RESTRICT y, size_t rows, size_t cols) {
  if (HWY_ARCH_X86) {
    // Measured on x86 only; Arm keeps the row blocks below until measured on a device
    // (an in-order core needs the independent chains of several rows).
    DotRowsStream(w, rows, cols, x, y);
    return;
  }
  size_t r = 0;
  // armv7 has 16 vector registers, too few for 16 accumulators: it keeps 8 rows.
  if (!HWY_ARCH_ARM_V7) {
    for (; r + 16 <= rows; r += 16) DotRows16(w + r * cols, cols, x, y + r);
  }
  for (; r + 8 <= rows; r += 8) DotRows8(w + r * cols, cols, x, y + r);
  for (; r < rows; ++r) y[r] = DotRow(w + r * cols, x, cols);
}

inline void MatMulF32(const float* HWY_RESTRICT w, const float* HWY_RESTRICT x,
                      size_t batch, float* HWY_RESTRICT y, size_t y_stride, size_t rows,
                      size_t cols) {
  EMBER_DCHECK(batch == 1 || y_stride >= rows);
  size_t b = 0;
  for (; b + 4 <= batch; b += 4) {
    const float* xb = x + b * cols;
    float* yb = y + b * y_stride;
    size_t r = 0;
    for (; r + 4 <= rows; r += 4) DotBlock4x4(w + r * cols, cols, xb, yb + r, y_stride);
    for (; r < rows; ++r) {
      for (size_t i = 0; i < 4; ++i) {
        yb[i * y_stride + r] = DotRow(w + r * cols, xb + i * cols, cols);
      }
    }
  }
  for (; b < batch; ++b) MatVecF32(w, x + b * cols, y + b * y_stride, rows, cols);
}

// GemmNnF32's tiles: 4 rows of y by two vectors of columns (8 accumulators; per step of
// depth 2 loads of b and 4 broadcasts of a feed 8 FMAs); 4 rows by one vector of d (the
// columns left over: a full vector, then narrower ones, so no lane reads or writes past
// column n); one row by one vector.
HWY_INLINE void GemmRows4x2(const float* HWY_RESTRICT a, size_t a_stride,
                            const float* HWY_RESTRICT b, size_t b_stride,
                            float* HWY_RESTRICT y, size_t y_stride, size_t depth) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  auto y00 = hn::Zero(d), y01 = hn::Zero(d), y10 = hn::Zero(d), y11 = hn::Zero(d);
  auto y20 = hn::Zero(d), y21 = hn::Zero(d), y30 = hn::Zero(d), y31 = hn::Zero(d);
  const float* a1 = a + a_stride;
  const float* a2 = a1 + a_stride;
  const float* a3 = a2 + a_stride;
  for (size_t k = 0; k < depth; ++k) {
    const float* row = b + k * b_stride;
    const auto b0 = hn::LoadU(d, row), b1 = hn::LoadU(d, row + N);
    auto s = hn::Set(d, a[k]);
    y00 = hn::MulAdd(s, b0, y00);
    y01 = hn::MulAdd(s, b1, y01);
    s = hn::Set(d, a1[k]);
    y10 = hn::MulAdd(s, b0, y10);
    y11 = hn::MulAdd(s, b1, y11);
    s = hn::Set(d, a2[k]);
    y20 = hn::MulAdd(s, b0, y20);
    y21 = hn::MulAdd(s, b1, y21);
    s = hn::Set(d, a3[k]);
    y30 = hn::MulAdd(s, b0, y30);
    y31 = hn::MulAdd(s, b1, y31);
  }
  hn::StoreU(y00, d, y);
  hn::StoreU(y01, d, y + N);
  hn::StoreU(y10, d, y + y_stride);
  hn::StoreU(y11, d, y + y_stride + N);
  hn::StoreU(y20, d, y + 2 * y_stride);
  hn::StoreU(y21, d, y + 2 * y_stride + N);
  hn::StoreU(y30, d, y + 3 * y_stride);
  hn::StoreU(y31, d, y + 3 * y_stride + N);
}

template <class D>
HWY_INLINE void GemmRows4(D d, const float* HWY_RESTRICT a, size_t a_stride,
                          const float* HWY_RESTRICT b, size_t b_stride,
                          float* HWY_RESTRICT y, size_t y_stride, size_t depth) {
  auto y0 = hn::Zero(d), y1 = hn::Zero(d), y2 = hn::Zero(d), y3 = hn::Zero(d);
  for (size_t k = 0; k < depth; ++k) {
    const auto bk = hn::LoadU(d, b + k * b_stride);
    y0 = hn::MulAdd(hn::Set(d, a[k]), bk, y0);
    y1 = hn::MulAdd(hn::Set(d, a[a_stride + k]), bk, y1);
    y2 = hn::MulAdd(hn::Set(d, a[2 * a_stride + k]), bk, y2);
    y3 = hn::MulAdd(hn::Set(d, a[3 * a_stride + k]), bk, y3);
  }
  hn::StoreU(y0, d, y);
  hn::StoreU(y1, d, y + y_stride);
  hn::StoreU(y2, d, y + 2 * y_stride);
  hn::StoreU(y3, d, y + 3 * y_stride);
}

template <class D>
HWY_INLINE void GemmRow1(D d, const float* HWY_RESTRICT a, const float* HWY_RESTRICT b,
                         size_t b_stride, float* HWY_RESTRICT y, size_t depth) {
  auto acc = hn::Zero(d);
  for (size_t k = 0; k < depth; ++k) {
    acc = hn::MulAdd(hn::Set(d, a[k]), hn::LoadU(d, b + k * b_stride), acc);
  }
  hn::StoreU(acc, d, y);
}

// Columns [*j, n) in vectors of d while a whole one fits, for rows [0, m); advances *j.
template <class D>
HWY_INLINE void GemmColumns(D d, const float* HWY_RESTRICT a, size_t a_stride,
                            const float* HWY_RESTRICT b, size_t b_stride,
                            float* HWY_RESTRICT y, size_t y_stride, size_t m, size_t n,
                            size_t depth, size_t* j) {
  const size_t lanes = hn::Lanes(d), m4 = m - m % 4;
  for (; *j + lanes <= n; *j += lanes) {
    for (size_t i = 0; i < m4; i += 4) {
      GemmRows4(d, a + i * a_stride, a_stride, b + *j, b_stride, y + i * y_stride + *j,
                y_stride, depth);
    }
    for (size_t i = m4; i < m; ++i) {
      GemmRow1(d, a + i * a_stride, b + *j, b_stride, y + i * y_stride + *j, depth);
    }
  }
}

// Column tiles outer, rows inner: a tile of b (depth x 2 vectors) stays in cache while
// every row of a passes over it. Each y value is one chain of FMAs over k in order, the
// same whichever tile computes it.
inline void GemmNnF32(const float* HWY_RESTRICT a, size_t a_stride,
                      const float* HWY_RESTRICT b, size_t b_stride, float* HWY_RESTRICT y,
                      size_t y_stride, size_t m, size_t n, size_t depth) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d), m4 = m - m % 4;
  size_t j = 0;
  for (; j + 2 * N <= n; j += 2 * N) {
    for (size_t i = 0; i < m4; i += 4) {
      GemmRows4x2(a + i * a_stride, a_stride, b + j, b_stride, y + i * y_stride + j,
                  y_stride, depth);
    }
    for (size_t i = m4; i < m; ++i) {
      GemmRow1(d, a + i * a_stride, b + j, b_stride, y + i * y_stride + j, depth);
      GemmRow1(d, a + i * a_stride, b + j + N, b_stride, y + i * y_stride + j + N, depth);
    }
  }
  GemmColumns(d, a, a_stride, b, b_stride, y, y_stride, m, n, depth, &j);
  GemmColumns(hn::CappedTag<float, 8>(), a, a_stride, b, b_stride, y, y_stride, m, n,
              depth, &j);
  GemmColumns(hn::CappedTag<float, 4>(), a, a_stride, b, b_stride, y, y_stride, m, n,
              depth, &j);
  GemmColumns(hn::CappedTag<float, 1>(), a, a_stride, b, b_stride, y, y_stride, m, n,
              depth, &j);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_MATVEC_INL_H_
