// Shared checks of a set of K-quant kernels (matvec, matmul) against the scalar
// reference, used per Highway target (kquant_test.cc) and for the table ChooseKernels()
// builds, sdot included (dotprod_arm_test.cc).
#ifndef EMBER_KERNELS_KQUANT_TEST_UTIL_H_
#define EMBER_KERNELS_KQUANT_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/aligned_allocator.h"
#include "kernels/kernel_table.h"
#include "kernels/kquant_layout.h"
#include "kernels/quant_test_util.h"
#include "kernels/quantize/kquant_pack.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

namespace ember::kernels::test {

// Sized for the qemu stages: odd row counts around the panel of 16, one and three
// super-blocks, single tokens and batches that leave a remainder for every blocking.
inline std::vector<size_t> KQuantRows() { return {1, 15, 16, 17, 33, 70}; }
inline std::vector<size_t> KQuantCols() { return {256, 768}; }
inline std::vector<size_t> KQuantBatches() { return {1, 2, 7, 21}; }

// A packed (rows, cols) matrix of random super-blocks (full ranges of sc, m and q), in
// a 64-byte aligned buffer `offset` bytes in (a misaligned matrix when nonzero). Exact:
// d = 2^-8 and dmin = 2^-9, so that with small activations (KQuantActs) every product
// and partial sum in the kernels is exact. Otherwise d and dmin random in about
// [2^-9, 2^-7) with either sign.
inline hwy::AlignedFreeUniquePtr<uint8_t[]> RandomKQuant(KQuantKind kind, size_t rows,
                                                         size_t cols, bool exact,
                                                         uint32_t seed,
                                                         size_t offset = 0) {
  std::mt19937 rng(seed);
  auto packed =
      hwy::AllocateAligned<uint8_t>(KQuantPackedBytes(kind, rows, cols) + offset);
  memset(packed.get(), 0, KQuantPackedBytes(kind, rows, cols) + offset);
  const int qmax = kind == KQuantKind::kQ4K ? 15 : kind == KQuantKind::kQ5K ? 31 : 63;
  KQuantBlockValues b;
  for (size_t r = 0; r < rows; ++r) {
    for (size_t s = 0; s < cols / kKQuantBlock; ++s) {
      b.d = exact ? 0x1C00
                  : static_cast<uint16_t>(0x1800 + rng() % 0x800 + (rng() % 2) * 0x8000);
      b.dmin = exact ? 0x1800 : static_cast<uint16_t>(0x1800 + rng() % 0x800);
      for (int k = 0; k < 16; ++k) {
        b.scales[k] = static_cast<int16_t>(kind == KQuantKind::kQ6K
                                               ? static_cast<int>(rng() % 256) - 128
                                               : static_cast<int>(rng() % 64));
      }
      for (uint8_t& m : b.mins) m = static_cast<uint8_t>(rng() % 64);
      for (uint8_t& q : b.q) q = static_cast<uint8_t>(rng() % (qmax + 1));
      PutKQuantBlock(kind, b, cols, r, s, packed.get() + offset);
    }
  }
  return packed;
}

// Quantized activations of `batch` tokens: exact: q in [-3, 3] with scales 2^-5 (see
// RandomKQuant); otherwise QuantizeActs of uniform values in [-1, 1]. Sums and half sums
// as QuantizeActsFn writes them. `misalign` bytes into the q storage.
struct KQuantActs {
  std::vector<int8_t> storage;
  int8_t* q = nullptr;
  std::vector<float> scales;
  std::vector<int32_t> sums, half_sums;

  KQuantActs(size_t batch, size_t cols, bool exact, uint32_t seed, size_t misalign)
      : storage(batch * cols + 4),
        scales(batch * cols / 32),
        sums(batch * cols / 32),
        half_sums(batch * cols / 32) {
    q = storage.data() + misalign;
    std::mt19937 rng(seed);
    if (exact) {
      for (size_t i = 0; i < batch * cols; ++i)
        q[i] = static_cast<int8_t>(static_cast<int>(rng() % 7) - 3);
      for (size_t g = 0; g < scales.size(); ++g) {
        scales[g] = 1.0f / 32;
        sums[g] = half_sums[g] = 0;
        for (size_t i = 0; i < 32; ++i) {
          sums[g] += q[32 * g + i];
          if (i < 16) half_sums[g] += q[32 * g + i];
        }
      }
      return;
    }
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(batch * cols);
    for (float& v : x) v = dist(rng);
    reference::QuantizeActs(x.data(), batch, cols, q, scales.data(), sums.data(),
                            half_sums.data());
  }
};

// Runs matvec (per token) and matmul against the reference for every test shape
// (CheckQuantShape), one matrix misaligned.
inline void CheckKQuantKernels(KQuantKind kind, MatMulKQuantFn matvec,
                               MatMulKQuantFn matmul, bool exact, uint32_t seed) {
  for (size_t rows : KQuantRows()) {
    for (size_t cols : KQuantCols()) {
      const size_t offset = rows == 17 ? 4 : 0;  // one misaligned matrix
      const auto storage = RandomKQuant(kind, rows, cols, exact, seed++, offset);
      const uint8_t* w = storage.get() + offset;
      const size_t groups = cols / 32;
      for (size_t batch : KQuantBatches()) {
        const uint32_t acts_seed = seed++;
        const KQuantActs x(batch, cols, exact, acts_seed, acts_seed % 4);
        const size_t y_stride = rows + 3;
        std::vector<float> expected(batch * y_stride, -12345.0f);
        reference::MatMulKQuant(kind, w, x.q, x.scales.data(), batch, expected.data(),
                                y_stride, rows, cols);
        CheckQuantShape(
            [&](size_t panel, float* y) {
              matmul(w + panel * KQuantPanelBytes(kind, cols), x.q, x.scales.data(),
                     x.sums.data(), x.half_sums.data(), batch, y, y_stride,
                     rows - panel * kQuantPanelRows, cols);
            },
            [&](size_t b, float* out) {
              matvec(w, x.q + b * cols, x.scales.data() + b * groups,
                     x.sums.data() + b * groups, x.half_sums.data() + b * groups, 1, out,
                     rows, rows, cols);
            },
            expected, rows, cols, batch, y_stride, exact, 2e-5f, seed);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Two implementations of one MatMulKQuantFn contract give the same bits (random data).
inline void CheckKQuantSame(KQuantKind kind, MatMulKQuantFn a, MatMulKQuantFn b,
                            uint32_t seed) {
  for (size_t rows : {17, 70}) {
    const size_t cols = 768, batch = 5;
    const auto w = RandomKQuant(kind, rows, cols, false, seed++);
    const KQuantActs x(batch, cols, false, seed++, 1);
    std::vector<float> ya(batch * rows), yb(batch * rows);
    a(w.get(), x.q, x.scales.data(), x.sums.data(), x.half_sums.data(), batch, ya.data(),
      rows, rows, cols);
    b(w.get(), x.q, x.scales.data(), x.sums.data(), x.half_sums.data(), batch, yb.data(),
      rows, rows, cols);
    ASSERT_EQ(0, memcmp(ya.data(), yb.data(), ya.size() * sizeof(float)))
        << "rows " << rows;
  }
}

}  // namespace ember::kernels::test

#endif  // EMBER_KERNELS_KQUANT_TEST_UTIL_H_
