#include "traces/length_distribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/discrete_distribution.hpp>
#include <boost/random/lognormal_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "traces/trace_error.h"
#include "traces/trace_request.h"

namespace pagesim::traces {
namespace {

class FixedLength final : public LengthDistribution {
 public:
  explicit FixedLength(std::int64_t value) : value_(value) {}
  std::int64_t next() override { return value_; }
  std::string describe() const override { return fmt::format("fixed({})", value_); }

 private:
  std::int64_t value_;
};

class UniformLength final : public LengthDistribution {
 public:
  UniformLength(std::int64_t lo, std::int64_t hi, std::uint64_t seed)
      : engine_(seed), dist_(lo, hi) {}
  std::int64_t next() override { return dist_(engine_); }
  std::string describe() const override {
    return fmt::format("uniform([{}, {}])", dist_.a(), dist_.b());
  }

 private:
  std::mt19937_64 engine_;
  boost::random::uniform_int_distribution<std::int64_t> dist_;
};

class LognormalLength final : public LengthDistribution {
 public:
  LognormalLength(double mu, double sigma, std::int64_t lo, std::int64_t hi, std::uint64_t seed)
      : engine_(seed), dist_(mu, sigma), lo_(lo), hi_(hi) {}
  std::int64_t next() override {
    const double x = std::round(dist_(engine_));
    // Compare as doubles first: a huge draw must not overflow the conversion.
    if (!(x >= static_cast<double>(lo_))) return lo_;
    if (x >= static_cast<double>(hi_)) return hi_;
    return static_cast<std::int64_t>(x);
  }
  std::string describe() const override {
    return fmt::format("lognormal(median={:.6g}, sigma={}, clamp [{}, {}])", std::exp(dist_.m()),
                       dist_.s(), lo_, hi_);
  }

 private:
  std::mt19937_64 engine_;
  boost::random::lognormal_distribution<double> dist_;  // parameters m = mu, s = sigma
  std::int64_t lo_, hi_;
};

class ZipfLength final : public LengthDistribution {
 public:
  ZipfLength(double s, std::int64_t lo, std::int64_t hi, std::uint64_t seed)
      : engine_(seed), s_(s), lo_(lo), hi_(hi) {
    std::vector<double> weights(static_cast<std::size_t>(hi - lo + 1));
    for (std::size_t k = 0; k < weights.size(); ++k) {
      weights[k] = std::pow(static_cast<double>(k + 1), -s);
    }
    dist_ = boost::random::discrete_distribution<std::int64_t, double>(weights.begin(),
                                                                       weights.end());
  }
  std::int64_t next() override { return lo_ + dist_(engine_); }
  std::string describe() const override {
    return fmt::format("zipf(s={}, [{}, {}])", s_, lo_, hi_);
  }

 private:
  std::mt19937_64 engine_;
  boost::random::discrete_distribution<std::int64_t, double> dist_;
  double s_;
  std::int64_t lo_, hi_;
};

std::string member(std::string_view field, std::string_view name) {
  return fmt::format("{}.{}", field, name);
}

void require_length(std::int64_t value, std::string_view field, std::string_view name,
                    std::int64_t min_length) {
  if (value >= min_length && value <= kMaxTokens) return;
  throw SpecError(member(field, name),
                  fmt::format("a length in [{}, {}] tokens", min_length, kMaxTokens),
                  fmt::format("{}", value));
}

void require_range(const LengthSpec& spec, std::string_view field, std::int64_t min_length) {
  require_length(spec.lo, field, "lo", min_length);
  require_length(spec.hi, field, "hi", min_length);
  if (spec.hi < spec.lo) {
    throw SpecError(member(field, "hi"), fmt::format("a length >= lo ({})", spec.lo),
                    fmt::format("{}", spec.hi));
  }
}

}  // namespace

void validate(const LengthSpec& spec, std::string_view field, std::int64_t min_length) {
  switch (spec.kind) {
    case LengthKind::kFixed:
      require_length(spec.value, field, "value", min_length);
      return;
    case LengthKind::kUniform:
      require_range(spec, field, min_length);
      return;
    case LengthKind::kLognormal: {
      require_range(spec, field, min_length);
      const bool median_set = spec.median != 0.0;
      const bool mean_set = spec.mean != 0.0;
      if (median_set == mean_set) {
        throw SpecError(member(field, "median"), "exactly one of median and mean set (> 0)",
                        fmt::format("median={}, mean={}", spec.median, spec.mean));
      }
      const double m = median_set ? spec.median : spec.mean;
      if (!std::isfinite(m) || m <= 0.0) {
        throw SpecError(member(field, median_set ? "median" : "mean"),
                        "a positive number of tokens", fmt::format("{}", m));
      }
      if (!std::isfinite(spec.sigma) || spec.sigma < 0.0) {
        throw SpecError(member(field, "sigma"), "a finite number >= 0",
                        fmt::format("{}", spec.sigma));
      }
      return;
    }
    case LengthKind::kZipf:
      require_range(spec, field, min_length);
      if (spec.hi - spec.lo + 1 > kMaxZipfSupport) {
        throw SpecError(member(field, "hi"),
                        fmt::format("hi - lo + 1 <= {} (one weight per length)", kMaxZipfSupport),
                        fmt::format("{}", spec.hi - spec.lo + 1));
      }
      if (!std::isfinite(spec.s) || spec.s <= 0.0) {
        throw SpecError(member(field, "s"), "a positive exponent", fmt::format("{}", spec.s));
      }
      return;
  }
}

std::unique_ptr<LengthDistribution> make_length_distribution(const LengthSpec& spec,
                                                             std::uint64_t seed,
                                                             std::string_view field,
                                                             std::int64_t min_length) {
  validate(spec, field, min_length);
  switch (spec.kind) {
    case LengthKind::kFixed:
      return std::make_unique<FixedLength>(spec.value);
    case LengthKind::kUniform:
      return std::make_unique<UniformLength>(spec.lo, spec.hi, seed);
    case LengthKind::kLognormal: {
      const double mu = spec.median != 0.0 ? std::log(spec.median)
                                           : std::log(spec.mean) - spec.sigma * spec.sigma / 2.0;
      return std::make_unique<LognormalLength>(mu, spec.sigma, spec.lo, spec.hi, seed);
    }
    case LengthKind::kZipf:
      return std::make_unique<ZipfLength>(spec.s, spec.lo, spec.hi, seed);
  }
  throw SpecError(member(field, "dist"), "a known length distribution", "an invalid enum value");
}

std::string_view to_string(LengthKind kind) {
  for (const auto& [value, name] : kLengthKindNames)
    if (value == kind) return name;
  return "?";
}

}  // namespace pagesim::traces
