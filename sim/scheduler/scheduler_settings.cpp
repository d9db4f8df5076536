#include "sim/scheduler/scheduler_settings.h"

#include <stdexcept>
#include <string>


namespace pagesim::sim {

std::string_view to_string(SchedulerKind k) {
  switch (k) {
    case SchedulerKind::kStatic: return "static";
    case SchedulerKind::kOrca: return "orca";
    case SchedulerKind::kVllm: return "vllm";
    case SchedulerKind::kSarathi: return "sarathi";
  }
  return "?";
}

std::string_view to_string(PreemptionMode m) {
  switch (m) {
    case PreemptionMode::kAuto: return "auto";
    case PreemptionMode::kRecompute: return "recompute";
    case PreemptionMode::kSwap: return "swap";
  }
  return "?";
}

SchedulerKind parse_scheduler_kind(std::string_view s) {
  for (auto k : {SchedulerKind::kStatic, SchedulerKind::kOrca, SchedulerKind::kVllm, SchedulerKind::kSarathi})
    if (s == to_string(k)) return k;
  throw std::invalid_argument("unknown scheduler '" + std::string(s) + "', expected one of: static, orca, vllm, sarathi");
}

PreemptionMode parse_preemption_mode(std::string_view s) {
  for (auto m : {PreemptionMode::kAuto, PreemptionMode::kRecompute, PreemptionMode::kSwap})
    if (s == to_string(m)) return m;
  throw std::invalid_argument("unknown preemption mode '" + std::string(s) + "', expected one of: auto, recompute, swap");
}

}  // namespace pagesim::sim
