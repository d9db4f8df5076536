#include "traces/workload_spec.h"

namespace pagesim::traces {

std::string_view to_string(WorkloadKind kind) {
  for (const auto& [value, name] : kWorkloadKindNames)
    if (value == kind) return name;
  return "?";
}

std::string_view to_string(LengthsKind kind) {
  for (const auto& [value, name] : kLengthsKindNames)
    if (value == kind) return name;
  return "?";
}

std::string_view to_string(WorkloadRng rng) {
  for (const auto& [value, name] : kWorkloadRngNames)
    if (value == rng) return name;
  return "?";
}

}  // namespace pagesim::traces
