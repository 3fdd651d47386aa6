// Tests the f32 matvec/matmul kernels on every compiled target against the reference,
// and that prefill (matmul) and decode (matvec) rows are bitwise identical.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/matvec_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/matvec-inl.h"
#include "kernels/reference.h"
#include "kernels/test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

void TestMatVecF32() {
  uint32_t seed = 1;
  for (size_t rows : {1, 3, 7, 8, 9, 17, 64}) {
    for (size_t cols : test::OddSizes()) {
      const size_t misalign = seed % 4;
      test::Buffer w(rows * cols, misalign, seed++);
      test::Buffer x(cols, (misalign + 1) % 4, seed++);
      test::Buffer y(rows, (misalign + 2) % 4, seed++);
      std::vector<float> expected(rows);
      reference::MatVecF32(w.data(), x.data(), expected.data(), rows, cols);
      MatVecF32(w.data(), x.data(), y.data(), rows, cols);
      test::ExpectClose(y.data(), expected.data(), rows, 1e-5f * cols, 1e-5f, "matvec");
    }
  }
}

void TestMatMulF32() {
  uint32_t seed = 100;
  for (size_t batch : {1, 2, 4, 5, 9}) {
    for (size_t rows : {1, 4, 6, 13, 17}) {
      for (size_t cols : test::OddSizes()) {
        const size_t y_stride = rows + 3;
        test::Buffer w(rows * cols, 1, seed++);
        test::Buffer x(batch * cols, 3, seed++);
        test::Buffer y(batch * y_stride, 2, seed++);
        std::vector<float> expected(batch * y_stride);
        reference::MatMulF32(w.data(), x.data(), batch, expected.data(), y_stride, rows,
                             cols);
        MatMulF32(w.data(), x.data(), batch, y.data(), y_stride, rows, cols);
        for (size_t b = 0; b < batch; ++b) {
          test::ExpectClose(y.data() + b * y_stride, expected.data() + b * y_stride, rows,
                            1e-5f * cols, 1e-5f, "matmul");
          // Decode of the same token must give the same bits as its prefill row.
          std::vector<float> single(rows);
          MatVecF32(w.data(), x.data() + b * cols, single.data(), rows, cols);
          for (size_t r = 0; r < rows; ++r) {
            ASSERT_EQ(single[r], y[b * y_stride + r]) << "row " << r << " token " << b;
          }
        }
      }
    }
  }
}

// Strided operands as attention passes them (a head's columns of wider rows): sizes
// around the lane counts and the 4-row tiles, against the reference; the columns past n
// in y's rows stay as they were.
void TestGemmNnF32() {
  uint32_t seed = 500;
  for (size_t m : {1, 3, 4, 5, 8, 13}) {
    for (size_t n : {1, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 72, 100}) {
      for (size_t depth : {1, 2, 7, 16, 72, 257}) {
        const size_t a_stride = depth + 5, b_stride = n + 3, y_stride = n + 6;
        test::Buffer a(m * a_stride, 1, seed++);
        test::Buffer b(depth * b_stride, 2, seed++);
        test::Buffer y(m * y_stride, 3, seed++);
        std::vector<float> expected(y.data(), y.data() + m * y_stride);
        reference::GemmNnF32(a.data(), a_stride, b.data(), b_stride, expected.data(),
                             y_stride, m, n, depth);
        GemmNnF32(a.data(), a_stride, b.data(), b_stride, y.data(), y_stride, m, n, depth);
        for (size_t i = 0; i < m; ++i) {
          test::ExpectClose(y.data() + i * y_stride, expected.data() + i * y_stride, n,
                            1e-5f * depth, 1e-5f, "gemm_nn");
          for (size_t j = n; j < y_stride && i + 1 < m; ++j) {
            ASSERT_EQ(y[i * y_stride + j], expected[i * y_stride + j])
                << "wrote past n: row " << i << " column " << j;
          }
        }
      }
    }
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(MatVecTest);
HWY_EXPORT_AND_TEST_P(MatVecTest, TestMatVecF32);
HWY_EXPORT_AND_TEST_P(MatVecTest, TestMatMulF32);
HWY_EXPORT_AND_TEST_P(MatVecTest, TestGemmNnF32);
}  // namespace ember::kernels
#endif
