#include "allocator/contiguous/reservation_policy.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

namespace {

constexpr std::string_view kAccepted = "max, pow2, oracle, fixed:N (N >= 0 output tokens)";
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void throw_bad_policy(std::string_view text, std::string_view why) {
  throw AllocatorError("reservation policy \"" + std::string(text) + "\": " + std::string(why) +
                       "; expected one of: " + std::string(kAccepted));
}

// a + b for non-negative a, b, clamped at INT64_MAX.
std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  return a > kInt64Max - b ? kInt64Max : a + b;
}

}  // namespace

ReservationPolicy ReservationPolicy::fixed(std::int64_t output_tokens) {
  if (output_tokens < 0) {
    throw AllocatorError("reservation policy fixed:N: N must be >= 0, got " +
                         std::to_string(output_tokens));
  }
  return ReservationPolicy(Kind::kFixed, output_tokens);
}

ReservationPolicy ReservationPolicy::parse(std::string_view text) {
  if (text == "max") return max();
  if (text == "pow2") return pow2();
  if (text == "oracle") return oracle();
  constexpr std::string_view kFixedPrefix = "fixed:";
  if (!text.starts_with(kFixedPrefix)) throw_bad_policy(text, "unknown policy");
  const std::string_view digits = text.substr(kFixedPrefix.size());
  if (digits.empty()) throw_bad_policy(text, "missing N after \"fixed:\"");
  // from_chars accepts a leading '-', which N never has; checking the first character also
  // rejects "+5" and " 5" the same way.
  if (digits.front() < '0' || digits.front() > '9') {
    throw_bad_policy(text, "N must be a non-negative decimal integer");
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec == std::errc::result_out_of_range) throw_bad_policy(text, "N is out of range");
  if (ec != std::errc() || end != digits.data() + digits.size()) {
    throw_bad_policy(text, "N must be a non-negative decimal integer");
  }
  return fixed(n);
}

std::string ReservationPolicy::to_string() const {
  switch (kind_) {
    case Kind::kMax: return "max";
    case Kind::kPow2: return "pow2";
    case Kind::kOracle: return "oracle";
    case Kind::kFixed: return "fixed:" + std::to_string(fixed_output_tokens_);
  }
  return "?";  // unreachable: every Kind is handled above
}

std::int64_t ReservationPolicy::estimated_output(const AdmitRequest& req,
                                                 std::int64_t max_seq_len) const {
  switch (kind_) {
    case Kind::kMax: return max_seq_len;
    case Kind::kPow2: {
      // bit_ceil of a value above 2^62 does not fit; such an output saturates max_seq_len
      // anyway, so any value >= max_seq_len gives the same reservation.
      constexpr std::uint64_t kTop = std::uint64_t{1} << 62;
      const auto out = static_cast<std::uint64_t>(req.output_tokens);
      return out > kTop ? kInt64Max : static_cast<std::int64_t>(std::bit_ceil(out));
    }
    case Kind::kOracle: return req.output_tokens;
    case Kind::kFixed: return fixed_output_tokens_;
  }
  return max_seq_len;  // unreachable: every Kind is handled above
}

std::int64_t ReservationPolicy::reservation_slots(const AdmitRequest& req,
                                                  std::int64_t max_seq_len) const {
  const std::int64_t planned =
      std::min(saturating_add(req.prompt_tokens, estimated_output(req, max_seq_len)), max_seq_len);
  return std::max(planned, saturating_add(req.prompt_tokens, req.generated_tokens));
}

}  // namespace pagesim::alloc
