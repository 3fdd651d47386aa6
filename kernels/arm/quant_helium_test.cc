// Tests the Helium (MVE) q8/q4 kernels against the scalar reference on the Cortex-M55: a
// bare-metal program, since there is no GoogleTest for arm-none-eabi. examples/mcu builds
// it into an image for qemu-system-arm's mps3-an547 (CTest: quant_helium_test, label
// kernel); it exits 0 when every check passed. The checks are quant_test_util.h's
// CheckQuantKernels (every shape of quant_test_data.h, exact inputs compared bitwise,
// random ones within tolerance, misaligned activations, padded output strides that must
// stay untouched, decode against prefill rows, a thread's share from row 16), plus
// scales that are subnormal halves, and that ChooseKernels() picks these kernels.
#include "kernels/arm/quant_helium.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/kernel_table.h"
#include "kernels/quant_layout.h"
#include "kernels/quant_test_data.h"
#include "kernels/quantize/quant_pack.h"
#include "kernels/reference.h"

namespace ember::kernels {
namespace {

int checks = 0, failures = 0;

// Counts a check; reports the first few failures.
bool Check(bool ok, const char* what, size_t rows, size_t cols, size_t batch, size_t at) {
  ++checks;
  if (!ok && ++failures <= 20) {
    printf("FAILED: %s (rows %u, cols %u, batch %u, at %u)\n", what,
           static_cast<unsigned>(rows), static_cast<unsigned>(cols),
           static_cast<unsigned>(batch), static_cast<unsigned>(at));
  }
  return ok;
}

bool SameBits(float a, float b) { return memcmp(&a, &b, sizeof(a)) == 0; }

// `bytes` of storage at a 64-byte aligned address, as the model file maps weights.
struct Aligned {
  explicit Aligned(size_t bytes) : storage(bytes + 64) {}
  uint8_t* get() {
    const uintptr_t p = reinterpret_cast<uintptr_t>(storage.data());
    return storage.data() + (64 - p % 64) % 64;
  }
  std::vector<uint8_t> storage;
};

// One shape: the kernel against the reference, for `batch` tokens of `x`.
void CheckShape(QuantKind kind, MatMulQuantFn matvec, MatMulQuantFn matmul,
                const std::vector<float>& wf, const std::vector<float>& x, size_t rows,
                size_t cols, size_t batch, bool exact, uint32_t seed) {
  const float kSentinel = -12345.0f;
  Aligned w(QuantPackedBytes(kind, rows, cols));
  PackQuant(kind, wf.data(), rows, cols, w.get());
  const size_t groups = QuantGroups(cols), padded = groups * kQuantGroup;
  std::vector<int8_t> xq_storage(batch * padded + 3);
  int8_t* xq = xq_storage.data() + seed % 4;  // misaligned
  std::vector<float> xs(batch * groups);
  std::vector<int32_t> sums(batch * groups);
  reference::QuantizeActs(x.data(), batch, cols, xq, xs.data(), sums.data());

  const size_t y_stride = rows + 3;
  std::vector<float> want(batch * y_stride, kSentinel);
  reference::MatMulQuant(kind, w.get(), xq, xs.data(), batch, want.data(), y_stride, rows,
                         cols);
  std::vector<float> got_storage(batch * y_stride + 3, kSentinel);
  float* got = got_storage.data() + seed % 4;
  matmul(w.get(), xq, xs.data(), sums.data(), batch, got, y_stride, rows, cols);
  std::vector<float> single(rows + 1);
  for (size_t b = 0; b < batch; ++b) {
    const float* g = got + b * y_stride;
    const float* e = want.data() + b * y_stride;
    for (size_t r = 0; r < rows; ++r) {
      const bool ok = exact ? SameBits(g[r], e[r])
                            : std::fabs(g[r] - e[r]) <= 1e-6f * static_cast<float>(cols) +
                                                            1e-5f * std::fabs(e[r]);
      Check(ok, exact ? "matmul equals the reference" : "matmul near the reference", rows,
            cols, batch, b * rows + r);
    }
    for (size_t r = rows; r < y_stride; ++r) {
      Check(g[r] == kSentinel, "padding untouched", rows, cols, batch, r);
    }
    // Decode of the same token: the same bits, nothing past `rows` written.
    single[rows] = kSentinel;
    matvec(w.get(), xq + b * padded, xs.data() + b * groups, sums.data() + b * groups, 1,
           single.data(), rows, rows, cols);
    for (size_t r = 0; r < rows; ++r) {
      Check(SameBits(single[r], g[r]), "decode row equals prefill row", rows, cols, batch,
            r);
    }
    Check(single[rows] == kSentinel, "decode writes `rows` rows", rows, cols, batch,
          rows);
  }
  if (rows > kQuantPanelRows) {  // a thread's share: rows from 16 on, from the 2nd panel
    std::vector<float> part(batch * y_stride, kSentinel);
    matmul(w.get() + QuantPanelBytes(kind, cols), xq, xs.data(), sums.data(), batch,
           part.data(), y_stride, rows - kQuantPanelRows, cols);
    for (size_t b = 0; b < batch; ++b) {
      for (size_t r = kQuantPanelRows; r < rows; ++r) {
        Check(SameBits(part[b * y_stride + r - kQuantPanelRows], got[b * y_stride + r]),
              "split at row 16", rows, cols, batch, r);
      }
    }
  }
}

void CheckKernels(QuantKind kind, MatMulQuantFn matvec, MatMulQuantFn matmul, bool exact,
                  uint32_t seed) {
  const bool q4 = kind == QuantKind::kQ4;
  for (size_t rows : test::QuantRows()) {
    for (size_t cols : test::QuantCols()) {
      const std::vector<float> wf =
          test::QuantTestMatrix(rows, cols, q4, exact, 7, seed++);
      for (size_t batch : test::QuantBatches()) {
        const std::vector<float> x =
            test::QuantTestMatrix(batch, cols, false, exact, 5, seed++);
        CheckShape(kind, matvec, matmul, wf, x, rows, cols, batch, exact, seed);
      }
    }
  }
}

// Weights around 2^-14: their f16 scales are subnormal halves, which the kernels widen
// to f32 with a vector conversion that must not flush them to zero.
void CheckSubnormalScales(QuantKind kind, MatMulQuantFn matvec, MatMulQuantFn matmul) {
  const size_t rows = 33, cols = 100, batch = 2;
  std::vector<float> wf = test::QuantTestMatrix(rows, cols, false, false, 0, 11);
  for (float& v : wf) v = std::ldexp(v, -14);
  Aligned w(QuantPackedBytes(kind, rows, cols));
  PackQuant(kind, wf.data(), rows, cols, w.get());
  const float scale = QuantScale(kind, w.get(), cols, 0, 0);
  Check(scale > 0.0f && scale < 6.1035156e-5f, "the test's scales are subnormal halves",
        rows, cols, batch, 0);
  const std::vector<float> x = test::QuantTestMatrix(batch, cols, false, false, 0, 12);
  CheckShape(kind, matvec, matmul, wf, x, rows, cols, batch, /*exact=*/false, 13);
}

}  // namespace
}  // namespace ember::kernels

