// ReservationPolicy: how many slots a contiguous allocator reserves for a request up front.
//
// A contiguous range cannot grow, so it is sized at admission for the output the policy
// expects the request to generate (the vLLM paper's Orca baselines):
//   max       up to max_seq_len, whatever the request
//   pow2      the true output length rounded up to a power of two (std::bit_ceil: 0 -> 1)
//   oracle    the true output length
//   fixed:N   N output tokens for every request
// The reservation of a request is min(prompt + estimated output, max_seq_len) slots, and
// never less than the tokens it holds at admission (prompt + generated). Placement may round
// the range up further (buddy blocks); that rounding is not part of the reservation.
//
// A small value type: copyable, immutable, safe to share across threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

class ReservationPolicy {
 public:
  enum class Kind { kMax, kPow2, kOracle, kFixed };

  static ReservationPolicy max() { return ReservationPolicy(Kind::kMax, 0); }
  static ReservationPolicy pow2() { return ReservationPolicy(Kind::kPow2, 0); }
  static ReservationPolicy oracle() { return ReservationPolicy(Kind::kOracle, 0); }
  // REQUIRES: output_tokens >= 0, else AllocatorError.
  static ReservationPolicy fixed(std::int64_t output_tokens);

  // Parses "max", "pow2", "oracle" or "fixed:N" (N a decimal integer >= 0). Throws
  // AllocatorError quoting `text` and listing the accepted forms.
  static ReservationPolicy parse(std::string_view text);

  // The default is `max`, Orca's own policy.
  ReservationPolicy() = default;

  Kind kind() const { return kind_; }
  // N of `fixed:N`; 0 for the other kinds.
  std::int64_t fixed_output_tokens() const { return fixed_output_tokens_; }
  // The form parse() accepts: "max", "pow2", "oracle", "fixed:128".
  std::string to_string() const;

  // Output tokens the policy plans for. REQUIRES: req.output_tokens >= 0.
  std::int64_t estimated_output(const AdmitRequest& req, std::int64_t max_seq_len) const;

  // Slots to reserve: max(tokens_at_admission, min(prompt + estimated output, max_seq_len)).
  // Saturates instead of overflowing. REQUIRES: lengths >= 0, max_seq_len >= 1.
  std::int64_t reservation_slots(const AdmitRequest& req, std::int64_t max_seq_len) const;

  friend bool operator==(const ReservationPolicy&, const ReservationPolicy&) = default;

 private:
  ReservationPolicy(Kind kind, std::int64_t fixed_output_tokens)
      : kind_(kind), fixed_output_tokens_(fixed_output_tokens) {}

  Kind kind_ = Kind::kMax;
  std::int64_t fixed_output_tokens_ = 0;  // INVARIANT: >= 0; 0 unless kind_ == kFixed
};

}  // namespace pagesim::alloc
