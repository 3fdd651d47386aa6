// The ratio of two runs' tokens/s and whether it is beyond their noise (see
// bench_stats.h).
#include "tools/bench/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember::tools {
namespace {

double SortedMedian(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// sum(t^3 - t) over the groups t of equal values among x and y (both sorted), groups in
// ascending order.
double TieTerm(const std::vector<double>& x, const std::vector<double>& y) {
  double ties = 0;
  size_t i = 0, j = 0;
  while (i < x.size() || j < y.size()) {
    const double v = j == y.size() || (i < x.size() && x[i] < y[j]) ? x[i] : y[j];
    double t = 0;
    for (; i < x.size() && x[i] == v; ++i) t += 1;
    for (; j < y.size() && y[j] == v; ++j) t += 1;
    ties += t * t * t - t;
  }
  return ties;
}

// A double's bits as an unsigned key in the doubles' order (-0.0 just below +0.0), and
// back: negatives have their bits flipped, the rest their sign bit set.
uint64_t OrderedKey(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits >> 63 ? ~bits : bits | uint64_t{1} << 63;
}

double FromOrderedKey(uint64_t key) {
  const uint64_t bits = key >> 63 ? key & ~(uint64_t{1} << 63) : ~key;
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

// P(Z > z) for a standard normal Z.
double NormalTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// z with P(Z > z) = tail, by bisection (tail in (0, 0.5]).
double NormalQuantile(double tail) {
  double lo = 0, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (NormalTail(mid) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

std::vector<double> MannWhitneyCdf(size_t n, size_t m) {
  // f[j] = counts of U = 0 .. i*j over the orderings of i x's and j y's, for the row i
  // being built; the largest element is a y (adding i to U) or an x (adding nothing).
  std::vector<std::vector<double>> prev(m + 1, std::vector<double>{1.0}), row;
  for (size_t i = 1; i <= n; ++i) {
    row.assign(m + 1, {});
    row[0] = {1.0};
    for (size_t j = 1; j <= m; ++j) {
      std::vector<double>& f = row[j];
      f.assign(i * j + 1, 0.0);
      for (size_t u = 0; u < row[j - 1].size(); ++u) f[u + i] += row[j - 1][u];
      for (size_t u = 0; u < prev[j].size(); ++u) f[u] += prev[j][u];
    }
    prev.swap(row);
  }
  std::vector<double> cdf = prev[m];
  double total = 0;
  for (double c : cdf) total += c;
  double sum = 0;
  for (double& c : cdf) {
    sum += c;
    c = std::min(1.0, sum / total);
  }
  return cdf;
}

double MannWhitneyU(const std::vector<double>& x, const std::vector<double>& y) {
  // For each y_j (ascending): below = #{x_i < y_j}, up_to = #{x_i <= y_j}, both only
  // grow.
  double u = 0;
  size_t below = 0, up_to = 0;
  for (double v : y) {
    while (below < x.size() && x[below] < v) ++below;
    up_to = std::max(up_to, below);
    while (up_to < x.size() && x[up_to] <= v) ++up_to;
    u += static_cast<double>(below) + 0.5 * static_cast<double>(up_to - below);
  }
  return u;
}

double KthSmallestDifference(const std::vector<double>& x, const std::vector<double>& y,
                             uint64_t k) {
  // Selection in the implicit matrix D(i, j) = y_j - x_i, whose rows and columns are
  // sorted (rounded subtraction is monotonic in each operand), by bisection on the value:
  // count(t) = #{D <= t} is one O(n + m) walk, the boundary j of row i only moving right
  // as x_i grows. The bisection runs over the doubles' order-preserving 64-bit keys from
  // the smallest difference to the largest and stops, after at most 64 counts, on the
  // smallest key with count >= k: the bits of the k-th difference itself, what a sort of
  // all n * m would hold at k. Johnson and Mizoguchi's selection (weighted medians of the
  // rows' medians) or Monahan's (random pivots) take O(log(nm)) passes instead (log2 of
  // 200,000 x 200,000 is 35), each heavier; this one is a dozen lines, deterministic, and
  // bounded by the width of a double rather than by its pivots.
  const auto count_at_most = [&](double t) {
    uint64_t count = 0;
    size_t j = 0;
    for (double xi : x) {
      while (j < y.size() && y[j] - xi <= t) ++j;
      count += j;
    }
    return count;
  };
  uint64_t lo = OrderedKey(y.front() - x.back()), hi = OrderedKey(y.back() - x.front());
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (count_at_most(FromOrderedKey(mid)) >= k) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  // -0.0 counts as +0.0 and has the smaller key; the differences are never -0.0.
  return FromOrderedKey(lo) + 0.0;
}

RatioEstimate CompareSamples(const std::vector<double>& old_ts,
                             const std::vector<double>& new_ts, double alpha,
                             size_t exact_pairs) {
  RatioEstimate e;
  const size_t n = old_ts.size(), m = new_ts.size();
  if (n == 0 || m == 0) {
    e.can_decide = false;
    return e;
  }
  // Sorting each side serves the medians and the tie groups; its logarithms, sorted too
  // (std::log need not be monotonic to the last bit), serve U and the selections. The
  // n * m pairwise log-ratios log(new_j) - log(old_i) are never formed.
  std::vector<double> x = old_ts, y = new_ts;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  e.ratio = SortedMedian(y) / SortedMedian(x);
  std::vector<double> log_x(n), log_y(m);
  std::transform(x.begin(), x.end(), log_x.begin(), [](double v) { return std::log(v); });
  std::transform(y.begin(), y.end(), log_y.begin(), [](double v) { return std::log(v); });
  std::sort(log_x.begin(), log_x.end());
  std::sort(log_y.begin(), log_y.end());
  // U on the logarithms, as the pairwise log-ratios' signs count it.
  const double u = MannWhitneyU(log_x, log_y);
  const uint64_t pairs_count = static_cast<uint64_t>(n) * m;
  const double pairs = static_cast<double>(pairs_count);
  uint64_t c = 1;  // the interval's rank from each end
  if (pairs_count <= exact_pairs) {
    const std::vector<double> cdf = MannWhitneyCdf(n, m);
    // P(U <= u) and, by symmetry, P(U >= u) = P(U <= nm - u).
    const auto at_most = [&](double v) {
      return v < 0 ? 0.0 : cdf[std::min(cdf.size() - 1, static_cast<size_t>(v))];
    };
    e.p_value = std::min(1.0, 2 * std::min(at_most(u), at_most(pairs - u)));
    e.can_decide = 2 * cdf[0] < alpha;
    while (c + 1 <= pairs_count && cdf[c] <= alpha / 2) ++c;
    e.confidence = std::max(0.0, 1 - 2 * cdf[c - 1]);
  } else {
    // Normal approximation: mean nm/2, variance nm/12 ((N + 1) - sum(t^3 - t)/(N(N - 1)))
    // over the tie groups t of all N = n + m samples; continuity correction 1/2.
    const double ties = TieTerm(x, y);
    const double total = static_cast<double>(n + m);
    const double sd =
        std::sqrt(pairs / 12 * ((total + 1) - ties / (total * (total - 1))));
    const double z = std::max(0.0, std::fabs(u - pairs / 2) - 0.5) / sd;
    e.p_value = sd > 0 ? std::min(1.0, 2 * NormalTail(z)) : 1;
    const double rank = std::floor(pairs / 2 - NormalQuantile(alpha / 2) * sd);
    c = static_cast<uint64_t>(std::max(1.0, rank));
    e.confidence = 1 - alpha;
  }
  e.low = std::exp(KthSmallestDifference(log_x, log_y, c));
  e.high = std::exp(KthSmallestDifference(log_x, log_y, pairs_count + 1 - c));
  if (e.p_value < alpha) e.change = u > pairs / 2 ? 1 : -1;
  return e;
}

RatioEstimate CompareMeans(double old_mean, double old_sd, double new_mean, double new_sd,
                           double alpha) {
  RatioEstimate e;
  e.from_samples = false;
  e.ratio = new_mean / old_mean;
  const double a = old_sd / old_mean, b = new_sd / new_mean;
  const double sd = std::sqrt(a * a + b * b);  // of log(ratio), to first order
  e.low = e.high = e.ratio;
  if (!(sd > 0)) {
    e.can_decide = false;
    return e;
  }
  e.p_value = std::min(1.0, 2 * NormalTail(std::fabs(std::log(e.ratio)) / sd));
  const double z = NormalQuantile(alpha / 2);
  e.low = e.ratio * std::exp(-z * sd);
  e.high = e.ratio * std::exp(z * sd);
  e.confidence = 1 - alpha;
  if (e.p_value < alpha) e.change = e.ratio > 1 ? 1 : -1;
  return e;
}

}  // namespace ember::tools
