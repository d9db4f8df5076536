// ThinkTime: each kind's range and mean, determinism under a seed, errors naming the field.
#include "traces/think_time.h"

#include <gtest/gtest.h>

#include <string>

#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

double mean_of(const ThinkTimeSpec& s, int n, double* lo, double* hi) {
  auto t = make_think_time(s, 9, "think_time");
  double sum = 0;
  *lo = 1e300;
  *hi = -1;
  for (int i = 0; i < n; ++i) {
    const double v = t->next();
    sum += v;
    *lo = std::min(*lo, v);
    *hi = std::max(*hi, v);
  }
  return sum / n;
}

TEST(ThinkTime, KindsDrawInTheirRange) {
  double lo, hi;
  EXPECT_EQ(mean_of({.kind = ThinkTimeKind::kFixed, .value_s = 2.5}, 10, &lo, &hi), 2.5);
  const double u = mean_of({.kind = ThinkTimeKind::kUniform, .lo_s = 1, .hi_s = 3}, 20000, &lo, &hi);
  EXPECT_NEAR(u, 2.0, 0.05);
  EXPECT_GE(lo, 1.0);
  EXPECT_LE(hi, 3.0);
  const double e = mean_of({.kind = ThinkTimeKind::kExponential, .mean_s = 4}, 40000, &lo, &hi);
  EXPECT_NEAR(e, 4.0, 0.1);
  EXPECT_GE(lo, 0.0);
  mean_of({.kind = ThinkTimeKind::kLognormal, .hi_s = 30, .median_s = 10, .sigma = 2}, 5000, &lo, &hi);
  EXPECT_GT(lo, 0.0);
  EXPECT_EQ(hi, 30.0);  // clamped
}

TEST(ThinkTime, SameSeedSamePauses) {
  const ThinkTimeSpec s{.kind = ThinkTimeKind::kExponential, .mean_s = 3};
  auto a = make_think_time(s, 1, "t");
  auto b = make_think_time(s, 1, "t");
  auto c = make_think_time(s, 2, "t");
  bool differs = false;
  for (int i = 0; i < 10; ++i) {
    const double x = a->next();
    EXPECT_EQ(x, b->next());
    differs |= x != c->next();
  }
  EXPECT_TRUE(differs);
}

TEST(ThinkTime, BadValuesNameTheField) {
  auto field_of = [](const ThinkTimeSpec& s) {
    try {
      validate(s, "sessions.think_time");
    } catch (const SpecError& e) {
      return e.field();
    }
    return std::string("none");
  };
  EXPECT_EQ(field_of({.kind = ThinkTimeKind::kFixed, .value_s = -1}), "sessions.think_time.value_s");
  EXPECT_EQ(field_of({.kind = ThinkTimeKind::kUniform, .lo_s = 5, .hi_s = 1}), "sessions.think_time.hi_s");
  EXPECT_EQ(field_of({.kind = ThinkTimeKind::kExponential, .mean_s = 0}), "sessions.think_time.mean_s");
  EXPECT_EQ(field_of({.kind = ThinkTimeKind::kLognormal, .median_s = 1, .sigma = -1}), "sessions.think_time.sigma");
  EXPECT_EQ(field_of({.kind = ThinkTimeKind::kFixed, .value_s = 1.0 / 0.0}), "sessions.think_time.value_s");
  EXPECT_EQ(field_of({.kind = ThinkTimeKind::kUniform, .lo_s = 0, .hi_s = 0}), "none");
}

}  // namespace
}  // namespace pagesim::traces
