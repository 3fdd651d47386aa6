// bench-compare's statistics: the exact Mann-Whitney distribution against a brute-force
// count of every ordering and the textbook value for 5 against 5; p-values, intervals
// and verdicts of separated, overlapping and too-small samples; the interval's coverage
// over many simulated runs with a known ratio; the normal approximation beside the exact
// distribution; the rule for files with means only; U and the k-th pairwise difference
// without the n * m pairs, against brute force and at 200,000 against 200,000.
#include "tools/bench/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace ember::tools {
namespace {

// P(U <= u) by listing every way to interleave n x's and m y's (bit masks of the y
// positions), U counting the (x, y) pairs with the y later (larger).
std::vector<double> BruteForceCdf(size_t n, size_t m) {
  std::vector<double> counts(n * m + 1, 0);
  double total = 0;
  for (uint32_t mask = 0; mask < (1u << (n + m)); ++mask) {
    if (static_cast<size_t>(__builtin_popcount(mask)) != m) continue;
    size_t u = 0, xs = 0;
    for (size_t pos = 0; pos < n + m; ++pos) {
      if (mask >> pos & 1) {
        u += xs;
      } else {
        ++xs;
      }
    }
    counts[u] += 1;
    total += 1;
  }
  double sum = 0;
  for (double& c : counts) c = (sum += c) / total;
  return counts;
}

TEST(BenchStatsTest, ExactDistributionCountsEveryOrdering) {
  for (size_t n = 1; n <= 7; ++n) {
    for (size_t m = 1; m <= 7; ++m) {
      const std::vector<double> got = MannWhitneyCdf(n, m), want = BruteForceCdf(n, m);
      ASSERT_EQ(got.size(), want.size());
      for (size_t u = 0; u < got.size(); ++u) {
        EXPECT_NEAR(got[u], want[u], 1e-12) << n << " x " << m << ", U <= " << u;
      }
    }
  }
  // 5 against 5: 252 orderings, 1, 1, 2, 3 of them with U = 0, 1, 2, 3.
  const std::vector<double> cdf = MannWhitneyCdf(5, 5);
  EXPECT_NEAR(cdf[0], 1.0 / 252, 1e-15);
  EXPECT_NEAR(cdf[2], 4.0 / 252, 1e-15);
  EXPECT_NEAR(cdf[3], 7.0 / 252, 1e-15);
  EXPECT_DOUBLE_EQ(cdf.back(), 1.0);
}

TEST(BenchStatsTest, SeparatedRunsAreAChange) {
  const std::vector<double> old_ts = {100, 101, 99, 100.5, 99.5};
  const std::vector<double> new_ts = {120, 121.2, 118.8, 120.6, 119.4};  // 1.2 x each
  const RatioEstimate e = CompareSamples(old_ts, new_ts, 0.05);
  EXPECT_DOUBLE_EQ(e.ratio, 1.2);  // medians 120 / 100
  EXPECT_NEAR(e.p_value, 2.0 / 252, 1e-12);
  EXPECT_EQ(e.change, 1);
  EXPECT_TRUE(e.can_decide);
  EXPECT_TRUE(e.from_samples);
  // C = 3 (P(U <= 2) = 4/252 <= 0.025 < P(U <= 3)): the 3rd smallest and 3rd largest of
  // the 25 ratios new_j / old_i; coverage 1 - 8/252.
  std::vector<double> ratios;
  for (double x : old_ts)
    for (double y : new_ts) ratios.push_back(y / x);
  std::sort(ratios.begin(), ratios.end());
  EXPECT_NEAR(e.low, ratios[2], 1e-12);
  EXPECT_NEAR(e.high, ratios[22], 1e-12);
  EXPECT_NEAR(e.confidence, 1 - 8.0 / 252, 1e-12);
  EXPECT_LT(e.low, 1.2);
  EXPECT_GT(e.high, 1.2);
  // And the other way round: slower, same p.
  const RatioEstimate back = CompareSamples(new_ts, old_ts, 0.05);
  EXPECT_EQ(back.change, -1);
  EXPECT_NEAR(back.p_value, e.p_value, 1e-12);
  EXPECT_NEAR(back.ratio, 1 / 1.2, 1e-12);
}

TEST(BenchStatsTest, OverlappingRunsAreWithinNoise) {
  const std::vector<double> old_ts = {100, 103, 97, 101, 99};
  const std::vector<double> new_ts = {101, 98, 104, 100, 99.5};  // shuffled, 0.5 % up
  const RatioEstimate e = CompareSamples(old_ts, new_ts, 0.05);
  EXPECT_EQ(e.change, 0);
  EXPECT_GT(e.p_value, 0.5);
  EXPECT_LT(e.low, 1);
  EXPECT_GT(e.high, 1);
  EXPECT_TRUE(e.can_decide);
}

TEST(BenchStatsTest, TwoRepetitionsCannotDecide) {
  // 2 against 2: the most extreme ordering has p = 2/6, never below 0.05.
  const RatioEstimate e = CompareSamples({100, 101}, {200, 201}, 0.05);
  EXPECT_FALSE(e.can_decide);
  EXPECT_EQ(e.change, 0);
  EXPECT_NEAR(e.p_value, 2.0 / 6, 1e-12);
  EXPECT_NEAR(e.confidence, 1 - 2.0 / 6, 1e-12);  // the widest interval: min and max
  EXPECT_NEAR(e.low, 200.0 / 101, 1e-12);
  EXPECT_NEAR(e.high, 201.0 / 100, 1e-12);
  // 4 against 4 can: 2/70 < 0.05.
  EXPECT_TRUE(CompareSamples({1, 1.1, 1.2, 1.3}, {2, 2.1, 2.2, 2.3}, 0.05).can_decide);
}

TEST(BenchStatsTest, IntervalCoversTheTrueRatio) {
  // Runs of 5 and 7 repetitions with lognormal noise (3 %) and a true ratio of 1.07:
  // the 95 % interval must hold 1.07 in about 95 % of 2000 simulated comparisons (at
  // least its stated coverage, within the simulation's own error).
  std::mt19937 rng(11);
  std::normal_distribution<double> noise(0, 0.03);
  int covered = 0, marked = 0;
  double stated = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(5), y(7);
    for (double& v : x) v = 100 * std::exp(noise(rng));
    for (double& v : y) v = 107 * std::exp(noise(rng));
    const RatioEstimate e = CompareSamples(x, y, 0.05);
    covered += e.low <= 1.07 && 1.07 <= e.high;
    marked += e.change == 1;
    stated = e.confidence;
  }
  EXPECT_GE(stated, 0.95);
  EXPECT_GE(covered, static_cast<int>(trials * (stated - 0.02)));  // ~4.5 sigma slack
  EXPECT_LE(covered, static_cast<int>(trials * std::min(1.0, stated + 0.02)));
  // A 7 % change against 3 % noise is found most of the time.
  EXPECT_GT(marked, trials * 0.8);
  // Same speed: marked in about alpha = 5 % of comparisons, not more.
  int false_alarms = 0;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> x(5), y(7);
    for (double& v : x) v = 100 * std::exp(noise(rng));
    for (double& v : y) v = 100 * std::exp(noise(rng));
    false_alarms += CompareSamples(x, y, 0.05).change != 0;
  }
  EXPECT_LE(false_alarms, trials * 0.05 + 4 * std::sqrt(trials * 0.05));
}

