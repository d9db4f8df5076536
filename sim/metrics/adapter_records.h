// Adapter records: what a run with LoRA adapters (sim/scheduler/lora_settings.h) reports beyond
// the five memory classes — the adapter_weights class (alloc::kAdapterClassFields) as one
// more column of iterations.csv (AdapterIterationSample, in slots, after every other column)
// and summary.json's "adapter_weights" object (AdapterClassSummary: % of capacity, averaged
// as memory_pct is). Written only when MetricsSettings::adapter_class is set, so every run
// without LoRA keeps its bytes. With it, memory_pct's partitioning classes plus
// adapter_weights sum to 100%.
#pragma once

#include <cstdint>
#include <tuple>

#include "allocator/memory_breakdown.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct AdapterIterationSample {  // token slots
  std::int64_t adapter_weights = 0;
};

template <>
struct RecordFields<AdapterIterationSample> {
  using S = AdapterIterationSample;
  static constexpr auto fields = std::tuple{Field{alloc::kAdapterClassFields[0].name, &S::adapter_weights}};
};
static_assert(lists_every_member<AdapterIterationSample>());

struct AdapterClassSummary {  // % of KV capacity
  double memory_pct = 0;
  double memory_pct_time_weighted = 0;
};

template <>
struct RecordFields<AdapterClassSummary> {
  using S = AdapterClassSummary;
  static constexpr auto fields = std::tuple{
      Field{"memory_pct", &S::memory_pct},
      Field{"memory_pct_time_weighted", &S::memory_pct_time_weighted},
  };
};
static_assert(lists_every_member<AdapterClassSummary>());

// The adapter class of a breakdown as % of its total (0 for an empty pool).
inline double adapter_class_pct(const alloc::MemoryBreakdown& m) {
  const double cap = static_cast<double>(m.total());
  return cap > 0 ? 100.0 * static_cast<double>(m.adapter_weights) / cap : 0.0;
}

}  // namespace pagesim::sim
