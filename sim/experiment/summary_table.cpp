#include "sim/experiment/summary_table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace pagesim::sim {

std::string format_results_table(const std::vector<PointResult>& results) {
  std::size_t w = 5;
  for (const auto& r : results) w = std::max(w, r.label.size());
  // Columns that apply only to some runs appear when one of the results has them: bytes
  // swapped to the CPU and back, the prefix cache's hit rate, the memory sharing saved.
  auto any = [&](auto has) { return std::any_of(results.begin(), results.end(), [&](const auto& r) { return has(r.summary); }); };
  const bool swapped = any([](const Summary& s) { return s.swapped_bytes > 0; });
  const bool prefix = any([](const Summary& s) { return s.prefix_cache.has_value(); });
  const bool sharing = any([](const Summary& s) { return s.sharing_saving_pct > 0; });
  // The memory columns: the classes that partition capacity, from MemoryPct's field list.
  std::string title = fmt::format("{:<{}} ", "run", w), units = fmt::format("{:<{}} ", "", w);
  for (const auto& f : kMemoryPctFields) {
    if (f.table_title.empty()) continue;
    title += fmt::format(" {:>7}", f.table_title);
    units += fmt::format(" {:>7}", "");
  }
  title += fmt::format("  {:>7} {:>8} {:>9} {:>7}", "batch", "req/s", "norm.lat", "preempt");
  units += fmt::format("  {:>7} {:>8} {:>9} {:>7}", "(reqs)", "", "(s/tok)", "");
  if (swapped) {
    title += fmt::format(" {:>8}", "swapped");
    units += fmt::format(" {:>8}", "(GiB)");
  }
  if (prefix) {
    title += fmt::format(" {:>7}", "hit%");
    units += fmt::format(" {:>7}", "(prefix)");
  }
  if (sharing) {
    title += fmt::format(" {:>7}", "shared%");
    units += fmt::format(" {:>7}", "(saved)");
  }
  std::string out = title + "\n" + units + "\n";
  for (const auto& r : results) {
    const Summary& s = r.summary;
    out += fmt::format("{:<{}} ", r.label.empty() ? "run" : r.label, w);
    for (const auto& f : kMemoryPctFields)
      if (!f.table_title.empty()) out += fmt::format(" {:7.1f}", s.memory_pct.*f.member);
    out += fmt::format("  {:7.2f} {:8.3f} {:9.4f} {:7}", s.mean_batched_requests, s.throughput_rps,
                       s.normalized_latency_s_per_token, s.preemptions);
    if (swapped) out += fmt::format(" {:8.2f}", s.swapped_bytes / std::pow(2.0, 30));
    if (prefix) out += s.prefix_cache ? fmt::format(" {:7.1f}", 100 * s.prefix_hit_rate) : fmt::format(" {:>7}", "-");
    if (sharing) out += fmt::format(" {:7.1f}", s.sharing_saving_pct);
    out += "\n";
  }
  return out;
}

namespace {

// "00-a, 01-b, ... (3 more)": the folders of `points`.
std::string folder_list(const std::vector<PointResult>& results, const std::vector<std::size_t>& points) {
  std::string out;
  for (std::size_t k = 0; k < points.size() && k < kResumeNoteNames; ++k)
    out += (k == 0 ? "" : ", ") + point_folder(points[k], results[points[k]].label);
  if (points.size() > kResumeNoteNames) out += fmt::format(", ... ({} more)", points.size() - kResumeNoteNames);
  return out;
}

}  // namespace

std::string format_resume_note(const std::vector<PointResult>& results) {
  if (results.size() == 1 && results[0].label.empty())
    return results[0].kept ? "--resume kept the run's results (complete for this config)\n"
                           : "--resume ran the run (no complete results for this config)\n";
  std::vector<std::size_t> kept, ran;
  for (std::size_t i = 0; i < results.size(); ++i) (results[i].kept ? kept : ran).push_back(i);
  const std::string points = fmt::format("{} point{}", results.size(), results.size() == 1 ? "" : "s");
  if (kept.empty()) return fmt::format("--resume kept none of {} (none complete for this config); ran all\n", points);
  std::string out = fmt::format("--resume kept {} of {} (complete for this config): {}", kept.size(), points,
                                folder_list(results, kept));
  out += ran.empty() ? "; ran none\n" : fmt::format("; ran {}: {}\n", ran.size(), folder_list(results, ran));
  return out;
}

}  // namespace pagesim::sim
