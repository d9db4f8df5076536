// MemoryBreakdown: where every slot of a KV pool is at one moment.
//
// Every slot is in exactly one class, so the five classes always sum to capacity:
//   token_states  holds the KV of a token already computed
//   reserved      allocated for a token the sequence will generate under its reservation
//                 (min(estimate, final) - current)
//   over_reserved allocated beyond the sequence's true final length, never used
//                 (estimate - final, when the estimate is larger)
//   rounding      allocated only because allocation is rounded up (unfilled part of the last
//                 paged block; block and power-of-two rounding of a buddy chunk)
//   free          not allocated (holes between contiguous ranges included)
// `cached_free` is informational and already inside `free`: unreferenced prefix-cache blocks
// that still hold reusable KV and are evicted on demand. Shared blocks count once.
// kMemoryBreakdownFields lists the members once, in output order; sums, differences and the
// metrics' CSV columns are generated from it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string_view>

namespace pagesim::alloc {

struct MemoryBreakdown {
  std::int64_t token_states = 0;
  std::int64_t reserved = 0;
  std::int64_t over_reserved = 0;
  std::int64_t rounding = 0;
  std::int64_t free = 0;
  std::int64_t cached_free = 0;  // subset of free; not part of total()

  std::int64_t allocated() const { return token_states + reserved + over_reserved + rounding; }
  std::int64_t total() const { return allocated() + free; }

  MemoryBreakdown& operator+=(const MemoryBreakdown& o);
  MemoryBreakdown& operator-=(const MemoryBreakdown& o);
  friend bool operator==(const MemoryBreakdown&, const MemoryBreakdown&) = default;
};

// One member of MemoryBreakdown: its output name (CSV column, JSON key) and the member.
struct MemoryBreakdownField {
  std::string_view name;
  std::int64_t MemoryBreakdown::*member;
};

// Every member of MemoryBreakdown, once, in output order.
inline constexpr std::array<MemoryBreakdownField, 6> kMemoryBreakdownFields{{
    {"token_states", &MemoryBreakdown::token_states},
    {"reserved", &MemoryBreakdown::reserved},
    {"over_reserved", &MemoryBreakdown::over_reserved},
    {"rounding", &MemoryBreakdown::rounding},
    {"free", &MemoryBreakdown::free},
    {"cached_free", &MemoryBreakdown::cached_free},
}};
static_assert(sizeof(MemoryBreakdown) == kMemoryBreakdownFields.size() * sizeof(std::int64_t),
              "a MemoryBreakdown member is missing from kMemoryBreakdownFields");

inline MemoryBreakdown& MemoryBreakdown::operator+=(const MemoryBreakdown& o) {
  for (const auto& f : kMemoryBreakdownFields) this->*f.member += o.*f.member;
  return *this;
}

inline MemoryBreakdown& MemoryBreakdown::operator-=(const MemoryBreakdown& o) {
  for (const auto& f : kMemoryBreakdownFields) this->*f.member -= o.*f.member;
  return *this;
}

// Splits one sequence's allocation into classes (free stays 0).
//   current:   tokens whose KV the sequence holds now
//   final:     true final length (prompt + true output), final >= current
//   estimate:  slots the allocator meant to cover, before rounding (contiguous: the
//              reservation min(prompt + estimated output, max_len); paged: == current)
//   allocated: slots actually held, allocated >= max(current, estimate)
// The classes of the result sum to `allocated`.
inline MemoryBreakdown classify_allocation(std::int64_t current, std::int64_t final,
                                           std::int64_t estimate, std::int64_t allocated) {
  MemoryBreakdown b;
  b.token_states = current;
  b.reserved = std::max<std::int64_t>(0, std::min(estimate, final) - current);
  b.over_reserved = std::max<std::int64_t>(0, estimate - final);
  b.rounding = allocated - std::max(estimate, current);
  return b;
}

}  // namespace pagesim::alloc
