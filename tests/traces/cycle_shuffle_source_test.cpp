#include "traces/cycle_shuffle_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "test_util.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

using testing::drain;

LengthTable three_rows() { return LengthTable{"three", {{1, 10}, {2, 20}, {3, 30}}, 3}; }

const ArrivalSpec kQuantum{.kind = ArrivalKind::kPoissonQuantum, .rate = 4.0, .quantum_s = 0.01};

TEST(CycleShuffleSource, CyclesTheTableToTheRequestCount) {
  CycleShuffleSource source(three_rows(), kQuantum, 1, 2, 0.0, 10);
  EXPECT_EQ(source.size(), 10u);
  const auto rows = drain(source);
  ASSERT_EQ(rows.size(), 10u);
  std::map<std::int64_t, int> counts;
  for (const auto& r : rows) {
    EXPECT_EQ(r.output_tokens, 10 * r.prompt_tokens);
    ++counts[r.prompt_tokens];
  }
  // 10 = 3 + 3 + 3 + 1: the first row once more than the others.
  EXPECT_EQ(counts, (std::map<std::int64_t, int>{{1, 4}, {2, 3}, {3, 3}}));
}

TEST(CycleShuffleSource, CountsArrivalsBeforeTheDurationAndEmitsThem) {
  const double duration = 300.0;
  CycleShuffleSource source(three_rows(), kQuantum, 7, 8, duration, 0);
  auto reference = make_arrival_process(kQuantum, 7);
  std::uint64_t expected = 0;
  std::vector<double> times;
  for (double t = reference->next(); t < duration; t = reference->next()) {
    times.push_back(t);
    ++expected;
  }
  EXPECT_EQ(source.size(), expected);
  const auto rows = drain(source);
  ASSERT_EQ(rows.size(), expected);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].id, i);
    EXPECT_EQ(rows[i].arrival_s, times[i]);
  }
  EXPECT_NEAR(static_cast<double>(expected), 1200.0, 5 * std::sqrt(1200.0));
}

TEST(CycleShuffleSource, MaxRequestsCapsTheDurationCount) {
  CycleShuffleSource source(three_rows(), kQuantum, 7, 8, 300.0, 50);
  EXPECT_EQ(source.size(), 50u);
}

TEST(CycleShuffleSource, ShuffleIsSeededAndActuallyShuffles) {
  LengthTable big{"big", {}, 1000};
  for (std::int64_t i = 1; i <= 1000; ++i) big.rows.push_back({i, 0});
  auto order = [&](std::uint64_t shuffle_seed) {
    CycleShuffleSource s(big, kQuantum, 1, shuffle_seed, 0.0, 1000);
    std::vector<std::int64_t> out;
    for (const auto& r : drain(s)) out.push_back(r.prompt_tokens);
    return out;
  };
  const auto a = order(5);
  EXPECT_EQ(a, order(5));
  EXPECT_NE(a, order(6));
  // A permutation of the 1000 rows, far from the file order.
  std::vector<std::int64_t> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(sorted[static_cast<std::size_t>(i)], i + 1);
  int fixed_points = 0;
  for (std::size_t i = 0; i < a.size(); ++i) fixed_points += a[i] == static_cast<std::int64_t>(i) + 1;
  EXPECT_LT(fixed_points, 10);
}

TEST(CycleShuffleSource, NeedsACountAndRows) {
  EXPECT_THROW(CycleShuffleSource(three_rows(), kQuantum, 1, 2, 0.0, 0), SpecError);
  EXPECT_THROW(CycleShuffleSource(LengthTable{"none", {}, 4}, kQuantum, 1, 2, 10.0, 0), SpecError);
}

// The cycled table holds a row index per request: a count past kMaxCycledRequests is a
// SpecError at once (the fuzzer's max_requests of 1e15 counted arrivals for hours), whether
// max_requests asks for it or the duration holds more arrivals.
TEST(CycleShuffleSource, RequestCountIsBounded) {
  try {
    CycleShuffleSource(three_rows(), kQuantum, 1, 2, 0.0, 1'000'000'222'222'222ULL);
    ADD_FAILURE() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "max_requests");
  }
  const ArrivalSpec fast{.kind = ArrivalKind::kPoisson, .rate = 1e9};
  try {
    CycleShuffleSource(three_rows(), fast, 1, 2, 1.0, 0);
    ADD_FAILURE() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.field(), "duration_s");
  }
}

TEST(CycleShuffleSource, DescribeMentionsTheTableAndCount) {
  CycleShuffleSource source(three_rows(), kQuantum, 1, 2, 0.0, 10);
  EXPECT_EQ(source.describe(),
            "cycled and shuffled rows of 'three' (3 of 3 rows kept), 10 requests, arrivals "
            "poisson_quantum(rate=4 req/s, quantum=0.01 s)");
}

}  // namespace
}  // namespace pagesim::traces
