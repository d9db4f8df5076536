// SpeculativeCostModel: a target model's cost model plus the time its drafter takes per step
// (speculative decoding, sim/core/speculative_settings.h).
//
// The target's pass is priced by the target model on the batch as the engine shaped it: each
// decode sequence's verified proposals are more query tokens (BatchShape::verify_tokens).
// Then the drafter proposes the next step's tokens for every sequence that sampled one, in
// k passes, as vLLM v1's proposers do after the target's forward pass
// (vllm/v1/spec_decode/eagle.py propose: one pass over the new tokens, then k - 1 passes of
// one token per sequence): the first pass covers the batch's new tokens (prompt chunks
// included: a draft model and EAGLE keep KV of the prompt too), each later one a decode
// batch of the sampling sequences over their contexts. A pass costs the draft's own model
// (a smaller model, or EAGLE's layers) or, with a cost ratio c >= 0, c times the target's
// time for the same batch (Leviathan et al. 2023's c). No drafter model and no ratio (n-gram
// prompt lookup, on the host): the drafter takes no GPU time. A batch in which no sequence
// samples runs no draft pass. Immutable after construction; thread-safe as its parts are.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "sim/cost/cost_model.h"

namespace pagesim::sim {

class SpeculativeCostModel final : public CostModel {
 public:
  // REQUIRES: target non-null, k >= 0. `draft` may be null (no model: the ratio or nothing).
  SpeculativeCostModel(std::unique_ptr<CostModel> target, std::unique_ptr<CostModel> draft, double draft_cost_ratio,
                       std::int64_t k);

  double iteration_seconds(const BatchShape& batch) const override {
    return target_->iteration_seconds(batch) + draft_seconds(batch);
  }
  double swap_seconds(std::int64_t blocks, std::int64_t block_size) const override {
    return target_->swap_seconds(blocks, block_size);
  }
  std::string describe() const override;
  CostNotes notes() const override { return target_->notes(); }

  // The drafter's seconds for `batch` (0 when it takes no GPU time or nothing samples).
  double draft_seconds(const BatchShape& batch) const;

 private:
  double pass_seconds(const BatchShape& pass) const;

  std::unique_ptr<CostModel> target_;
  std::unique_ptr<CostModel> draft_;
  double ratio_;
  std::int64_t k_;
};

}  // namespace pagesim::sim
