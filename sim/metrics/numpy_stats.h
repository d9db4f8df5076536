// NumPy's summary statistics, reproduced for the client metrics: np.mean (pairwise
// summation, then one division) and np.percentile with its default method 'linear'.
//
// Sources (numpy/lib/_function_base_impl.py, numpy >= 1.22): percentile divides q by 100
// (np.true_divide), the virtual index of 'linear' is (n - 1) * q, the neighbours are
// floor(index) and floor(index) + 1 (both the last element once index >= n - 1), and _lerp
// computes a + (b - a) * t, or b - (b - a) * (1 - t) when t >= 0.5. np.mean of float64 sums
// with pairwise_sum (numpy/_core/src/umath/loops_utils.h.src: blocks of at most 128 summed
// with 8 accumulators, larger ranges split at a multiple of 8 below the half) from an
// initial 0 and divides by the count.
//
// A SampleSet holds a multiset of doubles as its non-zero values plus a count of zeros (the
// client sees many messages arrive at once: millions of zero gaps need no storage). Its
// percentiles equal NumPy's on the full list in any order; its mean equals NumPy's on the
// list of its non-zero values in insertion order with the zeros left out (a sum of the same
// values, grouped differently, so equal up to rounding). Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "sim/output/record_fields.h"

namespace pagesim::sim {

// inference-perf's summarize() (reportgen/base.py:39-50) with the percentiles the measured
// runs report (p1, p10, median, p90, p99); key names as in its JSON.
struct StatSummary {
  double mean = 0, min = 0, p1 = 0, p10 = 0, median = 0, p90 = 0, p99 = 0, max = 0;
};

template <>
struct RecordFields<StatSummary> {
  using S = StatSummary;
  static constexpr auto fields = std::tuple{Field{"mean", &S::mean}, Field{"min", &S::min},   Field{"p1", &S::p1},
                                            Field{"p10", &S::p10},   Field{"median", &S::median}, Field{"p90", &S::p90},
                                            Field{"p99", &S::p99},   Field{"max", &S::max}};
};
static_assert(lists_every_member<StatSummary>());

// np.sum's pairwise summation of `values` (float64, contiguous), starting from 0.
double numpy_pairwise_sum(std::span<const double> values);

// np.percentile(sorted, p) for p in [0, 100]. REQUIRES: `sorted` non-empty and sorted.
double numpy_percentile(std::span<const double> sorted, double p);

class SampleSet {
 public:
  void add(double v) {
    if (v == 0) ++zeros_;
    else values_.push_back(v);
  }
  void add_zeros(std::int64_t n) { zeros_ += n; }
  // Appends every value of `other` (its values after this one's).
  void merge(const SampleSet& other);

  std::int64_t size() const { return static_cast<std::int64_t>(values_.size()) + zeros_; }

  // summarize(): nullopt when empty (inference-perf writes null then).
  std::optional<StatSummary> summarize() const;

 private:
  std::vector<double> values_;  // the non-zero values, in insertion order
  std::int64_t zeros_ = 0;
};

}  // namespace pagesim::sim
