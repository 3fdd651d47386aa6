// Shared checks of a set of q8/q4 kernels (quantize_acts, matvec, matmul) against the
// scalar reference, used per Highway target (quant_test.cc) and for the table
// ChooseKernels() builds, sdot included (dotprod_arm_test.cc).
#ifndef EMBER_KERNELS_QUANT_TEST_UTIL_H_
#define EMBER_KERNELS_QUANT_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/aligned_allocator.h"
#include "kernels/half.h"
#include "kernels/kernel_table.h"
#include "kernels/quant_layout.h"
#include "kernels/quant_test_data.h"
#include "kernels/quantize/quant_pack.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

namespace ember::kernels::test {

// Quantized weights in a 64-byte aligned buffer, as the model file maps them.
inline hwy::AlignedFreeUniquePtr<uint8_t[]> PackForTest(QuantKind kind, const float* w,
                                                         size_t rows, size_t cols) {
  const size_t bytes = QuantPackedBytes(kind, rows, cols);
  auto packed = hwy::AllocateAligned<uint8_t>(bytes);
  PackQuant(kind, w, rows, cols, packed.get());
  return packed;
}

// One shape of the quantized-kernel checks: matmul(first_panel, y) writes the batch's
// rows from panel first_panel on into y (stride y_stride), matvec(b, out) token b alone
// (batch 1) into out; `expected` (the reference, at y_stride) must equal matmul's rows
// (bitwise when exact, else within abs_tol_per_col * cols), the stride's padding stays
// untouched, decode equals prefill bit for bit without writing past `rows`, and a second
// call on the rows from 16 on (a thread's share) gives the same bits.
template <class MatMul, class MatVec>
void CheckQuantShape(const MatMul& matmul, const MatVec& matvec,
                     const std::vector<float>& expected, size_t rows, size_t cols,
                     size_t batch, size_t y_stride, bool exact, float abs_tol_per_col,
                     uint32_t seed) {
  const float kSentinel = -12345.0f;
  Buffer y(batch * y_stride, (seed + 1) % 4, seed);
  for (size_t i = 0; i < batch * y_stride; ++i) y[i] = kSentinel;
  matmul(size_t{0}, y.data());
  for (size_t b = 0; b < batch; ++b) {
    const float* got = y.data() + b * y_stride;
    const float* want = expected.data() + b * y_stride;
    SCOPED_TRACE(testing::Message() << "rows " << rows << " cols " << cols << " batch "
                                    << batch << " token " << b);
    if (exact) {
      for (size_t r = 0; r < rows; ++r) ASSERT_EQ(got[r], want[r]) << "row " << r;
    } else {
      ExpectClose(got, want, rows, abs_tol_per_col * cols, 1e-5f, "matmul");
    }
    for (size_t r = rows; r < y_stride; ++r) ASSERT_EQ(got[r], kSentinel) << r;
    // Decode of the same token: the same bits, and nothing past `rows` written.
    Buffer single(rows + 1, b % 4, seed);
    single[rows] = kSentinel;
    matvec(b, single.data());
    for (size_t r = 0; r < rows; ++r) ASSERT_EQ(single[r], got[r]) << "decode row " << r;
    ASSERT_EQ(single[rows], kSentinel);
  }
  if (rows > kQuantPanelRows) {  // rows from 16 on, from the second panel
    std::vector<float> part(batch * y_stride, kSentinel);
    matmul(size_t{1}, part.data());
    for (size_t b = 0; b < batch; ++b) {
      for (size_t r = kQuantPanelRows; r < rows; ++r) {
        ASSERT_EQ(part[b * y_stride + r - kQuantPanelRows], y[b * y_stride + r])
            << "split at 16: row " << r << " token " << b;
      }
    }
  }
}

// Runs matvec (batch 1, per token) and matmul against the reference for every test
// shape (CheckQuantShape), with inputs quantized by the reference quantizer.
inline void CheckQuantKernels(QuantKind kind, MatMulQuantFn matvec, MatMulQuantFn matmul,
                              bool exact, uint32_t seed) {
  const bool q4 = kind == QuantKind::kQ4;
  for (size_t rows : QuantRows()) {
    for (size_t cols : QuantCols()) {
      const std::vector<float> wf = QuantTestMatrix(rows, cols, q4, exact, 7, seed++);
      const auto w = PackForTest(kind, wf.data(), rows, cols);
      const size_t groups = QuantGroups(cols), padded = groups * kQuantGroup;
      for (size_t batch : QuantBatches()) {
        const std::vector<float> x = QuantTestMatrix(batch, cols, false, exact, 5, seed++);
        std::vector<int8_t> xq_storage(batch * padded + 3);
        int8_t* xq = xq_storage.data() + seed % 4;  // misaligned
        Buffer xs(batch * groups, seed % 3 + 1, seed);
        std::vector<int32_t> sums(batch * groups);
        reference::QuantizeActs(x.data(), batch, cols, xq, xs.data(), sums.data());
        const size_t y_stride = rows + 3;
        std::vector<float> expected(batch * y_stride, -12345.0f);
        reference::MatMulQuant(kind, w.get(), xq, xs.data(), batch, expected.data(),
                               y_stride, rows, cols);
        CheckQuantShape(
            [&](size_t panel, float* y) {
              matmul(w.get() + panel * QuantPanelBytes(kind, cols), xq, xs.data(),
                     sums.data(), batch, y, y_stride, rows - panel * kQuantPanelRows,
                     cols);
            },
            [&](size_t b, float* out) {
              matvec(w.get(), xq + b * padded, xs.data() + b * groups,
                     sums.data() + b * groups, 1, out, rows, rows, cols);
            },
            expected, rows, cols, batch, y_stride, exact, 1e-6f, seed);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// A packed q8 (rows, cols) matrix whose products are exact (power-of-two scales) against
// `batch` exact activation rows (QuantTestMatrix with `seed`): matmul over the batch and
// matvec over each token equal the reference bitwise.
inline void ExpectQ8Exact(MatMulQuantFn matvec, MatMulQuantFn matmul, const uint8_t* w,
                          size_t rows, size_t cols, size_t batch, uint32_t seed) {
  const size_t groups = QuantGroups(cols), padded = groups * kQuantGroup;
  const std::vector<float> x = QuantTestMatrix(batch, cols, false, true, 5, seed);
  std::vector<int8_t> xq(batch * padded);
  std::vector<float> xs(batch * groups);
  std::vector<int32_t> sums(batch * groups);
  reference::QuantizeActs(x.data(), batch, cols, xq.data(), xs.data(), sums.data());
  std::vector<float> want(batch * rows), got(batch * rows), single(rows);
  reference::MatMulQuant(QuantKind::kQ8, w, xq.data(), xs.data(), batch, want.data(),
                         rows, rows, cols);
  matmul(w, xq.data(), xs.data(), sums.data(), batch, got.data(), rows, rows, cols);
  for (size_t b = 0; b < batch; ++b) {
    matvec(w, xq.data() + b * padded, xs.data() + b * groups, sums.data() + b * groups, 1,
           single.data(), rows, rows, cols);
    for (size_t r = 0; r < rows; ++r) {
      ASSERT_EQ(got[b * rows + r], want[b * rows + r])
          << "rows " << rows << " cols " << cols << " token " << b << " row " << r;
      ASSERT_EQ(single[r], want[b * rows + r]) << "decode row " << r;
    }
  }
}

// q8 weights over the whole int8 range, -128 in every group (imported files may hold it:
// PackQuantValues), with a power-of-two scale and exact activations: every kernel's
// result must equal the reference's bitwise, so -128 is as exact as any other value.
inline void CheckQ8FullRange(MatMulQuantFn matvec, MatMulQuantFn matmul, uint32_t seed) {
  for (size_t rows : QuantRows()) {
    for (size_t cols : QuantCols()) {
      std::mt19937 rng(seed++);
      const size_t groups = QuantGroups(cols);
      std::vector<int8_t> q(rows * cols);
      std::vector<uint16_t> scales(rows * groups);
      for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < cols; ++c) {
          q[r * cols + c] = static_cast<int8_t>(rng() % 256);
        }
        for (size_t g = 0; g < groups; ++g) {
          const size_t begin = g * kQuantGroup;
          const size_t n = cols - begin < kQuantGroup ? cols - begin : kQuantGroup;
          q[r * cols + begin + rng() % n] = -128;
          // One scale for all: every partial sum stays an integer below 2^24 units.
          scales[r * groups + g] = FloatToHalf(std::ldexp(1.0f, -7));
        }
      }
      auto w =
          hwy::AllocateAligned<uint8_t>(QuantPackedBytes(QuantKind::kQ8, rows, cols));
      PackQuantValues(QuantKind::kQ8, q.data(), scales.data(), rows, cols, w.get());
      ExpectQ8Exact(matvec, matmul, w.get(), rows, cols, 3, seed++);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// quantize_acts against the reference, bitwise: random rows of several magnitudes,
// exact ties (absmax 127 makes s = 1, so x = k + 0.5 is a tie), all-zero groups, tiny
// groups, and the zero padding of a partial last group.
inline void CheckQuantizeActs(QuantizeActsFn quantize, uint32_t seed) {
  for (size_t cols : {1, 5, 31, 32, 33, 64, 100, 288}) {
    for (size_t batch : {1, 2, 5}) {
      std::mt19937 rng(seed++);
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float> x(batch * cols);
      for (size_t b = 0; b < batch; ++b) {
        const float magnitude = std::ldexp(1.0f, static_cast<int>(b * 7) - 6);
        for (size_t i = 0; i < cols; ++i) x[b * cols + i] = magnitude * dist(rng);
      }
      if (cols >= 32) {
        // absmax 127: s = 1, and every x = k + 0.5 is a tie (to even: 2.5 -> 2).
        x[0] = 127.0f;
        for (size_t i = 1; i < 32; ++i) x[i] = static_cast<float>(static_cast<int>(i) - 16) + 0.5f;
      }
      if (cols > 64) {
        for (size_t i = 32; i < 64; ++i) x[i] = 0.0f;  // an all-zero group
      }
      if (batch > 1) {
        // Tiny but normal: armv7 NEON flushes subnormals to zero (not IEEE).
        for (size_t i = 0; i < cols && i < 32; ++i) x[cols + i] = 1e-30f * dist(rng);
      }
      const size_t groups = QuantGroups(cols), padded = groups * kQuantGroup;
      std::vector<int8_t> want_q(batch * padded), got_storage(batch * padded + 3, 0x55);
      int8_t* got_q = got_storage.data() + 1 + seed % 3;
      std::vector<float> want_s(batch * groups);
      Buffer got_s(batch * groups, seed % 4, seed);
      std::vector<int32_t> want_sum(batch * groups), got_sum(batch * groups, 777);
      std::vector<int32_t> want_half(batch * groups), got_half(batch * groups, 777);
      Buffer xin(batch * cols, seed % 4, seed);
      memcpy(xin.data(), x.data(), x.size() * sizeof(float));
      reference::QuantizeActs(x.data(), batch, cols, want_q.data(), want_s.data(),
                              want_sum.data(), want_half.data());
      // Without half sums, then with them: the same values.
      quantize(xin.data(), batch, cols, got_q, got_s.data(), got_sum.data(), nullptr);
      std::vector<int8_t> first_q(got_q, got_q + batch * padded);
      quantize(xin.data(), batch, cols, got_q, got_s.data(), got_sum.data(),
               got_half.data());
      ASSERT_EQ(0, memcmp(first_q.data(), got_q, first_q.size()));
      if (cols >= 32) {  // the reference itself rounds ties to even: x[i] = i - 15.5
        ASSERT_EQ(want_q[18], 2);    // 2.5
        ASSERT_EQ(want_q[13], -2);   // -2.5
        ASSERT_EQ(want_q[12], -4);   // -3.5
        ASSERT_EQ(want_q[16], 0);    // 0.5
        ASSERT_EQ(want_s[0], 1.0f);
      }
      for (size_t i = 0; i < batch * padded; ++i) {
        ASSERT_EQ(got_q[i], want_q[i]) << "q at " << i << " cols " << cols;
      }
      for (size_t i = 0; i < batch * groups; ++i) {
        uint32_t got_bits, want_bits;
        memcpy(&got_bits, &got_s[i], 4);
        memcpy(&want_bits, &want_s[i], 4);
        ASSERT_EQ(got_bits, want_bits) << "scale " << i << " cols " << cols;
        ASSERT_EQ(got_sum[i], want_sum[i]) << "sum " << i << " cols " << cols;
        ASSERT_EQ(got_half[i], want_half[i]) << "half sum " << i << " cols " << cols;
        int32_t half = 0;  // the reference's own half sums, from its q
        for (size_t k = 0; k < kQuantGroup / 2; ++k) half += want_q[i * kQuantGroup + k];
        ASSERT_EQ(want_half[i], half) << i;
      }
    }
  }
}

}  // namespace ember::kernels::test

#endif  // EMBER_KERNELS_QUANT_TEST_UTIL_H_
