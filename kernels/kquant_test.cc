// Tests the K-quant kernels of every compiled target (the portable Highway code, and
// AVX-512 VNNI on AVX3_DL) against the scalar reference.
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

// On AVX3_DL the VNNI kernels must equal the portable ones bitwise (same integer dots,
// same float operations).
void TestVnniMatchesPortable() {
#if HWY_TARGET == HWY_AVX3_DL
  const KernelTable t = KTable();
  test::CheckKQuantSame(KQuantKind::kQ4K, &MatMulKQuantPortable<KQuantKind::kQ4K>,
                        t.matmul_q4k, 70);
  test::CheckKQuantSame(KQuantKind::kQ5K, &MatMulKQuantPortable<KQuantKind::kQ5K>,
                        t.matmul_q5k, 80);
  test::CheckKQuantSame(KQuantKind::kQ6K, &MatMulKQuantPortable<KQuantKind::kQ6K>,
                        t.matmul_q6k, 90);
  test::CheckKQuantSame(KQuantKind::kQ6K, &MatMulKQuantPortable<KQuantKind::kQ6K>,
                        t.matvec_q6k, 100);
#endif
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_BEFORE_TEST(KQuantTest);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestQ4K);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestQ5K);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestQ6K);
HWY_EXPORT_AND_TEST_P(KQuantTest, TestVnniMatchesPortable);
}  // namespace ember::kernels
#endif
