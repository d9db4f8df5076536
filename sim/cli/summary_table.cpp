#include "sim/cli/summary_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace pagesim::sim {

std::string format_results_table(const std::vector<PointResult>& results) {
  std::size_t w = 5;
  for (const auto& r : results) w = std::max(w, r.label.size());
  // The memory columns: the classes that partition capacity, from MemoryPct's field list.
  std::string title = fmt::format("{:<{}} ", "run", w), units = fmt::format("{:<{}} ", "", w);
  for (const auto& f : kMemoryPctFields) {
    if (f.table_title.empty()) continue;
    title += fmt::format(" {:>7}", f.table_title);
    units += fmt::format(" {:>7}", "");
  }
  std::string out = title + fmt::format("  {:>7} {:>8} {:>9} {:>7}\n", "batch", "req/s", "norm.lat", "preempt");
  out += units + fmt::format("  {:>7} {:>8} {:>9} {:>7}\n", "(reqs)", "", "(s/tok)", "");
  for (const auto& r : results) {
    const Summary& s = r.summary;
    out += fmt::format("{:<{}} ", r.label.empty() ? "run" : r.label, w);
    for (const auto& f : kMemoryPctFields)
      if (!f.table_title.empty()) out += fmt::format(" {:7.1f}", s.memory_pct.*f.member);
    out += fmt::format("  {:7.2f} {:8.3f} {:9.4f} {:7}\n", s.mean_batched_requests, s.throughput_rps,
                       s.normalized_latency_s_per_token, s.preemptions);
  }
  return out;
}

}  // namespace pagesim::sim
