// MemoryPct: the memory classes of an iteration as % of KV capacity — the allocator's
// MemoryBreakdown classes, then unusable_free — and their sums and averages over a run.
//
// kMemoryPctFields lists the classes once, in the order of iterations.csv and summary.json;
// it is checked at compile time against the breakdown's field list, and the percentages,
// sums, averages, JSON and the terminal table's columns are all generated from it.
// Plain values; safe to copy between threads.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "allocator/memory_breakdown.h"
#include "sim/core/iteration_sample.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct MemoryPct {  // % of KV capacity
  double token_states = 0, reserved = 0, over_reserved = 0, rounding = 0, free = 0;
  double cached_free = 0;    // inside free
  double unusable_free = 0;  // inside free
};

// One memory class: its output name, its member, the terminal table's column title (empty:
// not shown) and whether it partitions capacity (the partitioning classes sum to 100%;
// cached_free and unusable_free are parts of free).
struct MemoryClassField {
  std::string_view name;
  double MemoryPct::*member;
  std::string_view table_title;
  bool partitions_capacity;
};

inline constexpr std::array<MemoryClassField, 7> kMemoryPctFields{{
    {"token_states", &MemoryPct::token_states, "tokens%", true},
    {"reserved", &MemoryPct::reserved, "resv%", true},
    {"over_reserved", &MemoryPct::over_reserved, "over%", true},
    {"rounding", &MemoryPct::rounding, "round%", true},
    {"free", &MemoryPct::free, "free%", true},
    {"cached_free", &MemoryPct::cached_free, "", false},
    {"unusable_free", &MemoryPct::unusable_free, "", false},
}};

template <>
struct RecordFields<MemoryPct> {
  static constexpr const auto& fields = kMemoryPctFields;
};
static_assert(lists_every_member<MemoryPct>());

namespace detail {
// The classes are the breakdown's, in its order, then unusable_free.
constexpr bool memory_classes_follow_breakdown() {
  if (kMemoryPctFields.size() != alloc::kMemoryBreakdownFields.size() + 1) return false;
  for (std::size_t i = 0; i < alloc::kMemoryBreakdownFields.size(); ++i)
    if (kMemoryPctFields[i].name != alloc::kMemoryBreakdownFields[i].name) return false;
  return kMemoryPctFields.back().name == "unusable_free";
}
static_assert(memory_classes_follow_breakdown(),
              "kMemoryPctFields must list kMemoryBreakdownFields in order, then unusable_free");
}  // namespace detail

// s's classes as % of the pool's capacity (s.memory.total()). REQUIRES: capacity > 0.
inline MemoryPct memory_pct_of(const IterationSample& s) {
  const double cap = static_cast<double>(s.memory.total());
  MemoryPct p;
  for (std::size_t i = 0; i < alloc::kMemoryBreakdownFields.size(); ++i)
    p.*kMemoryPctFields[i].member = 100.0 * static_cast<double>(s.memory.*alloc::kMemoryBreakdownFields[i].member) / cap;
  p.*kMemoryPctFields.back().member = 100.0 * static_cast<double>(s.unusable_free) / cap;
  return p;
}

// sum += weight * x, class by class.
inline void add_weighted(MemoryPct& sum, const MemoryPct& x, double weight) {
  for (const auto& f : kMemoryPctFields) sum.*f.member += x.*f.member * weight;
}

// sum += x, class by class.
inline void add(MemoryPct& sum, const MemoryPct& x) {
  for (const auto& f : kMemoryPctFields) sum.*f.member += x.*f.member;
}

// sum / denom class by class (the mean of a sum over `denom`); all zero when denom <= 0.
inline MemoryPct divided(const MemoryPct& sum, double denom) {
  MemoryPct m;
  if (denom <= 0) return m;
  for (const auto& f : kMemoryPctFields) m.*f.member = sum.*f.member / denom;
  return m;
}

// Sum of the classes that partition capacity (100 for a sample, up to rounding).
inline double capacity_pct(const MemoryPct& m) {
  double total = 0;
  for (const auto& f : kMemoryPctFields)
    if (f.partitions_capacity) total += m.*f.member;
  return total;
}

}  // namespace pagesim::sim
