// Tests the K-quant kernels of every compiled target (the portable Highway code) against
// the scalar reference; int8_paths_test.cc tests the int8 paths' (x86, Arm sdot).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kquant_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "hwy/tests/hwy_gtest.h"
#include "kernels/kquant-inl.h"
#include "kernels/kquant_test_util.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {

KernelTable KTable() {
  KernelTable table;
  FillKQuant(&table);
  return table;
}

void TestQ4K() {
  const KernelTable t = KTable();
  test::CheckKQuantKernels(KQuantKind::kQ4K, t.matvec_q4k, t.matmul_q4k, true, 10);
  test::CheckKQuantKernels(KQuantKind::kQ4K, t.matvec_q4k, t.matmul_q4k, false, 20);
}
void TestQ5K() {
  const KernelTable t = KTable();
  test::CheckKQuantKernels(KQuantKind::kQ5K, t.matvec_q5k, t.matmul_q5k, true, 30);
  test::CheckKQuantKernels(KQuantKind::kQ5K, t.matvec_q5k, t.matmul_q5k, false, 40);
}
void TestQ6K() {
  const KernelTable t = KTable();
  test::CheckKQuantKernels(KQuantKind::kQ6K, t.matvec_q6k, t.matmul_q6k, true, 50);
  test::CheckKQuantKernels(KQuantKind::kQ6K, t.matvec_q6k, t.matmul_q6k, false, 60);
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(KQuantTest);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestQ4K);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestQ5K);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestQ6K);
}  // namespace ember::kernels
#endif
