// LatencySamples: its distribution is bit for bit that of all values sorted in memory (the
// mean summed in ascending order, NumPy-linear p50/p90/p99, the max), whatever the batch size
// — one batch, a few, one value a batch — on latency-like values with ties and zeros; no file
// is touched below one batch; an empty set gives zeros.
#include "sim/metrics/latency_samples.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace pagesim::sim {
namespace {

// The figures from one sorted vector (what Metrics computed before the samples spilled).
Distribution sorted_in_memory(std::vector<double> v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  d.p50 = at(0.50);
  d.p90 = at(0.90);
  d.p99 = at(0.99);
  d.max = v.back();
  return d;
}

void expect_bitwise(const Distribution& got, const Distribution& want) {
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.mean), std::bit_cast<std::uint64_t>(want.mean)) << got.mean;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.p50), std::bit_cast<std::uint64_t>(want.p50)) << got.p50;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.p90), std::bit_cast<std::uint64_t>(want.p90)) << got.p90;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.p99), std::bit_cast<std::uint64_t>(want.p99)) << got.p99;
  EXPECT_EQ(std::bit_cast<std::uint64_t>(got.max), std::bit_cast<std::uint64_t>(want.max)) << got.max;
}

TEST(LatencySamples, SpilledRunsGiveTheInMemoryFiguresBitForBit) {
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> latency(-1.0, 1.5);
  // coarse: a few distinct values, so that runs of equal values cross windows and runs.
  for (const bool coarse : {false, true})
  for (const std::size_t n : {1, 2, 3, 101, 5000, 70000}) {
    std::vector<double> values(n);
    for (double& x : values) x = coarse ? std::round(latency(rng)) / 4 : latency(rng);
    for (std::size_t i = 0; i + 1 < n; i += 5) values[i] = values[i + 1];  // ties
    if (n > 10) values[n / 3] = 0.0;
    const Distribution want = sorted_in_memory(values);
    // Batches above the merge's window (4096 values) read each run a window at a time.
    for (const std::size_t batch : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{5000},
                                    std::size_t{9000}, std::size_t{30000}, n, n + 1, LatencySamples::kBatchValues}) {
      SCOPED_TRACE(std::string(coarse ? "coarse, " : "") + "n " + std::to_string(n) + ", batch " + std::to_string(batch));
      LatencySamples samples(batch);
      for (const double x : values) samples.add(x);
      EXPECT_EQ(samples.size(), static_cast<std::int64_t>(n));
      EXPECT_EQ(samples.spilled_runs(), n / batch);
      expect_bitwise(samples.distribution(), want);
      EXPECT_EQ(samples.size(), 0);  // consumed
    }
  }
}

// Samples sharing one file (a cluster's replicas: LatencySpill) interleave their runs in it
// and still give each its own figures bit for bit, also when one is read and filled again.
TEST(LatencySamples, SamplesSharingOneFileKeepTheirOwnFigures) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> latency(-1.0, 1.5);
  LatencySpill spill;
  std::vector<LatencySamples> samples;
  samples.reserve(5);
  for (const std::size_t batch : {1, 3, 64, 64, 1000}) samples.emplace_back(batch, &spill);
  std::vector<std::vector<double>> values(samples.size());
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 20000; ++i) {
      const std::size_t k = rng() % samples.size();
      const double x = latency(rng);
      samples[k].add(x);
      values[k].push_back(x);
    }
    for (std::size_t k = 0; k < samples.size(); ++k) {
      SCOPED_TRACE("sample " + std::to_string(k) + ", round " + std::to_string(round));
      EXPECT_GT(samples[k].spilled_runs(), 0u);
      expect_bitwise(samples[k].distribution(), sorted_in_memory(values[k]));
      values[k].clear();
    }
  }
}

TEST(LatencySamples, EmptyGivesZerosAndCanBeReused) {
  LatencySamples samples(3);
  expect_bitwise(samples.distribution(), Distribution{});
  for (const double x : {4.0, 1.0, 3.0, 2.0, 5.0}) samples.add(x);
  expect_bitwise(samples.distribution(), sorted_in_memory({4.0, 1.0, 3.0, 2.0, 5.0}));
  samples.add(9.0);
  expect_bitwise(samples.distribution(), sorted_in_memory({9.0}));
}

}  // namespace
}  // namespace pagesim::sim
