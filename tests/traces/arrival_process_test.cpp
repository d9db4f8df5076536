#include "traces/arrival_process.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string_view>
#include <vector>

#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

std::vector<double> draw(const ArrivalSpec& spec, std::uint64_t seed, std::size_t n) {
  auto p = make_arrival_process(spec, seed);
  std::vector<double> out(n);
  for (auto& t : out) t = p->next();
  return out;
}

std::size_t count_before(const ArrivalSpec& spec, std::uint64_t seed, double horizon_s) {
  auto p = make_arrival_process(spec, seed);
  std::size_t n = 0;
  while (p->next() < horizon_s) ++n;
  return n;
}

struct GapMoments {
  double mean;
  double cv;
};

GapMoments gap_moments(const std::vector<double>& t) {
  double sum = 0, sum2 = 0;
  double prev = 0;
  for (double x : t) {
    const double g = x - prev;
    sum += g;
    sum2 += g * g;
    prev = x;
  }
  const double n = static_cast<double>(t.size());
  const double mean = sum / n;
  const double var = sum2 / n - mean * mean;
  return {mean, std::sqrt(var) / mean};
}

const ArrivalSpec kAllKinds[] = {
    {.kind = ArrivalKind::kPoisson, .rate = 4.0},
    {.kind = ArrivalKind::kPoissonQuantum, .rate = 4.0, .quantum_s = 0.01},
    {.kind = ArrivalKind::kGamma, .rate = 4.0, .cv = 3.0},
    {.kind = ArrivalKind::kConstant, .rate = 4.0},
    {.kind = ArrivalKind::kBurst, .rate = 40.0, .on_s = 1.0, .off_s = 9.0},
};

