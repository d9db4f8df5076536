// The checks parse_experiment makes of an experiment's values: each against its range, and
// settings valid alone that mean nothing together (which scheduler and allocator kinds go
// together, and what each supports: kind_rules.h). Each throws ConfigError on the key at
// fault, at the line config.origin recorded. parse_experiment calls check_values and
// check_speculative once the sections are read and check_replicas once replicas.overrides
// are parsed; check_experiment (experiment_config.h) runs the three. Internal to sim/config.
#pragma once

#include <string>

#include "sim/config/experiment_config.h"
#include "sim/config/kind_rules.h"

namespace pagesim::sim {

// Ranges, the cost, lora, cluster and objective sections, and the combinations that mean
// nothing (check_combinations: the kinds' pairing among them).
void check_values(const ExperimentConfig& c, const ServingKinds& kinds);
// The speculative section's values and what they need of the rest.
void check_speculative(const ExperimentConfig& c, const ServingKinds& kinds);
// After the overrides are parsed: settings that cannot hold across replicas.
void check_replicas(const ExperimentConfig& c, const ServingKinds& kinds);

// Why the cost key `key` (within the section: "compute_efficiency", "host") that only cost.kind
// `owner` reads is refused under cost.kind `kind` (YamlReader::kinds).
std::string cost_key_refusal(const std::string& key, CostModelKind kind, CostModelKind owner);

}  // namespace pagesim::sim
