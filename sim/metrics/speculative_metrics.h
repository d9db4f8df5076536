// SpeculativeMetrics: what a run with speculative decoding reports beyond the usual metrics —
// summary.json's "speculative" object (SummaryNotes::speculative).
//
// An IterationObserver of the whole run (every replica). Over the iterations that start in
// the measurement window it counts the speculative steps planned (decoding requests whose
// step went through grow_proposed), the tokens they proposed and the proposals verification
// accepts (drawn when the step is planned; a proposal past the request's last token counts
// as accepted but is not emitted). The four speculative memory classes are Metrics' (summary
// "speculative_classes", speculative_class_records.h), beside the others. With the draft's
// KV in its own pool, the draft holds one block per target block: its peak is reported in
// GiB. Not thread-safe.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "sim/core/iteration_observer.h"
#include "sim/core/speculative_settings.h"

namespace pagesim::sim {

class SpeculativeMetrics final : public IterationObserver {
 public:
  // `settings`: the run's (copied); `draft_kv_bytes_per_slot`: the draft's KV bytes per
  // target token slot (own pool: to report its peak; else 0); `own_pool_bytes`: the memory
  // carved for that pool when the KV budget is derived (0: none carved). Window [start, end)
  // in seconds.
  SpeculativeMetrics(const SpeculativeSettings& settings, double window_start_s, double window_end_s,
                     double draft_kv_bytes_per_slot, double own_pool_bytes = 0);

  void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) override;

  // The "speculative" object: settings, counts, means.
  nlohmann::ordered_json to_json() const;

 private:
  SpeculativeSettings settings_;
  double window_start_s_, window_end_s_, draft_bytes_per_slot_, own_pool_bytes_;
  std::int64_t steps_ = 0, proposed_ = 0, accepted_ = 0, emitted_ = 0;
  double peak_draft_bytes_ = 0;
};

}  // namespace pagesim::sim
