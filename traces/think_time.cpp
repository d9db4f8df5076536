#include "traces/think_time.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_real_distribution.hpp>
#include <cmath>
#include <random>

#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

// Pauses far beyond any trace (about 30 years): keeps arrival sums finite and exact enough.
constexpr double kMaxPauseS = 1e9;

class FixedThink final : public ThinkTime {
 public:
  explicit FixedThink(double v) : v_(v) {}
  double next() override { return v_; }
  std::string describe() const override { return fmt::format("fixed({} s)", v_); }

 private:
  double v_;
};

template <class Dist>
class DrawnThink final : public ThinkTime {
 public:
  DrawnThink(Dist dist, double hi, std::string text, std::uint64_t seed)
      : engine_(seed), dist_(dist), hi_(hi), text_(std::move(text)) {}
  double next() override { return std::clamp(dist_(engine_), 0.0, hi_); }
  std::string describe() const override { return text_; }

 private:
  std::mt19937_64 engine_;
  Dist dist_;
  double hi_;
  std::string text_;
};

void check(bool ok, std::string_view field, const char* member, const char* expected, double found) {
  if (!ok) throw SpecError(fmt::format("{}.{}", field, member), expected, fmt::format("{}", found));
}

}  // namespace

std::string_view to_string(ThinkTimeKind kind) {
  for (const auto& [k, name] : kThinkTimeKindNames)
    if (k == kind) return name;
  return "?";
}

void validate(const ThinkTimeSpec& s, std::string_view field) {
  auto seconds = [](double v) { return std::isfinite(v) && v >= 0 && v <= kMaxPauseS; };
  switch (s.kind) {
    case ThinkTimeKind::kFixed:
      check(seconds(s.value_s), field, "value_s", "a number of seconds in [0, 1e9]", s.value_s);
      break;
    case ThinkTimeKind::kUniform:
      check(seconds(s.lo_s), field, "lo_s", "a number of seconds in [0, 1e9]", s.lo_s);
      check(seconds(s.hi_s) && s.hi_s >= s.lo_s, field, "hi_s", "a number of seconds >= lo_s and <= 1e9", s.hi_s);
      break;
    case ThinkTimeKind::kExponential:
      check(seconds(s.mean_s) && s.mean_s > 0, field, "mean_s", "a number of seconds in (0, 1e9]", s.mean_s);
      break;
    case ThinkTimeKind::kLognormal:
      check(seconds(s.median_s) && s.median_s > 0, field, "median_s", "a number of seconds in (0, 1e9]",
            s.median_s);
      check(std::isfinite(s.sigma) && s.sigma >= 0, field, "sigma", "a finite number >= 0", s.sigma);
      check(seconds(s.hi_s), field, "hi_s", "a clamp ceiling in seconds in [0, 1e9]", s.hi_s);
      break;
  }
}

std::unique_ptr<ThinkTime> make_think_time(const ThinkTimeSpec& s, std::uint64_t seed, std::string_view field) {
  validate(s, field);
  switch (s.kind) {
    case ThinkTimeKind::kFixed:
      return std::make_unique<FixedThink>(s.value_s);
    case ThinkTimeKind::kUniform:
      return std::make_unique<DrawnThink<boost::random::uniform_real_distribution<double>>>(
          boost::random::uniform_real_distribution<double>(s.lo_s, s.hi_s), s.hi_s,
          fmt::format("uniform([{}, {}] s)", s.lo_s, s.hi_s), seed);
    case ThinkTimeKind::kExponential:
      return std::make_unique<DrawnThink<boost::random::exponential_distribution<double>>>(
          boost::random::exponential_distribution<double>(1.0 / s.mean_s), kMaxPauseS,
          fmt::format("exponential(mean={} s)", s.mean_s), seed);
    case ThinkTimeKind::kLognormal:
      return std::make_unique<DrawnThink<boost::random::lognormal_distribution<double>>>(
          boost::random::lognormal_distribution<double>(std::log(s.median_s), s.sigma), s.hi_s,
          fmt::format("lognormal(median={} s, sigma={}, at most {} s)", s.median_s, s.sigma, s.hi_s), seed);
  }
  return nullptr;
}

}  // namespace pagesim::traces