TEST(BenchStatsTest, NormalApproximationAgreesWithExactCounts) {
  // At the largest exact size (50 x 50) the approximation is close, for samples of
  // several separations.
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.02);
  for (double shift : {1.0, 1.004, 1.008, 1.02}) {
    std::vector<double> x(50), y(50);
    for (double& v : x) v = 100 * std::exp(noise(rng));
    for (double& v : y) v = 100 * shift * std::exp(noise(rng));
    const RatioEstimate exact = CompareSamples(x, y, 0.05);
    const RatioEstimate approx = CompareSamples(x, y, 0.05, /*exact_pairs=*/0);
    EXPECT_NEAR(approx.p_value, exact.p_value, 0.01) << shift;
    EXPECT_NEAR(approx.low, exact.low, 1e-3) << shift;
    EXPECT_NEAR(approx.high, exact.high, 1e-3) << shift;
    EXPECT_EQ(approx.change, exact.change) << shift << ": p " << exact.p_value;
  }
  // Ties (identical samples) count one half each: all equal is p = 1, no change.
  const RatioEstimate ties =
      CompareSamples(std::vector<double>(60, 5.0), std::vector<double>(60, 5.0), 0.05);
  EXPECT_EQ(ties.change, 0);
  EXPECT_DOUBLE_EQ(ties.ratio, 1);
}

// Samples of `n` values drawn from `levels` integers around zero (many ties, negatives,
// zeros) or, for levels 0, spread reals.
std::vector<double> Draw(std::mt19937* rng, size_t n, int levels) {
  std::vector<double> v(n);
  std::normal_distribution<double> spread(4, 3);
  for (double& x : v) {
    x = levels ? static_cast<double>(static_cast<int>((*rng)() % levels) - levels / 3)
               : spread(*rng);
  }
  std::sort(v.begin(), v.end());
  return v;
}

