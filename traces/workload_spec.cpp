#include "traces/workload_spec.h"

namespace pagesim::traces {

WorkloadKind parse_workload_kind(std::string_view name, std::string_view field) {
  return parse_enum_name<WorkloadKind>(kWorkloadKindNames, name, field);
}

LengthsKind parse_lengths_kind(std::string_view name, std::string_view field) {
  return parse_enum_name<LengthsKind>(kLengthsKindNames, name, field);
}

std::string_view to_string(WorkloadKind kind) {
  return enum_name<WorkloadKind>(kWorkloadKindNames, kind);
}

std::string_view to_string(LengthsKind kind) {
  return enum_name<LengthsKind>(kLengthsKindNames, kind);
}

std::string_view to_string(WorkloadRng rng) {
  return enum_name<WorkloadRng>(kWorkloadRngNames, rng);
}

}  // namespace pagesim::traces
