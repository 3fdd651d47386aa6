// Is NEW faster than OLD, or within the runs' own noise? The ratio of two runs' tokens/s
// with a distribution-free interval, from their per-repetition samples: the two-sided
// Mann-Whitney U test (exact for small samples) and the interval it implies for the
// ratio (Hodges-Lehmann, on the logarithms of the samples).
#ifndef EMBER_TOOLS_BENCH_BENCH_STATS_H_
#define EMBER_TOOLS_BENCH_BENCH_STATS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::tools {

struct RatioEstimate {
  double ratio = 1;  // NEW / OLD: median over median (mean over mean without samples)
  double low = 1, high = 1;  // the interval
  double confidence = 0;     // its coverage: 1 - alpha or more when the samples allow it
  double p_value = 1;        // two-sided, of "same speed"
  bool from_samples = true;  // false: only means and standard deviations were known
  bool can_decide = true;    // false: too few repetitions for any p below alpha
  int change = 0;            // +1 faster, -1 slower, 0 within noise (p >= alpha)
};

// P(U <= u) for u = 0 .. n*m under "same distribution", U = #{(i, j): y_j > x_i}, for
// samples of sizes n and m without ties (exact: counts of the orderings, from the
// recurrence f(n, m, u) = f(n, m - 1, u - n) + f(n - 1, m, u)).
std::vector<double> MannWhitneyCdf(size_t n, size_t m);

// Samples of this many pairs (n * m) or fewer use the exact distribution; larger ones the
// normal approximation with the tie correction (its error in p is below 0.01 there).
inline constexpr size_t kExactPairs = 2500;

// OLD and NEW tokens/s per repetition (positive). U counts ties as one half. The interval
// is [d(C), d(nm + 1 - C)] of the sorted pairwise ratios new_j / old_i, C the largest
// count with P(U <= C - 1) <= alpha / 2; with too few repetitions for that, the widest
// one (C = 1) and its lower coverage. change is the sign of U - nm/2 when p < alpha.
// O((n + m) log(n + m)) time and O(n + m) memory: the n * m ratios are never formed
// (MannWhitneyU, KthSmallestDifference on the logarithms).
RatioEstimate CompareSamples(const std::vector<double>& old_ts,
                             const std::vector<double>& new_ts, double alpha,
                             size_t exact_pairs = kExactPairs);

// U = #{(i, j): y_j > x_i} + #{(i, j): y_j = x_i} / 2 for x and y sorted ascending, by
// one merge: O(n + m).
double MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y);

// The k-th smallest (k = 1 .. n * m) of the n * m differences y_j - x_i as doubles
// compute them, for x and y sorted ascending and not empty, without forming them: at
// most 64 O(n + m) counts (a bisection over the doubles' bit patterns).
double KthSmallestDifference(const std::vector<double>& x, const std::vector<double>& y,
                             uint64_t k);

// Without samples: the ratio of the means; the log-ratio's spread from the two relative
// standard deviations (of single repetitions, so the test is conservative); p from the
// normal distribution; the interval +- z(1 - alpha/2) of that spread.
RatioEstimate CompareMeans(double old_mean, double old_sd, double new_mean, double new_sd,
                           double alpha);

}  // namespace ember::tools

#endif  // EMBER_TOOLS_BENCH_BENCH_STATS_H_
