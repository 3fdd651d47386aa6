// A bench speed's statistics and pooling (BenchSpeed, BenchSpeedPool in bench_records.h).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "tools/bench/bench_records.h"

namespace ember::tools {

BenchSpeed FromSamples(std::vector<double> samples) {
  BenchSpeed s;
  s.mean = MeanOf(samples);
  s.stddev = SampleStdDev(samples);
  s.samples = std::move(samples);
  return s;
}

void BenchSpeedPool::Add(const BenchSpeed& speed) {
  if (empty_) {
    speed_ = speed;
    empty_ = false;
  } else if (!speed_.samples.empty() && !speed.samples.empty()) {
    // Pool would take the mean and spread of all the samples: once, in Take().
    speed_.samples.insert(speed_.samples.end(), speed.samples.begin(),
                          speed.samples.end());
    unsettled_ = true;
  } else {
    Settle();
    speed_ = BenchSpeed::Pool(speed_, speed);
  }
}

void BenchSpeedPool::Settle() {
  if (!unsettled_) return;
  speed_.mean = MeanOf(speed_.samples);
  speed_.stddev = SampleStdDev(speed_.samples);
  unsettled_ = false;
}

BenchSpeed BenchSpeedPool::Take() {
  Settle();
  BenchSpeed speed = std::move(speed_);
  speed_ = BenchSpeed();
  empty_ = true;
  return speed;
}

double MeanOf(const std::vector<double>& v) {
  return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

double SampleStdDev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double mean = MeanOf(v);
  double sum = 0;
  for (double x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / (v.size() - 1));
}

double BenchSpeed::Min() const {
  return samples.empty() ? mean - stddev
                         : *std::min_element(samples.begin(), samples.end());
}

double BenchSpeed::Max() const {
  return samples.empty() ? mean + stddev
                         : *std::max_element(samples.begin(), samples.end());
}

double BenchSpeed::Median() const {
  if (samples.empty()) return mean;
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

BenchSpeed BenchSpeed::Pool(const BenchSpeed& a, const BenchSpeed& b) {
  if (!a.samples.empty() && !b.samples.empty()) {
    std::vector<double> all = a.samples;
    all.insert(all.end(), b.samples.begin(), b.samples.end());
    return FromSamples(std::move(all));
  }
  // Two means of unknown weight: their average, and a spread that holds both spreads
  // and the distance between the means.
  BenchSpeed s;
  s.mean = (a.mean + b.mean) / 2;
  const double d = (a.mean - b.mean) / 2;
  s.stddev = std::sqrt((a.stddev * a.stddev + b.stddev * b.stddev) / 2 + d * d);
  return s;
}

}  // namespace ember::tools
