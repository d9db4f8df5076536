#include "sim/cost/speculative_cost_model.h"

#include <cassert>

#include <fmt/format.h>

namespace pagesim::sim {

SpeculativeCostModel::SpeculativeCostModel(std::unique_ptr<CostModel> target, std::unique_ptr<CostModel> draft,
                                           double draft_cost_ratio, std::int64_t k)
    : target_(std::move(target)), draft_(std::move(draft)), ratio_(draft_cost_ratio), k_(k) {
  assert(target_ && k_ >= 0);
}

double SpeculativeCostModel::pass_seconds(const BatchShape& pass) const {
  if (ratio_ >= 0) return ratio_ * target_->iteration_seconds(pass);
  return draft_ ? draft_->iteration_seconds(pass) : 0.0;
}

double SpeculativeCostModel::draft_seconds(const BatchShape& batch) const {
  if (k_ == 0 || (!draft_ && ratio_ < 0)) return 0;
  const std::int64_t sampling = batch.prefill_sampling_seqs + batch.decode_seqs;
  if (sampling == 0) return 0;
  // First pass: the batch's new tokens (what the target just computed).
  double seconds = pass_seconds(batch);
  if (k_ > 1) {
    // Later passes: one token per sampling sequence over its context.
    BatchShape next;
    next.decode_seqs = sampling;
    next.decode_context_tokens = batch.decode_context_tokens + batch.verify_tokens + batch.prefill_context_tokens;
    seconds += static_cast<double>(k_ - 1) * pass_seconds(next);
  }
  return seconds;
}

std::string SpeculativeCostModel::describe() const {
  std::string drafter = ratio_ >= 0 ? fmt::format("{} x target per pass", ratio_)
                                    : (draft_ ? draft_->describe() : std::string("none (host)"));
  return fmt::format("{} + speculative(k={}, draft={})", target_->describe(), k_, drafter);
}

}  // namespace pagesim::sim
