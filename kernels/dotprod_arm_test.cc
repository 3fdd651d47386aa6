// Tests the q8/q4 and K-quant kernels ChooseKernels() picks for this CPU: the Arm sdot
// kernels where the CPU has dotprod (under qemu: neoverse-n1, max), the Highway fallback
// where it has not (cortex-a72), AVX-512 VNNI on AVX3_DL. Each must equal the reference.
// tools/scripts/test.sh says per emulated CPU whether it has dotprod
// (EMBER_EXPECT_DOTPROD).
#include "kernels/dotprod_arm.h"

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
  printf("[ember] int8 dot product: %s (Highway target %s)\n", table.int8_dot,
         table.target);
  if (HasArmDotProd()) {
    EXPECT_STREQ(table.int8_dot, "neon-sdot");
  } else if (strcmp(table.target, "AVX3_DL") == 0) {
    EXPECT_STREQ(table.int8_dot, "avx512-vnni");
  } else {
    EXPECT_STREQ(table.int8_dot, "highway");
  }
  const char* expected = getenv("EMBER_EXPECT_DOTPROD");
  if (expected != nullptr && *expected != '\0') {
    EXPECT_EQ(strcmp(table.int8_dot, "neon-sdot") == 0, atoi(expected) == 1)
        << "EMBER_EXPECT_DOTPROD=" << expected;
  }
  KernelTable copy;
  EXPECT_EQ(FillDotProdKernels(&copy), HasArmDotProd());
  EXPECT_EQ(FillDotProdKQuantKernels(&copy), HasArmDotProd());
}

TEST(Int8DotTest, ChosenQ8KernelsMatchTheReference) {
  const KernelTable t = ChooseKernels();
  test::CheckQuantKernels(QuantKind::kQ8, t.matvec_q8, t.matmul_q8, /*exact=*/true, 1);
  test::CheckQuantKernels(QuantKind::kQ8, t.matvec_q8, t.matmul_q8, /*exact=*/false, 2);
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
