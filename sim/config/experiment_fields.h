// The field list of an experiment file: every key of every section with its help text and
// default, written once (experiment_fields.cpp). The YAML reader (parse_experiment), the
// writer (to_yaml) and the key schema (experiment_keys) walk the same list through their
// visitors (yaml_visitors.h, key_schema.h), so the three cannot drift apart. Internal to
// sim/config.
#pragma once

#include "sim/config/experiment_config.h"
#include "sim/config/key_schema.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {

// Reads every field of `c` from the reader's map (ConfigError, as YamlReader throws it).
void visit_experiment_fields(YamlReader& r, ExperimentConfig& c);
// Writes every field of `c` into the writer's map.
void visit_experiment_fields(YamlWriter& w, ExperimentConfig& c);
// Describes every field, `c` giving the defaults.
void visit_experiment_fields(KeySchemaBuilder& b, ExperimentConfig& c);

}  // namespace pagesim::sim
