// The ratio of two runs' tokens/s and whether it is beyond their noise (see
// bench_stats.h).
#include "tools/bench/bench_stats.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ember::tools {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

RatioEstimate CompareSamples(const std::vector<double>& old_ts,
                             const std::vector<double>& new_ts, double alpha,
                             size_t exact_pairs) {
  RatioEstimate e;
  const size_t n = old_ts.size(), m = new_ts.size();
  if (n == 0 || m == 0) {
    e.can_decide = false;
    return e;
  }
  e.ratio = Median(new_ts) / Median(old_ts);
  std::vector<double> d;  // log(new_j / old_i), sorted
  d.reserve(n * m);
  double u = 0;
  for (double x : old_ts) {
    for (double y : new_ts) {
      d.push_back(std::log(y) - std::log(x));
      u += d.back() > 0 ? 1 : d.back() == 0 ? 0.5 : 0;
    }
  }
  std::sort(d.begin(), d.end());
  const double pairs = static_cast<double>(n * m);
  size_t c = 1;  // the interval's rank from each end
  if (n * m <= exact_pairs) {
    const std::vector<double> cdf = MannWhitneyCdf(n, m);
    // P(U <= u) and, by symmetry, P(U >= u) = P(U <= nm - u).
    const auto at_most = [&](double v) {
      return v < 0 ? 0.0 : cdf[std::min(cdf.size() - 1, static_cast<size_t>(v))];
    };
    e.p_value = std::min(1.0, 2 * std::min(at_most(u), at_most(pairs - u)));
    e.can_decide = 2 * cdf[0] < alpha;
    while (c + 1 <= n * m && cdf[c] <= alpha / 2) ++c;
    e.confidence = std::max(0.0, 1 - 2 * cdf[c - 1]);
  } else {
    // Normal approximation: mean nm/2, variance nm/12 ((N + 1) - sum(t^3 - t)/(N(N - 1)))
    // over the tie groups t of all N = n + m samples; continuity correction 1/2.
    std::map<double, double> counts;
    for (double x : old_ts) counts[x] += 1;
    for (double y : new_ts) counts[y] += 1;
    double ties = 0;
    for (const auto& kv : counts) ties += kv.second * kv.second * kv.second - kv.second;
    const double total = static_cast<double>(n + m);
    const double sd =
        std::sqrt(pairs / 12 * ((total + 1) - ties / (total * (total - 1))));
    const double z = std::max(0.0, std::fabs(u - pairs / 2) - 0.5) / sd;
    e.p_value = sd > 0 ? std::min(1.0, 2 * NormalTail(z)) : 1;
    const double rank = std::floor(pairs / 2 - NormalQuantile(alpha / 2) * sd);
    c = static_cast<size_t>(std::max(1.0, rank));
    e.confidence = 1 - alpha;
  }
  e.low = std::exp(d[c - 1]);
  e.high = std::exp(d[n * m - c]);
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
