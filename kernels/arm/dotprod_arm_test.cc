// Tests the q8/q4 and K-quant kernels ChooseKernels() picks for this CPU and ISA tier
// (EMBER_ISA): the Arm sdot kernels where the CPU has dotprod (under qemu: neoverse-n1),
// smmla for q8/q4 prefill where it also has i8mm (max), the Highway fallback where it
// has neither (cortex-a72), the x86 path of the tier. Each must equal the reference.
// tools/scripts/test.sh says per emulated CPU whether it has dotprod
// (EMBER_EXPECT_DOTPROD).
#include "kernels/arm/dotprod_arm.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gtest/gtest.h"
#include "kernels/kernel_table.h"
#include "kernels/kquant_test_util.h"
#include "kernels/quant_test_util.h"

namespace ember::kernels {
namespace {

TEST(Int8DotTest, ChoosesTheDotProductOfThisCpu) {
  const KernelTable table = ChooseKernels();
  printf("[ember] int8 dot product: %s (Highway target %s, ISA tier %s)\n",
         table.int8_dot, table.target, table.isa);
  // The best path the tier (EMBER_ISA, else this CPU's best) allows.
  const uint32_t int8 = DefaultIsa().int8;
  const char* want = (int8 & kInt8ArmI8mm)      ? "neon-i8mm"
                     : (int8 & kInt8ArmDotProd) ? "neon-sdot"
                     : (int8 & kInt8Avx512Vnni) ? "avx512-vnni"
                     : (int8 & kInt8AvxVnni)    ? "avx-vnni"
                     : (int8 & kInt8Avx512Bw)   ? "avx512bw"
                     : (int8 & kInt8Avx2)       ? "avx2"
                                                : "highway";
  EXPECT_STREQ(table.int8_dot, want);
  const char* expected = getenv("EMBER_EXPECT_DOTPROD");
  if (expected != nullptr && *expected != '\0') {
    EXPECT_EQ(strncmp(table.int8_dot, "neon-", 5) == 0, atoi(expected) == 1)
        << "EMBER_EXPECT_DOTPROD=" << expected;
  }
  KernelTable copy;
  EXPECT_EQ(FillDotProdKernels(&copy, CpuInt8Features()), HasArmDotProd());
  EXPECT_EQ(copy.matvec_q4k != nullptr, HasArmDotProd());  // the K-quants' too
}

TEST(Int8DotTest, ChosenQ8KernelsMatchTheReference) {
  const KernelTable t = ChooseKernels();
  test::CheckQuantKernels(QuantKind::kQ8, t.matvec_q8, t.matmul_q8, /*exact=*/true, 1);
  test::CheckQuantKernels(QuantKind::kQ8, t.matvec_q8, t.matmul_q8, /*exact=*/false, 2);
}

TEST(Int8DotTest, ChosenQ8KernelsAreExactForMinus128) {
  const KernelTable t = ChooseKernels();
  test::CheckQ8FullRange(t.matvec_q8, t.matmul_q8, 5);
}

TEST(Int8DotTest, ChosenQ4KernelsMatchTheReference) {
  const KernelTable t = ChooseKernels();
  test::CheckQuantKernels(QuantKind::kQ4, t.matvec_q4, t.matmul_q4, /*exact=*/true, 3);
  test::CheckQuantKernels(QuantKind::kQ4, t.matvec_q4, t.matmul_q4, /*exact=*/false, 4);
}

TEST(Int8DotTest, ChosenKQuantKernelsMatchTheReference) {
  const KernelTable t = ChooseKernels();
  const struct {
    KQuantKind kind;
    MatMulKQuantFn matvec, matmul;
  } kinds[] = {{KQuantKind::kQ4K, t.matvec_q4k, t.matmul_q4k},
               {KQuantKind::kQ5K, t.matvec_q5k, t.matmul_q5k},
               {KQuantKind::kQ6K, t.matvec_q6k, t.matmul_q6k}};
  uint32_t seed = 6;
  for (const auto& k : kinds) {
    ASSERT_NE(k.matvec, nullptr);
    ASSERT_NE(k.matmul, nullptr);
    test::CheckKQuantKernels(k.kind, k.matvec, k.matmul, /*exact=*/true, seed++);
    test::CheckKQuantKernels(k.kind, k.matvec, k.matmul, /*exact=*/false, seed++);
  }
}

TEST(Int8DotTest, EveryEntryIsFilled) {
  const KernelTable t = ChooseKernels();
  EXPECT_NE(t.quantize_acts, nullptr);
  EXPECT_NE(t.matvec_q8, nullptr);
  EXPECT_NE(t.matmul_q8, nullptr);
  EXPECT_NE(t.matvec_q4, nullptr);
  EXPECT_NE(t.matmul_q4, nullptr);
  EXPECT_NE(t.matvec_f16, nullptr);
  EXPECT_NE(t.matmul_f16, nullptr);
  EXPECT_NE(t.matvec_bf16, nullptr);
  EXPECT_NE(t.matmul_bf16, nullptr);
  test::CheckQuantizeActs(t.quantize_acts, 5);
}

}  // namespace
}  // namespace ember::kernels