int main() {
  using namespace ember::kernels;
  const KernelTable table = ChooseKernels();
  printf("[quant_helium_test] Highway target %s, int8 dot product %s\n", table.target,
         table.int8_dot);
  Check(strcmp(table.int8_dot, "helium") == 0, "ChooseKernels picks Helium", 0, 0, 0, 0);
  Check(table.matvec_q8 == &MatMulQ8Helium && table.matmul_q8 == &MatMulQ8Helium &&
            table.matvec_q4 == &MatMulQ4Helium && table.matmul_q4 == &MatMulQ4Helium,
        "the q8/q4 entries are the Helium kernels", 0, 0, 0, 0);
  CheckKernels(QuantKind::kQ8, table.matvec_q8, table.matmul_q8, /*exact=*/true, 1);
  CheckKernels(QuantKind::kQ8, table.matvec_q8, table.matmul_q8, /*exact=*/false, 2);
  CheckKernels(QuantKind::kQ4, table.matvec_q4, table.matmul_q4, /*exact=*/true, 3);
  CheckKernels(QuantKind::kQ4, table.matvec_q4, table.matmul_q4, /*exact=*/false, 4);
  CheckSubnormalScales(QuantKind::kQ8, table.matvec_q8, table.matmul_q8);
  CheckSubnormalScales(QuantKind::kQ4, table.matvec_q4, table.matmul_q4);
  printf("[quant_helium_test] %d checks, %d failed\n", checks, failures);
  fflush(stdout);
  return failures == 0 ? 0 : 1;
}
