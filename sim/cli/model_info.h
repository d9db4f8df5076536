// `pagesim model NAME`: a model preset's numbers as the simulator uses them, as JSON — its
// architecture, parameter and weight counts, the KV bytes per token a uniform allocator
// charges, and its layer groups per GPU (sim/cost/model_spec.h layer_groups) under a
// tensor-parallel degree and KV dtype. Reports (experiments/heterogeneous_kv/) compute their
// memory tables from this output, so the numbers are pagesim's own. Pure function.
#pragma once

#include <string>

#include "sim/cost/model_spec.h"

namespace pagesim::sim::cli {

// The JSON document (indented, ending in a newline). Throws CostModelError when the model is
// invalid or tp does not fit it.
std::string model_info_json(const ModelSpec& model, int tp);

}  // namespace pagesim::sim::cli
