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

#include "hwy/highway.h"
#include "kernels/half.h"
#include "kernels/matvec-inl.h"
#include "kernels/vec-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The two formats (matvec-inl.h's F32Format for 16-bit rows): the bits loaded as Highway
// lanes of type Lane and widened to f32 in registers, and the scalar conversion for the
// columns no whole vector covers.
template <typename Lane>
struct Rows16 {
  using T = uint16_t;
  template <class DF>
  static HWY_INLINE hn::Vec<DF> Load(DF df, const uint16_t* HWY_RESTRICT w) {
    const hn::Rebind<Lane, DF> d16;
    return hn::PromoteTo(df, hn::LoadU(d16, reinterpret_cast<const Lane*>(w)));
  }
};
struct F16Format : Rows16<hwy::float16_t> {
  static float ToFloat(uint16_t bits) { return HalfToFloat(bits); }
};
struct BF16Format : Rows16<hwy::bfloat16_t> {
  static float ToFloat(uint16_t bits) { return BFloat16ToFloat(bits); }
};

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
    auto r = Format::Load(d, w0 + c);
    a00 = hn::MulAdd(r, v0, a00);
    a01 = hn::MulAdd(r, v1, a01);
    a02 = hn::MulAdd(r, v2, a02);
    a03 = hn::MulAdd(r, v3, a03);
    r = Format::Load(d, w1 + c);
    a10 = hn::MulAdd(r, v0, a10);
    a11 = hn::MulAdd(r, v1, a11);
    a12 = hn::MulAdd(r, v2, a12);
    a13 = hn::MulAdd(r, v3, a13);
  }
  y[0] = DotTail<Format>(ReduceSum(d, a00), w0, x0, body, cols);
  y[y_stride] = DotTail<Format>(ReduceSum(d, a01), w0, x1, body, cols);
  y[2 * y_stride] = DotTail<Format>(ReduceSum(d, a02), w0, x2, body, cols);
  y[3 * y_stride] = DotTail<Format>(ReduceSum(d, a03), w0, x3, body, cols);
  y[1] = DotTail<Format>(ReduceSum(d, a10), w1, x0, body, cols);
  y[1 + y_stride] = DotTail<Format>(ReduceSum(d, a11), w1, x1, body, cols);
  y[1 + 2 * y_stride] = DotTail<Format>(ReduceSum(d, a12), w1, x2, body, cols);
  y[1 + 3 * y_stride] = DotTail<Format>(ReduceSum(d, a13), w1, x3, body, cols);
}

