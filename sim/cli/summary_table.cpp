#include "sim/cli/summary_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace pagesim::sim {

std::string format_results_table(const std::vector<PointResult>& results) {
  std::size_t w = 5;
  for (const auto& r : results) w = std::max(w, r.label.size());
  std::string out = fmt::format("{:<{}}  {:>7} {:>7} {:>7} {:>7} {:>7}  {:>7} {:>8} {:>9} {:>7}\n", "run", w,
                                "tokens%", "resv%", "over%", "round%", "free%", "batch", "req/s", "norm.lat", "preempt");
  out += fmt::format("{:<{}}  {:>7} {:>7} {:>7} {:>7} {:>7}  {:>7} {:>8} {:>9} {:>7}\n", "", w, "", "", "", "", "",
                     "(reqs)", "", "(s/tok)", "");
  for (const auto& r : results) {
    const Summary& s = r.summary;
    const MemoryPct& m = s.memory_pct;
    out += fmt::format("{:<{}}  {:7.1f} {:7.1f} {:7.1f} {:7.1f} {:7.1f}  {:7.2f} {:8.3f} {:9.4f} {:7}\n",
                       r.label.empty() ? "run" : r.label, w, m.token_states, m.reserved, m.over_reserved, m.rounding,
                       m.free, s.mean_batched_requests, s.throughput_rps, s.normalized_latency_s_per_token,
                       s.preemptions);
  }
  return out;
}

}  // namespace pagesim::sim
