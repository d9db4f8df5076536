// `pagesim model NAME`: a model preset's numbers as the simulator uses them, as JSON — its
// architecture, parameter and weight counts, the KV bytes per token a uniform allocator
// charges, and its layer groups per GPU (sim/cost/model_spec.h layer_groups) under a
// tensor-parallel degree and KV dtype. Reports (experiments/heterogeneous_kv/) compute their
// memory tables from this output, so the numbers are pagesim's own. With --gpu it adds the KV
// pool vLLM would size on that GPU, term by term as vLLM's start-up log prints them
// (sim/cost/vllm_kv_budget.h). Pure function.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "sim/cost/model_spec.h"

namespace pagesim::sim::cli {

// The JSON document (indented, ending in a newline). Throws CostModelError when the model is
// invalid or tp does not fit it.
// `kv_budget`, when not null, is appended as "kv_budget" (sim::kv_budget_json).
std::string model_info_json(const ModelSpec& model, int tp, const nlohmann::ordered_json& kv_budget = nullptr);

}  // namespace pagesim::sim::cli