TEST(BenchStatsTest, SelectionAndUAgreeWithEveryPair) {
  // The reference forms and sorts all n * m differences; every rank must come out as the
  // very same double, and U as the count over every pair.
  std::mt19937 rng(17);
  for (int trial = 0; trial < 400; ++trial) {
    const bool large = trial % 40 == 0;
    const size_t n = 1 + rng() % (large ? 400 : 30), m = 1 + rng() % (large ? 300 : 30);
    const int levels = trial % 4 == 0 ? 0 : 1 + static_cast<int>(rng() % 12);
    const std::vector<double> x = Draw(&rng, n, levels), y = Draw(&rng, m, levels);
    std::vector<double> d;
    double u = 0;
    for (double xi : x) {
      for (double yj : y) {
        d.push_back(yj - xi);
        u += yj > xi ? 1 : yj == xi ? 0.5 : 0;
      }
    }
    std::sort(d.begin(), d.end());
    ASSERT_EQ(MannWhitneyU(x, y), u) << n << " x " << m << ", levels " << levels;
    const uint64_t step = large ? 997 : 1;  // every rank of the small ones
    for (uint64_t k = 1; k <= d.size(); k += step) {
      ASSERT_EQ(KthSmallestDifference(x, y, k), d[k - 1])
          << n << " x " << m << ", levels " << levels << ", k " << k;
    }
    ASSERT_EQ(KthSmallestDifference(x, y, d.size()), d.back());
  }
}

TEST(BenchStatsTest, TwoHundredThousandAgainstTwoHundredThousand) {
  // All-pairs would take 4e10 differences (320 GB). x = 0 .. N-1 and y = x: the
  // differences j - i take the value v in N - |v| pairs, so #{D <= v} = (N + v)(N + v +
  // 1) / 2 for v <= 0, the median is 0, and U = N^2 / 2 (the N ties count one half).
  const size_t kN = 200000;
  std::vector<double> x(kN);
  for (size_t i = 0; i < kN; ++i) x[i] = static_cast<double>(i);
  const std::vector<double>& y = x;
  const double n = kN;
  EXPECT_EQ(MannWhitneyU(x, y), n * n / 2);
  const uint64_t pairs = uint64_t{kN} * kN;
  EXPECT_EQ(KthSmallestDifference(x, y, pairs / 2), 0.0);  // the median
  EXPECT_EQ(KthSmallestDifference(x, y, 1), -(n - 1));
  EXPECT_EQ(KthSmallestDifference(x, y, pairs), n - 1);
  for (int64_t v : {-199999, -150000, -1000, -1, 0}) {
    const uint64_t at_most = (kN + v) * (kN + v + 1) / 2;  // #{D <= v}
    EXPECT_EQ(KthSmallestDifference(x, y, at_most), v) << v;
    EXPECT_EQ(KthSmallestDifference(x, y, at_most + 1), v + 1) << v;
  }
  // The whole comparison: NEW twice as fast as OLD at every repetition.
  std::vector<double> old_ts(kN), new_ts(kN);
  for (size_t i = 0; i < kN; ++i) {
    old_ts[i] = 100 + static_cast<double>((i * 7919) % kN) * 1e-4;  // 100 .. 120
    new_ts[i] = 2 * old_ts[i];
  }
  const RatioEstimate e = CompareSamples(old_ts, new_ts, 0.05);
  EXPECT_EQ(e.ratio, 2);
  EXPECT_LT(e.low, 2);
  EXPECT_GT(e.high, 2);
  EXPECT_GT(e.low, 1.99);
  EXPECT_LT(e.high, 2.01);
  EXPECT_EQ(e.p_value, 0);
  EXPECT_EQ(e.change, 1);
}

TEST(BenchStatsTest, MeansOnly) {
  // 1.2 x with 1 % spreads: far beyond; 1.005 x with 1 % spreads: within.
  const RatioEstimate far = CompareMeans(100, 1, 120, 1.2, 0.05);
  EXPECT_FALSE(far.from_samples);
  EXPECT_DOUBLE_EQ(far.ratio, 1.2);
  EXPECT_EQ(far.change, 1);
  EXPECT_LT(far.low, 1.2);
  EXPECT_GT(far.high, 1.2);
  const RatioEstimate near = CompareMeans(100, 1, 100.5, 1.005, 0.05);
  EXPECT_EQ(near.change, 0);
  EXPECT_GT(near.p_value, 0.5);
  // No spread recorded: nothing to decide with.
  const RatioEstimate none = CompareMeans(100, 0, 120, 0, 0.05);
  EXPECT_FALSE(none.can_decide);
  EXPECT_EQ(none.change, 0);
}

}  // namespace
}  // namespace ember::tools
