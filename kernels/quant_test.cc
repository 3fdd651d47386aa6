// Tests the q8/q4 kernels and activation quantization of every compiled target (the
// portable Highway code) against the scalar reference; int8_paths_test.cc tests the
// hand-picked int8 paths (VNNI, vpmaddubsw, sdot, i8mm).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/quant_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/quant-inl.h"
#include "kernels/quant_test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

KernelTable TargetTable() {
  KernelTable table;
  FillQuant(&table);
  return table;
}

void TestQuantizeActs() { test::CheckQuantizeActs(TargetTable().quantize_acts, 1); }

void TestQ8Exact() {
  const KernelTable t = TargetTable();
  test::CheckQuantKernels(QuantKind::kQ8, t.matvec_q8, t.matmul_q8, /*exact=*/true, 10);
}
void TestQ4Exact() {
  const KernelTable t = TargetTable();
  test::CheckQuantKernels(QuantKind::kQ4, t.matvec_q4, t.matmul_q4, /*exact=*/true, 20);
}
void TestQ8Random() {
  const KernelTable t = TargetTable();
  test::CheckQuantKernels(QuantKind::kQ8, t.matvec_q8, t.matmul_q8, /*exact=*/false, 30);
}
void TestQ4Random() {
  const KernelTable t = TargetTable();
  test::CheckQuantKernels(QuantKind::kQ4, t.matvec_q4, t.matmul_q4, /*exact=*/false, 40);
}

void TestQ8FullRange() {
  const KernelTable t = TargetTable();
  test::CheckQ8FullRange(t.matvec_q8, t.matmul_q8, 70);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(QuantTest);
HWY_EXPORT_AND_TEST_P(QuantTest, TestQuantizeActs);
HWY_EXPORT_AND_TEST_P(QuantTest, TestQ8Exact);
HWY_EXPORT_AND_TEST_P(QuantTest, TestQ4Exact);
HWY_EXPORT_AND_TEST_P(QuantTest, TestQ8Random);
HWY_EXPORT_AND_TEST_P(QuantTest, TestQ4Random);
HWY_EXPORT_AND_TEST_P(QuantTest, TestQ8FullRange);
}  // namespace ember::kernels
#endif
