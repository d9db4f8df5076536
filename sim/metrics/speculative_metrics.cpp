#include "sim/metrics/speculative_metrics.h"

#include <algorithm>

#include "allocator/memory_breakdown.h"

namespace pagesim::sim {

SpeculativeMetrics::SpeculativeMetrics(const SpeculativeSettings& settings, double window_start_s,
                                       double window_end_s, double draft_kv_bytes_per_slot, double own_pool_bytes)
    : settings_(settings),
      window_start_s_(window_start_s),
      window_end_s_(window_end_s),
      draft_bytes_per_slot_(draft_kv_bytes_per_slot),
      own_pool_bytes_(own_pool_bytes) {}

void SpeculativeMetrics::on_replica_iteration(std::int32_t, const IterationSample& s, const IterationPlan& plan) {
  const alloc::MemoryBreakdown& m = s.memory;
  peak_draft_bytes_ =
      std::max(peak_draft_bytes_, static_cast<double>(m.allocated() - m.draft_kv) * draft_bytes_per_slot_);
  if (s.start_s < window_start_s_ || s.start_s >= window_end_s_) return;
  for (const Request* r : plan.decodes) {
    if (!r->spec_step) continue;
    ++steps_;
    proposed_ += r->spec_proposed;
    accepted_ += r->spec_accepted;
    emitted_ += r->spec_emitted;
  }
}

nlohmann::ordered_json SpeculativeMetrics::to_json() const {
  nlohmann::ordered_json j;
  j["num_speculative_tokens"] = settings_.k;
  j["expected_accepted_per_step"] = settings_.expected_accepted(settings_.k);
  j["steps"] = steps_;
  j["proposed_tokens"] = proposed_;
  j["accepted_tokens"] = accepted_;
  j["acceptance_rate"] = proposed_ > 0 ? static_cast<double>(accepted_) / static_cast<double>(proposed_) : 0.0;
  // Tokens a speculative step emits on average: its own plus the accepted proposals, but none
  // past a request's last token (accepted there, dropped by output processing).
  j["mean_tokens_per_step"] = steps_ > 0 ? static_cast<double>(emitted_) / static_cast<double>(steps_) : 0.0;
  if (own_pool_bytes_ > 0) j["own_pool_gib"] = own_pool_bytes_ / (1024.0 * 1024.0 * 1024.0);
  if (draft_bytes_per_slot_ > 0) j["own_pool_peak_gib"] = peak_draft_bytes_ / (1024.0 * 1024.0 * 1024.0);
  return j;
}

}  // namespace pagesim::sim