// Four rows times four vectors, where 32 vector registers hold the 16 accumulators, four
// inputs and a weight (AVX-512, AArch64's NEON and SVE): each widened weight vector feeds
// four FMAs and each input vector four, against two loads per FMA pair in DotBlock2x4.
// The same order per output.
template <class Format>
HWY_INLINE void DotBlock4x4(const uint16_t* HWY_RESTRICT w, size_t cols,
                            const float* HWY_RESTRICT x, float* HWY_RESTRICT y,
                            size_t y_stride) {
  // Named accumulators, not an array: SVE's vectors are sizeless and cannot be elements.
  const hn::ScalableTag<float> d;
  const size_t N = hn::Lanes(d);
  const size_t body = cols - cols % N;
  const uint16_t* w0 = w;
  const uint16_t* w1 = w0 + cols;
  const uint16_t* w2 = w1 + cols;
  const uint16_t* w3 = w2 + cols;
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
    auto r = Format::Load(d, w0 + c);
    a00 = hn::MulAdd(r, v0, a00);
    a01 = hn::MulAdd(r, v1, a01);
    a02 = hn::MulAdd(r, v2, a02);
    a03 = hn::MulAdd(r, v3, a03);
    r = Format::Load(d, w1 + c);
    a10 = hn::MulAdd(r, v0, a10);
    a11 = hn::MulAdd(r, v1, a11);
    a12 = hn::MulAdd(r, v2, a12);
    a13 = hn::MulAdd(r, v3, a13);
    r = Format::Load(d, w2 + c);
    a20 = hn::MulAdd(r, v0, a20);
    a21 = hn::MulAdd(r, v1, a21);
    a22 = hn::MulAdd(r, v2, a22);
    a23 = hn::MulAdd(r, v3, a23);
    r = Format::Load(d, w3 + c);
    a30 = hn::MulAdd(r, v0, a30);
    a31 = hn::MulAdd(r, v1, a31);
    a32 = hn::MulAdd(r, v2, a32);
    a33 = hn::MulAdd(r, v3, a33);
  }
  const size_t s = y_stride;
  y[0] = DotTail<Format>(ReduceSum(d, a00), w0, x0, body, cols);
  y[s] = DotTail<Format>(ReduceSum(d, a01), w0, x1, body, cols);
  y[2 * s] = DotTail<Format>(ReduceSum(d, a02), w0, x2, body, cols);
  y[3 * s] = DotTail<Format>(ReduceSum(d, a03), w0, x3, body, cols);
  y[1] = DotTail<Format>(ReduceSum(d, a10), w1, x0, body, cols);
  y[1 + s] = DotTail<Format>(ReduceSum(d, a11), w1, x1, body, cols);
  y[1 + 2 * s] = DotTail<Format>(ReduceSum(d, a12), w1, x2, body, cols);
  y[1 + 3 * s] = DotTail<Format>(ReduceSum(d, a13), w1, x3, body, cols);
  y[2] = DotTail<Format>(ReduceSum(d, a20), w2, x0, body, cols);
  y[2 + s] = DotTail<Format>(ReduceSum(d, a21), w2, x1, body, cols);
  y[2 + 2 * s] = DotTail<Format>(ReduceSum(d, a22), w2, x2, body, cols);
  y[2 + 3 * s] = DotTail<Format>(ReduceSum(d, a23), w2, x3, body, cols);
  y[3] = DotTail<Format>(ReduceSum(d, a30), w3, x0, body, cols);
  y[3 + s] = DotTail<Format>(ReduceSum(d, a31), w3, x1, body, cols);
  y[3 + 2 * s] = DotTail<Format>(ReduceSum(d, a32), w3, x2, body, cols);
  y[3 + 3 * s] = DotTail<Format>(ReduceSum(d, a33), w3, x3, body, cols);
}

// Whether this target has the 32 vector registers DotBlock4x4 needs (AVX-512; AArch64,
// not 32-bit Arm's 16 q registers).
constexpr bool kHas32VectorRegisters =
#if HWY_ARCH_X86
    HWY_TARGET <= HWY_AVX3;
#elif HWY_ARCH_ARM_A64
    HWY_TARGET != HWY_EMU128 && HWY_TARGET != HWY_SCALAR;
#else
    false;
#endif

template <class Format>
void MatVec16(const uint16_t* HWY_RESTRICT w, const float* HWY_RESTRICT x,
              float* HWY_RESTRICT y, size_t rows, size_t cols) {
  size_t r = 0;
  for (; r + 8 <= rows; r += 8) DotRows8<Format, true>(w + r * cols, cols, x, y + r);
  for (; r < rows; ++r) y[r] = DotRow<Format>(w + r * cols, x, cols);
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
      if (kHas32VectorRegisters) {
        for (; r + 4 <= r1; r += 4) {
          DotBlock4x4<Format>(w + r * cols, cols, xb, yb + r, y_stride);
        }
      }
      for (; r + 2 <= r1; r += 2) DotBlock2x4<Format>(w + r * cols, cols, xb, yb + r, y_stride);
      for (; r < r1; ++r) {
        for (size_t i = 0; i < 4; ++i) {
          yb[i * y_stride + r] = DotRow<Format>(w + r * cols, xb + i * cols, cols);
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
