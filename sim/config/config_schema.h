// The experiment file's reference, generated from the reader's own field list
// (experiment_keys(), key_schema.h), so it cannot drift from what pagesim accepts:
//   experiment_json_schema()   a JSON Schema (draft 2020-12) of an experiment file, for
//                              editors (completion, validation) and `pagesim schema`;
//                              docs/experiment.schema.json is its committed copy
//   experiment_keys_markdown() the table of every key with its type, default and allowed
//                              values: `pagesim keys`, docs/experiment-keys.md
// The schema checks structure (known keys, types, names of choices and presets); the reader
// checks the rest (ranges, combinations, files). tests/sim/config/config_schema_test.cpp
// fails when a committed copy is stale; tests/python validate every bundled experiment.
// Pure functions.
#pragma once

#include <string>

namespace pagesim::sim {

// The JSON Schema as indented JSON text (ends with a newline).
std::string experiment_json_schema();

// The Markdown reference of every key (ends with a newline).
std::string experiment_keys_markdown();

}  // namespace pagesim::sim
