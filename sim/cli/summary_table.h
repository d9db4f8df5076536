// Human-readable tables of run results for the terminal.
#pragma once

#include <string>
#include <vector>

#include "sim/experiment/experiment.h"

namespace pagesim::sim {

// One row per point: memory classes (% of KV capacity, window average), batch size,
// throughput, normalized latency, preemptions.
std::string format_results_table(const std::vector<PointResult>& results);

}  // namespace pagesim::sim
