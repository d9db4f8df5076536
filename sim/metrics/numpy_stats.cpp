#include "sim/metrics/numpy_stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace pagesim::sim {
namespace {

constexpr std::size_t kPairwiseBlock = 128;  // numpy's PW_BLOCKSIZE

double pairwise(const double* a, std::size_t n) {
  if (n < 8) {
    double res = 0.;
    for (std::size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= kPairwiseBlock) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = a[j];
    std::size_t i = 8;
    for (; i < n - (n % 8); i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  std::size_t n2 = n / 2;
  n2 -= n2 % 8;
  return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

// Element k of the sorted full list: the sorted non-zero values with `zeros` zeros in place.
double order_statistic(const std::vector<double>& sorted, std::size_t negatives, std::int64_t zeros, std::size_t k) {
  if (k < negatives) return sorted[k];
  if (k < negatives + static_cast<std::size_t>(zeros)) return 0.0;
  return sorted[k - static_cast<std::size_t>(zeros)];
}

// np.percentile(list, p), 'linear', of a sorted list of n >= 1 elements read by at(k).
template <class At>
double percentile_of(std::size_t n, double p, At&& at) {
  const double q = p / 100;  // np.true_divide(q, 100)
  const double count = static_cast<double>(n);
  const double index = (count - 1) * q;
  if (index >= count - 1) return at(n - 1);
  if (index < 0) return at(0);
  const double previous = std::floor(index);
  const auto lo = static_cast<std::size_t>(previous);
  const double a = at(lo), b = at(lo + 1);
  const double t = index - previous;
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;  // _lerp
}

}  // namespace

double numpy_pairwise_sum(std::span<const double> values) { return 0.0 + pairwise(values.data(), values.size()); }

double numpy_percentile(std::span<const double> sorted, double p) {
  assert(!sorted.empty());
  return percentile_of(sorted.size(), p, [&](std::size_t k) { return sorted[k]; });
}

void SampleSet::merge(const SampleSet& other) {
  values_.insert(values_.end(), other.values_.begin(), other.values_.end());
  zeros_ += other.zeros_;
}

std::optional<StatSummary> SampleSet::summarize() const {
  const std::int64_t n = size();
  if (n == 0) return std::nullopt;
  std::vector<double> sorted = values_;
  std::sort(sorted.begin(), sorted.end());
  const auto negatives =
      static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), 0.0) - sorted.begin());
  auto at = [&](std::size_t k) { return order_statistic(sorted, negatives, zeros_, k); };
  auto percentile = [&](double p) { return percentile_of(static_cast<std::size_t>(n), p, at); };
  StatSummary s;
  s.mean = numpy_pairwise_sum(values_) / static_cast<double>(n);
  s.min = at(0);
  s.max = at(static_cast<std::size_t>(n - 1));
  s.p1 = percentile(1);
  s.p10 = percentile(10);
  s.median = percentile(50);
  s.p90 = percentile(90);
  s.p99 = percentile(99);
  return s;
}

}  // namespace pagesim::sim
