// ThinkTime: a seeded source of the pause, in seconds, between two turns of a session
// (session_source.h); ThinkTimeSpec, its plain settings struct; make_think_time(), the factory.
//
// Kinds (seconds, every draw finite and >= 0):
//   fixed        always `value_s`.
//   uniform      uniform on [lo_s, hi_s].
//   exponential  exponential of mean `mean_s` (memoryless: a user who may come back at any moment).
//   lognormal    exp(N(ln(median_s), sigma^2)), clamped to at most hi_s.
// Owns its engine (std::mt19937_64, Boost.Random distributions), so the same spec and seed
// give the same pauses everywhere. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace pagesim::traces {

enum class ThinkTimeKind { kFixed, kUniform, kExponential, kLognormal };

inline constexpr std::array<std::pair<ThinkTimeKind, std::string_view>, 4> kThinkTimeKindNames = {{
    {ThinkTimeKind::kFixed, "fixed"},
    {ThinkTimeKind::kUniform, "uniform"},
    {ThinkTimeKind::kExponential, "exponential"},
    {ThinkTimeKind::kLognormal, "lognormal"},
}};

struct ThinkTimeSpec {
  ThinkTimeKind kind = ThinkTimeKind::kExponential;
  double value_s = 10.0;    // fixed: the pause, seconds, >= 0
  double lo_s = 0.0;        // uniform: shortest pause, seconds, >= 0
  double hi_s = 60.0;       // uniform: longest pause; lognormal: clamp ceiling (seconds, >= lo_s)
  double mean_s = 10.0;     // exponential: mean pause, seconds, > 0
  double median_s = 10.0;   // lognormal: median pause, seconds, > 0
  double sigma = 1.0;       // lognormal: standard deviation of ln(pause), >= 0
};

class ThinkTime {
 public:
  ThinkTime() = default;
  virtual ~ThinkTime() = default;
  ThinkTime(const ThinkTime&) = delete;
  ThinkTime& operator=(const ThinkTime&) = delete;

  // The next pause in seconds: finite, >= 0.
  virtual double next() = 0;
  virtual std::string describe() const = 0;
};

// Throws SpecError naming `field`.<member> if a value the kind uses is out of range.
void validate(const ThinkTimeSpec& spec, std::string_view field);

// A new source for `spec` drawing from an engine seeded with `seed`. Throws SpecError.
std::unique_ptr<ThinkTime> make_think_time(const ThinkTimeSpec& spec, std::uint64_t seed, std::string_view field);

std::string_view to_string(ThinkTimeKind kind);

}  // namespace pagesim::traces
