// Per-target matvec/matmul over dense 16-bit weights (f16 or bf16 bit patterns): each
// weight vector is widened to f32 (F16C's vcvtph2ps on x86 AVX2/AVX-512 targets) and
// multiplied with FMA. Same order per output as matvec-inl.h (one vector accumulator,
// a lane sum, then the remaining columns in order), so prefill and decode rows are
// bitwise identical.
#if defined(EMBER_KERNELS_MATVEC16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EMBER_KERNELS_MATVEC16_INL_H_
#undef EMBER_KERNELS_MATVEC16_INL_H_
#else
#define EMBER_KERNELS_MATVEC16_INL_H_
#endif

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/half.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The two formats: the Highway lane type the bits are loaded as, and the scalar
// conversion for the columns no whole vector covers.
struct F16Format {
  using Lane = hwy::float16_t;
  static float ToFloat(uint16_t bits) { return HalfToFloat(bits); }
};
struct BF16Format {
  using Lane = hwy::bfloat16_t;
  static float ToFloat(uint16_t bits) { return BFloat16ToFloat(bits); }
};

// Lanes(df) weights w[0, Lanes) as f32.
template <class Format, class DF>
HWY_INLINE hn::Vec<DF> LoadWide(DF df, const uint16_t* HWY_RESTRICT w) {
  const hn::Rebind<typename Format::Lane, DF> d16;
  return hn::PromoteTo(df, hn::LoadU(d16, reinterpret_cast<const typename Format::Lane*>(w)));
}

template <class Format>
HWY_INLINE float DotTail16(float sum, const uint16_t* HWY_RESTRICT w,
                           const float* HWY_RESTRICT x, size_t begin, size_t cols) {
  for (size_t c = begin; c < cols; ++c) sum += Format::ToFloat(w[c]) * x[c];
  return sum;
}

template <class Format>
HWY_INLINE float DotRow16(const uint16_t* HWY_RESTRICT w, const float* HWY_RESTRICT x,
                          size_t cols) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  auto acc = hn::Zero(d);
  for (size_t c = 0; c < body; c += N) {
    acc = hn::MulAdd(LoadWide<Format>(d, w + c), hn::LoadU(d, x + c), acc);
  }
  return DotTail16<Format>(ReduceSum(d, acc), w, x, body, cols);
}

// Eight rows times one vector (decode): eight weight streams share each load of x.
template <class Format>
HWY_INLINE void DotRows8x1(const uint16_t* HWY_RESTRICT w, size_t cols,
                           const float* HWY_RESTRICT x, float* HWY_RESTRICT y) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  const uint16_t* w0 = w;
  const uint16_t* w1 = w0 + cols;
  const uint16_t* w2 = w1 + cols;
  const uint16_t* w3 = w2 + cols;
  const uint16_t* w4 = w3 + cols;
  const uint16_t* w5 = w4 + cols;
  const uint16_t* w6 = w5 + cols;
  const uint16_t* w7 = w6 + cols;
  auto a0 = hn::Zero(d), a1 = hn::Zero(d), a2 = hn::Zero(d), a3 = hn::Zero(d);
  auto a4 = hn::Zero(d), a5 = hn::Zero(d), a6 = hn::Zero(d), a7 = hn::Zero(d);
  // The 8 rows are one contiguous block of 8 * cols weights and the next block follows:
  // short rows (768 columns: 1.5 KiB) are too short for the hardware prefetcher to
  // ramp up on 8 streams, so fetch the next block in step (8 N weights per iteration).
  const uint8_t* next = reinterpret_cast<const uint8_t*>(w + 8 * cols);
  for (size_t c = 0; c < body; c += N) {
    const uint8_t* ahead = next + c * 16;  // 8 rows x 2 bytes per column
    for (size_t line = 0; line < N * 16; line += 64) hwy::Prefetch(ahead + line);
    const auto xv = hn::LoadU(d, x + c);
    a0 = hn::MulAdd(LoadWide<Format>(d, w0 + c), xv, a0);
    a1 = hn::MulAdd(LoadWide<Format>(d, w1 + c), xv, a1);
    a2 = hn::MulAdd(LoadWide<Format>(d, w2 + c), xv, a2);
    a3 = hn::MulAdd(LoadWide<Format>(d, w3 + c), xv, a3);
    a4 = hn::MulAdd(LoadWide<Format>(d, w4 + c), xv, a4);
    a5 = hn::MulAdd(LoadWide<Format>(d, w5 + c), xv, a5);
    a6 = hn::MulAdd(LoadWide<Format>(d, w6 + c), xv, a6);
    a7 = hn::MulAdd(LoadWide<Format>(d, w7 + c), xv, a7);
  }
  y[0] = DotTail16<Format>(ReduceSum(d, a0), w0, x, body, cols);
  y[1] = DotTail16<Format>(ReduceSum(d, a1), w1, x, body, cols);
  y[2] = DotTail16<Format>(ReduceSum(d, a2), w2, x, body, cols);
  y[3] = DotTail16<Format>(ReduceSum(d, a3), w3, x, body, cols);
  y[4] = DotTail16<Format>(ReduceSum(d, a4), w4, x, body, cols);
  y[5] = DotTail16<Format>(ReduceSum(d, a5), w5, x, body, cols);
  y[6] = DotTail16<Format>(ReduceSum(d, a6), w6, x, body, cols);
  y[7] = DotTail16<Format>(ReduceSum(d, a7), w7, x, body, cols);
}

