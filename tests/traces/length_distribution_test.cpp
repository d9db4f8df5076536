#include "traces/length_distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "traces/length_model.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

std::vector<std::int64_t> draw(const LengthSpec& spec, std::uint64_t seed, std::size_t n) {
  auto d = make_length_distribution(spec, seed, "len", 1);
  std::vector<std::int64_t> out(n);
  for (auto& x : out) x = d->next();
  return out;
}

double mean_of(const std::vector<std::int64_t>& v) {
  double s = 0;
  for (auto x : v) s += static_cast<double>(x);
  return s / static_cast<double>(v.size());
}

TEST(LengthDistribution, Fixed) {
  for (auto x : draw({.kind = LengthKind::kFixed, .value = 77}, 1, 100)) EXPECT_EQ(x, 77);
}

TEST(LengthDistribution, UniformCoversItsInclusiveRange) {
  const auto v = draw({.kind = LengthKind::kUniform, .lo = 5, .hi = 9}, 2, 50'000);
  std::map<std::int64_t, int> counts;
  for (auto x : v) ++counts[x];
  ASSERT_EQ(counts.size(), 5u);
  EXPECT_EQ(counts.begin()->first, 5);
  EXPECT_EQ(counts.rbegin()->first, 9);
  for (const auto& [value, c] : counts) EXPECT_NEAR(c, 10'000, 500) << value;
}

TEST(LengthDistribution, LognormalByMedian) {
  auto v = draw({.kind = LengthKind::kLognormal, .lo = 1, .hi = 1'000'000, .median = 200.0,
                 .sigma = 1.0},
                3, 100'001);
  std::nth_element(v.begin(), v.begin() + 50'000, v.end());
  EXPECT_NEAR(static_cast<double>(v[50'000]), 200.0, 4.0);
}

TEST(LengthDistribution, LognormalByMean) {
  const auto v = draw({.kind = LengthKind::kLognormal, .lo = 1, .hi = 10'000'000, .mean = 300.0,
                       .sigma = 0.5},
                      4, 200'000);
  EXPECT_NEAR(mean_of(v), 300.0, 2.0);
}

TEST(LengthDistribution, LognormalIsClamped) {
  const auto v = draw({.kind = LengthKind::kLognormal, .lo = 100, .hi = 150, .median = 120.0,
                       .sigma = 3.0},
                      5, 10'000);
  EXPECT_EQ(*std::min_element(v.begin(), v.end()), 100);
  EXPECT_EQ(*std::max_element(v.begin(), v.end()), 150);
}

TEST(LengthDistribution, ZipfFavoursLoWithPowerLawRatios) {
  const auto v = draw({.kind = LengthKind::kZipf, .lo = 10, .hi = 1000, .s = 1.2}, 6, 200'000);
  std::map<std::int64_t, double> counts;
  for (auto x : v) {
    ASSERT_GE(x, 10);
    ASSERT_LE(x, 1000);
    counts[x] += 1;
  }
  EXPECT_NEAR(counts[10] / counts[11], std::pow(2.0, 1.2), 0.08);
  EXPECT_NEAR(counts[10] / counts[13], std::pow(4.0, 1.2), 0.3);
}

TEST(LengthDistribution, SameSeedSameDraws) {
  const LengthSpec spec{.kind = LengthKind::kUniform, .lo = 1, .hi = 1 << 20};
  EXPECT_EQ(draw(spec, 9, 1000), draw(spec, 9, 1000));
  EXPECT_NE(draw(spec, 9, 1000), draw(spec, 10, 1000));
}

void expect_spec_error(const LengthSpec& spec, std::int64_t min_length, const std::string& message) {
  try {
    make_length_distribution(spec, 0, "lengths.prompt", min_length);
    ADD_FAILURE() << "no SpecError for " << message;
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(LengthDistribution, InvalidSpecsAreSpecErrors) {
  expect_spec_error({.kind = LengthKind::kFixed, .value = 0}, 1,
                    "lengths.prompt.value: expected a length in [1, 4294967296] tokens, found 0");
  expect_spec_error({.kind = LengthKind::kUniform, .lo = 10, .hi = 5}, 1,
                    "lengths.prompt.hi: expected a length >= lo (10), found 5");
  expect_spec_error({.kind = LengthKind::kUniform, .lo = 0, .hi = 5}, 1,
                    "lengths.prompt.lo: expected a length in [1, 4294967296] tokens, found 0");
  expect_spec_error({.kind = LengthKind::kLognormal, .median = 10, .mean = 10}, 1,
                    "lengths.prompt.median: expected exactly one of median and mean set (> 0), "
                    "found median=10, mean=10");
  expect_spec_error({.kind = LengthKind::kLognormal}, 1,
                    "lengths.prompt.median: expected exactly one of median and mean set (> 0), "
                    "found median=0, mean=0");
  expect_spec_error({.kind = LengthKind::kLognormal, .mean = -5}, 1,
                    "lengths.prompt.mean: expected a positive number of tokens, found -5");
  expect_spec_error({.kind = LengthKind::kLognormal, .median = 5, .sigma = -1}, 1,
                    "lengths.prompt.sigma: expected a finite number >= 0, found -1");
  expect_spec_error({.kind = LengthKind::kZipf, .lo = 1, .hi = 2'000'000}, 1,
                    "lengths.prompt.hi: expected hi - lo + 1 <= 1048576 (one weight per length), "
                    "found 2000000");
  expect_spec_error({.kind = LengthKind::kZipf, .lo = 1, .hi = 10, .s = 0}, 1,
                    "lengths.prompt.s: expected a positive exponent, found 0");
  // Outputs may be 0 tokens long.
  EXPECT_EQ(make_length_distribution({.kind = LengthKind::kFixed, .value = 0}, 0, "o", 0)->next(), 0);
}

// Each kind once under its own name (as TraceFormat.Names).
TEST(LengthDistribution, KindNames) {
  std::set<std::string_view> names;
  for (const auto& [kind, name] : kLengthKindNames) {
    EXPECT_EQ(to_string(kind), name);
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kLengthKindNames.size());
  EXPECT_EQ(to_string(LengthKind::kLognormal), "lognormal");
  EXPECT_EQ(to_string(static_cast<LengthKind>(99)), "?");
}

TEST(IndependentLengths, RedrawsPairsUntilTheyFitTheLimit) {
  IndependentLengths model(
      make_length_distribution({.kind = LengthKind::kUniform, .lo = 1, .hi = 2000}, 1, "p", 1),
      make_length_distribution({.kind = LengthKind::kUniform, .lo = 0, .hi = 2000}, 2, "o", 0),
      2048);
  for (int i = 0; i < 20'000; ++i) ASSERT_LT(model.next().total_tokens(), 2048);
}

TEST(IndependentLengths, ImpossibleLimitIsASpecError) {
  IndependentLengths model(make_length_distribution({.kind = LengthKind::kFixed, .value = 3000}, 1, "p", 1),
                           make_length_distribution({.kind = LengthKind::kFixed, .value = 1}, 2, "o", 0),
                           2048);
  EXPECT_THROW(model.next(), SpecError);
}

TEST(EmpiricalLengths, DrawsRowsOfTheTable) {
  LengthTable table{"t", {{1, 2}, {3, 4}, {5, 6}}, 3};
  EmpiricalLengths model(table, 1);
  std::map<std::int64_t, int> counts;
  for (int i = 0; i < 30'000; ++i) {
    const LengthRow r = model.next();
    ASSERT_EQ(r.output_tokens, r.prompt_tokens + 1);  // whole rows, never mixed
    ++counts[r.prompt_tokens];
  }
  for (const auto& [p, c] : counts) EXPECT_NEAR(c, 10'000, 500) << p;
  EXPECT_THROW(EmpiricalLengths(LengthTable{"empty", {}, 5}, 1), SpecError);
}

}  // namespace
}  // namespace pagesim::traces
