// NumPy's statistics as numpy_stats.h reproduces them: np.percentile's 'linear' method
// (virtual index (n - 1) * p / 100, _lerp from the nearer end), np.sum's pairwise summation,
// and a SampleSet holding zeros as a count, whose percentiles equal those of the full list.
// Expected values are worked out by hand in the comments.
#include "sim/metrics/numpy_stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace pagesim::sim {
namespace {

TEST(NumpyStats, PercentileInterpolatesLinearly) {
  const std::vector<double> a = {1, 1, 3, 4, 5};  // sorted [3, 1, 4, 1, 5]; n - 1 = 4
  EXPECT_EQ(numpy_percentile(a, 0), 1);
  EXPECT_EQ(numpy_percentile(a, 1), 1);     // index 0.04: between 1 and 1
  EXPECT_EQ(numpy_percentile(a, 50), 3);    // index 2 exactly
  EXPECT_DOUBLE_EQ(numpy_percentile(a, 90), 4.6);   // index 3.6: 5 - (5 - 4) * 0.4
  EXPECT_DOUBLE_EQ(numpy_percentile(a, 99), 4.96);  // index 3.96
  EXPECT_DOUBLE_EQ(numpy_percentile(a, 10), 1);     // index 0.4
  EXPECT_DOUBLE_EQ(numpy_percentile(a, 30), 1.4);   // index 1.2: 1 + (3 - 1) * 0.2
  EXPECT_EQ(numpy_percentile(a, 100), 5);
  const std::vector<double> one = {7};
  EXPECT_EQ(numpy_percentile(one, 1), 7);
  EXPECT_EQ(numpy_percentile(one, 99), 7);
}

TEST(NumpyStats, PairwiseSumGroupsAsNumpyDoes) {
  // 17 values: 8 accumulators over the first 16, combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
  // then the 17th. r0 = 1e16 + 1 = 1e16 (a tie, to even), r1..r7 = 2: 1e16 + 14, + 2 = 1e16 + 16.
  // A left-to-right sum loses every 1: 1e16 + 2.
  std::vector<double> a(17, 1.0);
  a[0] = 1e16;
  a[16] = 2.0;
  EXPECT_EQ(numpy_pairwise_sum(a), 1e16 + 16);
  double sequential = 0;
  for (double v : a) sequential += v;
  EXPECT_EQ(sequential, 1e16 + 2);
  EXPECT_EQ(numpy_pairwise_sum(std::vector<double>{}), 0.0);
  EXPECT_EQ(numpy_pairwise_sum(std::vector<double>(1000, 0.5)), 500.0);
}

TEST(NumpyStats, SampleSetCountsZerosWithoutStoringThem) {
  SampleSet s;
  EXPECT_FALSE(s.summarize());
  s.add(3);
  s.add(0);
  s.add(1);
  s.add_zeros(2);  // the full list: [0, 0, 0, 1, 3]
  EXPECT_EQ(s.size(), 5);
  const StatSummary v = *s.summarize();
  EXPECT_DOUBLE_EQ(v.mean, 0.8);
  EXPECT_EQ(v.min, 0);
  EXPECT_EQ(v.max, 3);
  EXPECT_EQ(v.p1, 0);
  EXPECT_EQ(v.p10, 0);
  EXPECT_EQ(v.median, 0);             // index 2
  EXPECT_DOUBLE_EQ(v.p90, 2.2);       // index 3.6: 3 - (3 - 1) * 0.4
  EXPECT_DOUBLE_EQ(v.p99, 2.92);      // index 3.96
  // The same list given in full, in another order, through numpy_percentile.
  std::vector<double> full = {1, 0, 3, 0, 0};
  std::sort(full.begin(), full.end());
  for (double p : {1.0, 10.0, 50.0, 90.0, 99.0}) {
    const double expected = numpy_percentile(full, p);
    const double got = p == 1 ? v.p1 : p == 10 ? v.p10 : p == 50 ? v.median : p == 90 ? v.p90 : v.p99;
    EXPECT_EQ(got, expected) << p;
  }
}

TEST(NumpyStats, MergeAppendsValuesAndZeros) {
  SampleSet a, b;
  a.add(2);
  a.add_zeros(1);
  b.add(4);
  b.add_zeros(3);
  a.merge(b);
  EXPECT_EQ(a.size(), 6);
  const StatSummary v = *a.summarize();
  EXPECT_DOUBLE_EQ(v.mean, 1.0);
  EXPECT_EQ(v.max, 4);
  EXPECT_DOUBLE_EQ(v.p90, 3.0);  // [0, 0, 0, 0, 2, 4], index 4.5: 4 - (4 - 2) * 0.5
}

}  // namespace
}  // namespace pagesim::sim