// Two rows times four vectors (prefill): each widened weight vector feeds four FMAs.
template <class Format>
HWY_INLINE void DotBlock2x4(const uint16_t* HWY_RESTRICT w, size_t cols,
                            const float* HWY_RESTRICT x, float* HWY_RESTRICT y,
                            size_t y_stride) {
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  const uint16_t* w0 = w;
  const uint16_t* w1 = w0 + cols;
  const float* x0 = x;
  const float* x1 = x0 + cols;
  const float* x2 = x1 + cols;
  const float* x3 = x2 + cols;
  auto a00 = hn::Zero(d), a01 = hn::Zero(d), a02 = hn::Zero(d), a03 = hn::Zero(d);
  auto a10 = hn::Zero(d), a11 = hn::Zero(d), a12 = hn::Zero(d), a13 = hn::Zero(d);
  for (size_t c = 0; c < body; c += N) {
    const auto v0 = hn::LoadU(d, x0 + c);
    const auto v1 = hn::LoadU(d, x1 + c);
    const auto v2 = hn::LoadU(d, x2 + c);
    const auto v3 = hn::LoadU(d, x3 + c);
    auto r = LoadWide<Format>(d, w0 + c);
    a00 = hn::MulAdd(r, v0, a00);
    a01 = hn::MulAdd(r, v1, a01);
    a02 = hn::MulAdd(r, v2, a02);
    a03 = hn::MulAdd(r, v3, a03);
    r = LoadWide<Format>(d, w1 + c);
    a10 = hn::MulAdd(r, v0, a10);
    a11 = hn::MulAdd(r, v1, a11);
    a12 = hn::MulAdd(r, v2, a12);
    a13 = hn::MulAdd(r, v3, a13);
  }
  y[0] = DotTail16<Format>(ReduceSum(d, a00), w0, x0, body, cols);
  y[y_stride] = DotTail16<Format>(ReduceSum(d, a01), w0, x1, body, cols);
  y[2 * y_stride] = DotTail16<Format>(ReduceSum(d, a02), w0, x2, body, cols);
  y[3 * y_stride] = DotTail16<Format>(ReduceSum(d, a03), w0, x3, body, cols);
  y[1] = DotTail16<Format>(ReduceSum(d, a10), w1, x0, body, cols);
  y[1 + y_stride] = DotTail16<Format>(ReduceSum(d, a11), w1, x1, body, cols);
  y[1 + 2 * y_stride] = DotTail16<Format>(ReduceSum(d, a12), w1, x2, body, cols);
  y[1 + 3 * y_stride] = DotTail16<Format>(ReduceSum(d, a13), w1, x3, body, cols);
}

template <class Format>
void MatVec16(const uint16_t* HWY_RESTRICT w, const float* HWY_RESTRICT x,
              float* HWY_RESTRICT y, size_t rows, size_t cols) {
  size_t r = 0;
  for (; r + 8 <= rows; r += 8) DotRows8x1<Format>(w + r * cols, cols, x, y + r);
  for (; r < rows; ++r) y[r] = DotRow16<Format>(w + r * cols, x, cols);
}

template <class Format>
void MatMul16(const uint16_t* HWY_RESTRICT w, const float* HWY_RESTRICT x, size_t batch,
              float* HWY_RESTRICT y, size_t y_stride, size_t rows, size_t cols) {
  // Blocks of 64 rows: their weights stay in L1/L2 while every token passes over them.
  constexpr size_t kRowBlock = 64;
  for (size_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    const size_t r1 = r0 + kRowBlock < rows ? r0 + kRowBlock : rows;
    size_t b = 0;
    for (; b + 4 <= batch; b += 4) {
      const float* xb = x + b * cols;
      float* yb = y + b * y_stride;
      size_t r = r0;
      for (; r + 2 <= r1; r += 2) DotBlock2x4<Format>(w + r * cols, cols, xb, yb + r, y_stride);
      for (; r < r1; ++r) {
        for (size_t i = 0; i < 4; ++i) {
          yb[i * y_stride + r] = DotRow16<Format>(w + r * cols, xb + i * cols, cols);
        }
      }
    }
    for (; b < batch; ++b) {
      MatVec16<Format>(w + r0 * cols, x + b * cols, y + b * y_stride + r0, r1 - r0, cols);
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // EMBER_KERNELS_MATVEC16_INL_H_
