// Tests every int8 path of this build (x86: AVX2, AVX-VNNI, AVX-512BW, AVX-512 VNNI; Arm:
// sdot, i8mm), q8/q4 and K-quants, against the scalar reference wherever the CPU runs
// it: exact and random inputs over odd shapes, misaligned activations and outputs, q8's
// -128, decode against prefill, and every path bitwise against every other one and the
// portable Highway kernels (they all take the same integer dots and float steps). A path
// the CPU lacks is skipped, saying so.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "hwy/targets.h"
#include "kernels/arm/dotprod_arm.h"
#include "kernels/isa.h"
#include "kernels/kernel_table.h"
#include "kernels/kquant_test_util.h"
#include "kernels/quant_test_util.h"
#include "kernels/x86/quant_x86.h"

namespace ember::kernels {
namespace {

struct Path {
  Int8Feature feature;
  const char* cpu_name;  // for the skip message
};

constexpr Path kPaths[] = {
    {kInt8Avx2, "AVX2"},          {kInt8AvxVnni, "AVX-VNNI"},
    {kInt8Avx512Bw, "AVX-512BW"}, {kInt8Avx512Vnni, "AVX-512 VNNI"},
    {kInt8ArmDotProd, "dotprod"}, {kInt8ArmI8mm, "i8mm"},
};

bool PathKernels(Int8Feature feature, Int8Kernels* k) {
  return X86Int8Kernels(feature, k) || ArmInt8Kernels(feature, k);
}

// The paths this build has (x86's or Arm's).
std::vector<Path> BuiltPaths() {
  std::vector<Path> paths;
  for (const Path& path : kPaths) {
    Int8Kernels k;
    if (PathKernels(path.feature, &k)) paths.push_back(path);
  }
  return paths;
}

class Int8PathTest : public testing::TestWithParam<Path> {
 protected:
  // The path's kernels, or false (the caller skips) when the CPU lacks them.
  bool Get(Int8Kernels* k) {
    const Path& path = GetParam();
    if (!PathKernels(path.feature, k)) return false;
    if ((CpuInt8Features() & path.feature) == 0) {
      printf("[ember] int8 path %s: this CPU lacks %s, NOT TESTED\n", k->name,
             path.cpu_name);
      return false;
    }
    printf("[ember] int8 path %s: tested\n", k->name);
    return true;
  }
};

TEST_P(Int8PathTest, MatchesTheReference) {
  Int8Kernels k;
  if (!Get(&k)) GTEST_SKIP() << "this CPU lacks " << GetParam().cpu_name;
  test::CheckQuantKernels(QuantKind::kQ8, k.matvec_q8, k.matmul_q8, /*exact=*/true, 11);
  test::CheckQuantKernels(QuantKind::kQ4, k.matvec_q4, k.matmul_q4, /*exact=*/true, 12);
  test::CheckQuantKernels(QuantKind::kQ8, k.matvec_q8, k.matmul_q8, /*exact=*/false, 13);
  test::CheckQuantKernels(QuantKind::kQ4, k.matvec_q4, k.matmul_q4, /*exact=*/false, 14);
}

// The K-quant kernels ({kind, matvec, matmul}) of a set of kernels.
struct KQuantEntry {
  KQuantKind kind;
  MatMulKQuantFn matvec, matmul;
};
template <class Kernels>
std::vector<KQuantEntry> KQuants(const Kernels& k) {
  return {{KQuantKind::kQ4K, k.matvec_q4k, k.matmul_q4k},
          {KQuantKind::kQ5K, k.matvec_q5k, k.matmul_q5k},
          {KQuantKind::kQ6K, k.matvec_q6k, k.matmul_q6k}};
}

TEST_P(Int8PathTest, KQuantsMatchTheReference) {
  Int8Kernels k;
  if (!Get(&k)) GTEST_SKIP() << "this CPU lacks " << GetParam().cpu_name;
  uint32_t seed = 15;
  for (const KQuantEntry& e : KQuants(k)) {
    ASSERT_NE(e.matvec, nullptr);
    ASSERT_NE(e.matmul, nullptr);
    test::CheckKQuantKernels(e.kind, e.matvec, e.matmul, /*exact=*/true, seed++);
    test::CheckKQuantKernels(e.kind, e.matvec, e.matmul, /*exact=*/false, seed++);
  }
}

// q8 weights of -128 (an imported Q8_0 may hold them; the vpmaddubsw paths take |q| =
// 128) next to +-127, with exact activations (integers with a +-127 in every group, so
// the activation scales are powers of two): every product and sum is exact, so the
// result must equal the reference bitwise.
TEST_P(Int8PathTest, Q8ExtremesAreExact) {
  Int8Kernels k;
  if (!Get(&k)) GTEST_SKIP() << "this CPU lacks " << GetParam().cpu_name;
  for (size_t rows : {16, 33}) {
    for (size_t cols : {32, 100}) {
      std::vector<float> wf = test::QuantTestMatrix(rows, cols, false, true, 7, 21);
      const auto w = test::PackForTest(QuantKind::kQ8, wf.data(), rows, cols);
      // Every third value byte of every group 0 (q = -128), the rest +-127.
      const size_t groups = QuantGroups(cols);
      for (size_t p = 0; p < QuantPanels(rows); ++p) {
        for (size_t g = 0; g < groups; ++g) {
          uint8_t* values = w.get() + p * QuantPanelBytes(QuantKind::kQ8, cols) +
                            g * QuantGroupBytes(QuantKind::kQ8);
          for (size_t i = 0; i < QuantGroupValueBytes(QuantKind::kQ8); ++i) {
            values[i] = i % 3 == 0 ? 0 : (i % 3 == 1 ? 255 : 1);
          }
        }
      }
      test::ExpectQ8Exact(k.matvec_q8, k.matmul_q8, w.get(), rows, cols, 5, 22);
      if (HasFatalFailure()) return;
    }
  }
}

// Every other path the CPU runs, decode against this path's prefill: bitwise equal.
TEST_P(Int8PathTest, BitwiseEqualToEveryOtherPath) {
  Int8Kernels k;
  if (!Get(&k)) GTEST_SKIP() << "this CPU lacks " << GetParam().cpu_name;
  for (const Path& other : kPaths) {
    Int8Kernels o;
    if (other.feature == GetParam().feature || !PathKernels(other.feature, &o) ||
        (CpuInt8Features() & other.feature) == 0) {
      continue;
    }
    SCOPED_TRACE(testing::Message() << k.name << " against " << o.name);
    test::CheckQuantKernels(QuantKind::kQ8, o.matvec_q8, k.matmul_q8, false, 31);
    test::CheckQuantKernels(QuantKind::kQ4, o.matvec_q4, k.matmul_q4, false, 32);
    const std::vector<KQuantEntry> ours = KQuants(k), theirs = KQuants(o);
    for (size_t i = 0; i < ours.size(); ++i) {
      test::CheckKQuantSame(ours[i].kind, theirs[i].matmul, ours[i].matmul, 33);
      test::CheckKQuantSame(ours[i].kind, theirs[i].matvec, ours[i].matmul, 34);
    }
  }
}

// The portable Highway kernels of every supported target with a fused multiply-add
// (the float step the paths take): this path's prefill equals their decode bitwise.
TEST_P(Int8PathTest, BitwiseEqualToPortableHighway) {
  Int8Kernels k;
  if (!Get(&k)) GTEST_SKIP() << "this CPU lacks " << GetParam().cpu_name;
  constexpr int64_t kFmaTargets = HWY_AVX2 | HWY_AVX3 | HWY_AVX3_DL | HWY_NEON | HWY_SVE |
                                  HWY_SVE2 | HWY_SVE_256 | HWY_SVE2_128;
  int tested = 0;
  for (int64_t t = hwy::SupportedTargets() & HWY_TARGETS & kFmaTargets; t != 0;
       t &= t - 1) {
    IsaChoice portable;
    portable.hwy_targets = t & -t;  // this target alone, no int8 path
    const KernelTable table = ChooseKernels(portable);
    ASSERT_STREQ(table.int8_dot, "highway");
    ASSERT_STREQ(table.target, hwy::TargetName(t & -t));
    SCOPED_TRACE(testing::Message() << k.name << " against Highway " << table.target);
    test::CheckQuantKernels(QuantKind::kQ8, table.matvec_q8, k.matmul_q8, false, 41);
    test::CheckQuantKernels(QuantKind::kQ4, table.matvec_q4, k.matmul_q4, false, 42);
    const std::vector<KQuantEntry> ours = KQuants(k), theirs = KQuants(table);
    for (size_t i = 0; i < ours.size(); ++i) {
      test::CheckKQuantSame(ours[i].kind, theirs[i].matmul, ours[i].matmul, 43);
      test::CheckKQuantSame(ours[i].kind, ours[i].matvec, theirs[i].matvec, 44);
    }
    ++tested;
  }
  EXPECT_GT(tested, 0) << "no FMA target to compare with";
}

// No int8 path in this build (armv7, other architectures): nothing to instantiate.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Int8PathTest);

// x86-64 and aarch64 builds have int8 paths to test; armv7 has none (its q8/q4 products
// are the portable Highway kernels, tested by quant_test), which this says rather than
// running no test at all.
TEST(Int8Paths, ThisBuildHasTheArchitecturesPaths) {
  const std::vector<Path> paths = BuiltPaths();
#if defined(__x86_64__) || defined(__aarch64__)
  EXPECT_FALSE(paths.empty());
#else
  EXPECT_TRUE(paths.empty());
  printf("[ember] int8 paths: none in this build (portable Highway kernels only)\n");
#endif
}
INSTANTIATE_TEST_SUITE_P(Paths, Int8PathTest, testing::ValuesIn(BuiltPaths()),
                         [](const testing::TestParamInfo<Path>& info) {
                           std::string name = info.param.cpu_name;
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace ember::kernels
