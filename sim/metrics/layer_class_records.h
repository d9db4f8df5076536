// Layer-class records: what a run of a heterogeneous model (allocator/layer_group.h) reports
// beyond the five memory classes — the three classes only such models have
// (alloc::kLayerClassFields: out_of_window, recurrent_state, unused_layers) as extra columns of
// iterations.csv (LayerClassIterationSample, in the allocator's unit, after every other
// column) and the "layer_classes" object of summary.json (LayerClassSummary: % of capacity,
// averaged as memory_pct is). Written only when MetricsSettings::layer_classes is set, so
// every single-group run's outputs keep their bytes. With them, memory_pct's partitioning
// classes plus these three sum to 100%. Plain values, each with its field list; the names
// are alloc::kLayerClassFields's.
#pragma once

#include <cstdint>
#include <tuple>

#include "allocator/memory_breakdown.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct LayerClassIterationSample {  // allocator units, like the memory columns before it
  std::int64_t out_of_window = 0;
  std::int64_t recurrent_state = 0;
  std::int64_t unused_layers = 0;
};

template <>
struct RecordFields<LayerClassIterationSample> {
  using S = LayerClassIterationSample;
  static constexpr auto fields = std::tuple{
      Field{alloc::kLayerClassFields[0].name, &S::out_of_window},
      Field{alloc::kLayerClassFields[1].name, &S::recurrent_state},
      Field{alloc::kLayerClassFields[2].name, &S::unused_layers},
  };
};
static_assert(lists_every_member<LayerClassIterationSample>());

struct LayerClassPct {  // % of KV capacity
  double out_of_window = 0;
  double recurrent_state = 0;
  double unused_layers = 0;
};

template <>
struct RecordFields<LayerClassPct> {
  using S = LayerClassPct;
  static constexpr auto fields = std::tuple{
      Field{alloc::kLayerClassFields[0].name, &S::out_of_window},
      Field{alloc::kLayerClassFields[1].name, &S::recurrent_state},
      Field{alloc::kLayerClassFields[2].name, &S::unused_layers},
  };
};
static_assert(lists_every_member<LayerClassPct>());

// sum += x and sum += weight * x, class by class (window sums and time integrals).
inline void add(LayerClassPct& sum, const LayerClassPct& x) {
  std::apply([&](const auto&... f) { ((sum.*f.member += x.*f.member), ...); }, RecordFields<LayerClassPct>::fields);
}
inline void add_weighted(LayerClassPct& sum, const LayerClassPct& x, double weight) {
  std::apply([&](const auto&... f) { ((sum.*f.member += x.*f.member * weight), ...); },
             RecordFields<LayerClassPct>::fields);
}

// summary.json's "layer_classes" object: the window means, as memory_pct and
// memory_pct_time_weighted.
struct LayerClassSummary {
  LayerClassPct memory_pct;
  LayerClassPct memory_pct_time_weighted;
};

template <>
struct RecordFields<LayerClassSummary> {
  using S = LayerClassSummary;
  static constexpr auto fields = std::tuple{
      Field{"memory_pct", &S::memory_pct},
      Field{"memory_pct_time_weighted", &S::memory_pct_time_weighted},
  };
};
static_assert(lists_every_member<LayerClassSummary>());

// The layer classes of a breakdown, in slots and as % of its total (0 for an empty pool).
inline LayerClassIterationSample layer_class_sample(const alloc::MemoryBreakdown& m) {
  return {m.out_of_window, m.recurrent_state, m.unused_layers};
}
inline LayerClassPct layer_class_pct(const alloc::MemoryBreakdown& m) {
  const double cap = static_cast<double>(m.total());
  if (cap <= 0) return {};
  return {100.0 * static_cast<double>(m.out_of_window) / cap, 100.0 * static_cast<double>(m.recurrent_state) / cap,
          100.0 * static_cast<double>(m.unused_layers) / cap};
}

}  // namespace pagesim::sim
