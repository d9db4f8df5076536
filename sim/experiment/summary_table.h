// Human-readable tables of run results for the terminal: `pagesim run`'s closing table, which
// `python -m pagesim sweep` (and so `pagesim run --ray`) prints too.
#pragma once

#include <string>
#include <vector>

#include "sim/experiment/experiment.h"

namespace pagesim::sim {

// One row per point: memory classes (% of KV capacity, window average), batch size,
// throughput, normalized latency, preemptions.
std::string format_results_table(const std::vector<PointResult>& results);

// What --resume did, one line: the points it kept (complete for the same config) and those
// it ran, by folder (at most kResumeNoteNames of each, then how many more), e.g.
//   "--resume kept 2 of 4 points (complete for this config): 00-a, 01-b; ran 2: 02-c, 03-d\n"
// For a run without sweep (one result, no label): "--resume kept the run's results ...".
std::string format_resume_note(const std::vector<PointResult>& results);
inline constexpr std::size_t kResumeNoteNames = 8;

// The line printed under the table: what the memory columns average.
inline constexpr const char* kResultsTableNote =
    "memory: % of KV capacity averaged over scheduler iterations in the measurement window\n";

}  // namespace pagesim::sim
