// LengthDistribution: a seeded source of token lengths; LengthSpec, its plain settings
// struct; make_length_distribution(), the factory.
//
// Kinds (all lengths are integers, in tokens):
//   fixed      always `value`.
//   uniform    uniform on [lo, hi], both included.
//   lognormal  exp(N(mu, sigma^2)) rounded to the nearest integer and clamped to [lo, hi];
//              mu = ln(median), or ln(mean) - sigma^2/2 when `mean` is given instead (the
//              mean before rounding and clamping).
//   zipf       P(lo + k - 1) proportional to k^-s for k = 1 .. hi - lo + 1: lo is the most
//              likely length. At most kMaxZipfSupport values (a table of that many weights).
// A distribution owns its engine (std::mt19937_64, Boost.Random), so the same spec and seed
// draw the same lengths everywhere. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>


namespace pagesim::traces {

enum class LengthKind { kFixed, kUniform, kLognormal, kZipf };

inline constexpr std::array<std::pair<LengthKind, std::string_view>, 4> kLengthKindNames = {{
    {LengthKind::kFixed, "fixed"},
    {LengthKind::kUniform, "uniform"},
    {LengthKind::kLognormal, "lognormal"},
    {LengthKind::kZipf, "zipf"},
}};

inline constexpr std::int64_t kMaxZipfSupport = std::int64_t{1} << 20;

struct LengthSpec {
  LengthKind kind = LengthKind::kFixed;
  std::int64_t value = 128;  // fixed: the length, tokens
  std::int64_t lo = 1;       // uniform, zipf: smallest length; lognormal: clamp floor (tokens)
  std::int64_t hi = 2048;    // uniform, zipf: largest length; lognormal: clamp ceiling (tokens)
  double median = 0.0;       // lognormal: median length, tokens (> 0); or leave 0, set mean
  double mean = 0.0;         // lognormal: mean length, tokens (> 0); or leave 0, set median
  double sigma = 1.0;        // lognormal: standard deviation of ln(length), >= 0
  double s = 1.0;            // zipf: exponent, > 0 (larger = more mass on short lengths)
};

class LengthDistribution {
 public:
  LengthDistribution() = default;
  virtual ~LengthDistribution() = default;
  LengthDistribution(const LengthDistribution&) = delete;
  LengthDistribution& operator=(const LengthDistribution&) = delete;

  // The next length, in [min_length(), kMaxTokens].
  virtual std::int64_t next() = 0;
  // E.g. "lognormal(median=200, sigma=1, clamp [1, 2048])".
  virtual std::string describe() const = 0;
};

// Throws SpecError naming `field`.<member> if a value the kind uses is out of range or could
// produce a length below `min_length` (1 for prompts, 0 for outputs) or above kMaxTokens.
void validate(const LengthSpec& spec, std::string_view field, std::int64_t min_length);

// A new distribution for `spec` drawing from an engine seeded with `seed`. Throws SpecError.
std::unique_ptr<LengthDistribution> make_length_distribution(const LengthSpec& spec,
                                                             std::uint64_t seed,
                                                             std::string_view field,
                                                             std::int64_t min_length);

// "fixed", "uniform", ...: the kind's name in kLengthKindNames.
std::string_view to_string(LengthKind kind);

}  // namespace pagesim::traces
