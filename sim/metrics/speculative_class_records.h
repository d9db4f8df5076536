// Speculative-class records: what a run with speculative decoding (sim/core/
// speculative_settings.h) reports beyond the five memory classes — the four classes only it
// has (alloc::kSpeculativeFields: proposed_accepted, proposed_rejected, lookahead, draft_kv)
// as extra columns of iterations.csv (SpeculativeClassIterationSample, in slots, after every
// other column) and the "speculative_classes" object of summary.json, of every replica's
// object and, time-weighted, of the cluster's (SpeculativeClassSummary: % of capacity,
// averaged as memory_pct is). Written only when MetricsSettings::speculative_classes is set,
// so every run without speculation keeps its bytes. With them, memory_pct's partitioning
// classes plus these four (and adapter_weights, layer_classes where a run has them) sum to
// 100%. Plain values, each with its field list; the names are alloc::kSpeculativeFields's.
#pragma once

#include <cstdint>
#include <tuple>

#include "allocator/memory_breakdown.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct SpeculativeClassIterationSample {  // token slots, like the memory columns before it
  std::int64_t proposed_accepted = 0;
  std::int64_t proposed_rejected = 0;
  std::int64_t lookahead = 0;
  std::int64_t draft_kv = 0;
};

template <>
struct RecordFields<SpeculativeClassIterationSample> {
  using S = SpeculativeClassIterationSample;
  static constexpr auto fields = std::tuple{
      Field{alloc::kSpeculativeFields[0].name, &S::proposed_accepted},
      Field{alloc::kSpeculativeFields[1].name, &S::proposed_rejected},
      Field{alloc::kSpeculativeFields[2].name, &S::lookahead},
      Field{alloc::kSpeculativeFields[3].name, &S::draft_kv},
  };
};
static_assert(lists_every_member<SpeculativeClassIterationSample>());

struct SpeculativeClassPct {  // % of KV capacity
  double proposed_accepted = 0;
  double proposed_rejected = 0;
  double lookahead = 0;
  double draft_kv = 0;
};

template <>
struct RecordFields<SpeculativeClassPct> {
  using S = SpeculativeClassPct;
  static constexpr auto fields = std::tuple{
      Field{alloc::kSpeculativeFields[0].name, &S::proposed_accepted},
      Field{alloc::kSpeculativeFields[1].name, &S::proposed_rejected},
      Field{alloc::kSpeculativeFields[2].name, &S::lookahead},
      Field{alloc::kSpeculativeFields[3].name, &S::draft_kv},
  };
};
static_assert(lists_every_member<SpeculativeClassPct>());

// sum += x, sum += weight * x and sum / denom (0 for denom <= 0), class by class.
inline void add(SpeculativeClassPct& sum, const SpeculativeClassPct& x) {
  std::apply([&](const auto&... f) { ((sum.*f.member += x.*f.member), ...); },
             RecordFields<SpeculativeClassPct>::fields);
}
inline void add_weighted(SpeculativeClassPct& sum, const SpeculativeClassPct& x, double weight) {
  std::apply([&](const auto&... f) { ((sum.*f.member += x.*f.member * weight), ...); },
             RecordFields<SpeculativeClassPct>::fields);
}
inline SpeculativeClassPct mean_of(SpeculativeClassPct sum, double denom) {
  if (denom <= 0) return {};
  std::apply([&](const auto&... f) { ((sum.*f.member /= denom), ...); }, RecordFields<SpeculativeClassPct>::fields);
  return sum;
}

// summary.json's "speculative_classes" object: the window means, as memory_pct and
// memory_pct_time_weighted.
struct SpeculativeClassSummary {
  SpeculativeClassPct memory_pct;
  SpeculativeClassPct memory_pct_time_weighted;
};

template <>
struct RecordFields<SpeculativeClassSummary> {
  using S = SpeculativeClassSummary;
  static constexpr auto fields = std::tuple{
      Field{"memory_pct", &S::memory_pct},
      Field{"memory_pct_time_weighted", &S::memory_pct_time_weighted},
  };
};
static_assert(lists_every_member<SpeculativeClassSummary>());

// The speculative classes of a breakdown, in slots and as % of its total (0 for an empty pool).
inline SpeculativeClassIterationSample speculative_class_sample(const alloc::MemoryBreakdown& m) {
  return {m.proposed_accepted, m.proposed_rejected, m.lookahead, m.draft_kv};
}
inline SpeculativeClassPct speculative_class_pct(const alloc::MemoryBreakdown& m) {
  const double cap = static_cast<double>(m.total());
  if (cap <= 0) return {};
  return {100.0 * static_cast<double>(m.proposed_accepted) / cap, 100.0 * static_cast<double>(m.proposed_rejected) / cap,
          100.0 * static_cast<double>(m.lookahead) / cap, 100.0 * static_cast<double>(m.draft_kv) / cap};
}

}  // namespace pagesim::sim