TEST(ArrivalProcess, TimesNeverDecreaseAndStartAtOrAfterZero) {
  for (const auto& spec : kAllKinds) {
    const auto t = draw(spec, 1, 50'000);
    EXPECT_GE(t.front(), 0.0) << to_string(spec.kind);
    for (std::size_t i = 1; i < t.size(); ++i) {
      ASSERT_LE(t[i - 1], t[i]) << to_string(spec.kind) << " at " << i;
    }
  }
}

TEST(ArrivalProcess, SameSeedSameTimesDifferentSeedDifferentTimes) {
  for (const auto& spec : kAllKinds) {
    EXPECT_EQ(draw(spec, 42, 1000), draw(spec, 42, 1000)) << to_string(spec.kind);
    if (spec.kind != ArrivalKind::kConstant) {
      EXPECT_NE(draw(spec, 42, 1000), draw(spec, 43, 1000)) << to_string(spec.kind);
    }
  }
}

TEST(ArrivalProcess, PoissonHasTheRequestedRateAndExponentialGaps) {
  // 200k gaps of mean 0.25: the sample mean has sd 0.25 / sqrt(2e5) = 5.6e-4; allow 5 sd.
  const auto m = gap_moments(draw({.kind = ArrivalKind::kPoisson, .rate = 4.0}, 7, 200'000));
  EXPECT_NEAR(m.mean, 0.25, 5 * 5.6e-4);
  EXPECT_NEAR(m.cv, 1.0, 0.02);
  // Count in 10,000 s: Poisson(40,000), sd 200.
  EXPECT_NEAR(static_cast<double>(count_before({.kind = ArrivalKind::kPoisson, .rate = 4.0}, 8, 1e4)),
              40'000, 5 * 200);
}

TEST(ArrivalProcess, PoissonQuantumPutsArrivalsOnQuantumMultiples) {
  const ArrivalSpec spec{.kind = ArrivalKind::kPoissonQuantum, .rate = 4.0, .quantum_s = 0.01};
  const auto t = draw(spec, 3, 100'000);
  for (double x : t) {
    const double k = std::round(x / 0.01);
    ASSERT_EQ(x, k * 0.01) << x;  // exactly the quantum's start time
  }
  EXPECT_NEAR(static_cast<double>(count_before(spec, 4, 1e4)), 40'000, 5 * 200);
}

TEST(ArrivalProcess, PoissonQuantumCountsPerQuantumArePoisson) {
  // 100 req/s in 10 ms quanta: mean 1 per quantum, variance 1, P(0) = e^-1.
  const ArrivalSpec spec{.kind = ArrivalKind::kPoissonQuantum, .rate = 100.0, .quantum_s = 0.01};
  auto p = make_arrival_process(spec, 5);
  const std::size_t quanta = 100'000;
  std::vector<int> counts(quanta, 0);
  while (true) {
    const auto q = static_cast<std::size_t>(std::llround(p->next() / 0.01));
    if (q >= quanta) break;
    ++counts[q];
  }
  double sum = 0, sum2 = 0, zeros = 0;
  for (int c : counts) {
    sum += c;
    sum2 += static_cast<double>(c) * c;
    zeros += c == 0;
  }
  const double mean = sum / quanta;
  EXPECT_NEAR(mean, 1.0, 0.02);
  EXPECT_NEAR(sum2 / quanta - mean * mean, 1.0, 0.03);
  EXPECT_NEAR(zeros / quanta, std::exp(-1.0), 0.01);
}

TEST(ArrivalProcess, PoissonQuantumFirstQuantumStartsAtZero) {
  // At 1000 req/s (10 per quantum) the first quantum is all but surely non-empty.
  auto p = make_arrival_process({.kind = ArrivalKind::kPoissonQuantum, .rate = 1000.0}, 9);
  EXPECT_EQ(p->next(), 0.0);
}

TEST(ArrivalProcess, GammaHasTheRequestedRateAndCv) {
  for (double cv : {0.5, 3.0}) {
    const auto m = gap_moments(draw({.kind = ArrivalKind::kGamma, .rate = 2.0, .cv = cv}, 11, 200'000));
    EXPECT_NEAR(m.mean, 0.5, 5 * 0.5 * cv / std::sqrt(2e5)) << cv;
    EXPECT_NEAR(m.cv, cv, 0.05 * cv) << cv;
  }
}

TEST(ArrivalProcess, ConstantIsExact) {
  const auto t = draw({.kind = ArrivalKind::kConstant, .rate = 3.0}, 0, 10);
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i], static_cast<double>(i) / 3.0);
}

TEST(ArrivalProcess, BurstIsSilentDuringOffPeriods) {
  const ArrivalSpec spec{.kind = ArrivalKind::kBurst, .rate = 10.0, .on_s = 1.0, .off_s = 3.0};
  const auto t = draw(spec, 13, 20'000);
  for (double x : t) ASSERT_LE(std::fmod(x, 4.0), 1.0 + 1e-9) << x;
  // Long-run rate 10 * 1 / 4 = 2.5 req/s: 10,000 in 4,000 s, sd 100.
  EXPECT_NEAR(static_cast<double>(count_before(spec, 14, 4000.0)), 10'000, 5 * 100);
}

TEST(ArrivalProcess, BurstWithoutOffPeriodsIsPoisson) {
  const auto m = gap_moments(
      draw({.kind = ArrivalKind::kBurst, .rate = 4.0, .on_s = 2.0, .off_s = 0.0}, 15, 200'000));
  EXPECT_NEAR(m.mean, 0.25, 5 * 5.6e-4);
  EXPECT_NEAR(m.cv, 1.0, 0.02);
}

TEST(ArrivalProcess, DescribeNamesKindAndParameters) {
  EXPECT_EQ(make_arrival_process({.kind = ArrivalKind::kPoissonQuantum, .rate = 4.0}, 0)->describe(),
            "poisson_quantum(rate=4 req/s, quantum=0.01 s)");
  EXPECT_EQ(make_arrival_process({.kind = ArrivalKind::kGamma, .rate = 2, .cv = 1.5}, 0)->describe(),
            "gamma(rate=2 req/s, cv=1.5)");
}

void expect_spec_error(const ArrivalSpec& spec, const std::string& message) {
  try {
    make_arrival_process(spec, 0);
    ADD_FAILURE() << "no SpecError for " << message;
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(ArrivalProcess, InvalidSpecsAreSpecErrors) {
  expect_spec_error({.kind = ArrivalKind::kPoisson, .rate = 0.0},
                    "arrival.rate: expected a positive number of requests/s, found 0");
  expect_spec_error({.kind = ArrivalKind::kConstant, .rate = -1.0},
                    "arrival.rate: expected a positive number of requests/s, found -1");
  expect_spec_error({.kind = ArrivalKind::kPoisson, .rate = std::nan("")},
                    "arrival.rate: expected a positive number of requests/s, found nan");
  expect_spec_error({.kind = ArrivalKind::kPoissonQuantum, .rate = 1.0, .quantum_s = 0.0},
                    "arrival.quantum_s: expected a positive number of seconds, found 0");
  expect_spec_error({.kind = ArrivalKind::kPoissonQuantum, .rate = 1e-7, .quantum_s = 1.0},
                    "arrival.quantum_s: expected rate * quantum_s >= 1e-06 requests per quantum, "
                    "found 1e-07");
  expect_spec_error({.kind = ArrivalKind::kGamma, .rate = 1.0, .cv = 0.0},
                    "arrival.cv: expected a positive number, found 0");
  expect_spec_error({.kind = ArrivalKind::kBurst, .rate = 1.0, .on_s = 0.0},
                    "arrival.on_s: expected a positive number of seconds, found 0");
  expect_spec_error({.kind = ArrivalKind::kBurst, .rate = 1.0, .on_s = 1.0, .off_s = -1.0},
                    "arrival.off_s: expected a non-negative number of seconds, found -1");
}

// Each kind once under its own name (as TraceFormat.Names). An unknown name in a config is
// the config's error (tests/sim/config/experiment_config_test.cpp, UnknownArrivalKind).
TEST(ArrivalProcess, KindNames) {
  std::set<std::string_view> names;
  for (const auto& [kind, name] : kArrivalKindNames) {
    EXPECT_EQ(to_string(kind), name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kArrivalKindNames.size());
  EXPECT_EQ(to_string(ArrivalKind::kPoissonQuantum), "poisson_quantum");
  EXPECT_EQ(to_string(static_cast<ArrivalKind>(99)), "?");
}

}  // namespace
}  // namespace pagesim::traces
