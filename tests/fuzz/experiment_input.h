// ExperimentInput: how the experiment harnesses read a fuzz input, and the bounds they keep.
//
// An input is an experiment YAML file, optionally followed by a NUL byte and `--set`
// assignments, one per line ("kv.slots=64"). The seeds in corpus/ and the dictionary
// experiment.dict are written for this layout. Plain values; no state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace pagesim::fuzz {

struct ExperimentInput {
  std::string yaml;                  // the experiment file's text
  std::vector<std::string> overrides;  // --set assignments, in order (empty lines dropped)
};

inline ExperimentInput split_experiment_input(std::string_view text) {
  ExperimentInput in;
  const std::size_t nul = text.find('\0');
  in.yaml = std::string(text.substr(0, nul));
  if (nul == std::string_view::npos) return in;
  std::string_view rest = text.substr(nul + 1);
  while (!rest.empty()) {
    const std::size_t eol = rest.find('\n');
    const std::string_view line = rest.substr(0, eol);
    if (!line.empty()) in.overrides.emplace_back(line);
    if (eol == std::string_view::npos) break;
    rest.remove_prefix(eol + 1);
  }
  return in;
}

// The number of points expand_sweep() would make of `root` (grid size times cases), counted
// from the YAML without expanding; 0 without a sweep, saturating at `cap` + 1. The harnesses
// skip inputs above their cap: a sweep's size is the user's choice and its cost is linear in
// it by design (bench/ measures expansion speed), so a large product only slows fuzzing.
inline std::size_t sweep_points_bound(const YAML::Node& root, std::size_t cap) {
  if (!root.IsMap()) return 0;
  const YAML::Node sweep = root["sweep"];
  if (!sweep || !sweep.IsMap()) return 0;
  std::size_t points = 1;
  for (const auto& kv : sweep) {
    const std::size_t n = kv.second.IsSequence() ? kv.second.size() : 1;
    if (n == 0) continue;
    if (points > (cap + 1) / n) return cap + 1;
    points *= n;
  }
  return points > cap ? cap + 1 : points;
}

// Prints an accepted error when PAGESIM_FUZZ_VERBOSE is set, to see how far an input got
// when reproducing it by hand (silent while fuzzing).
inline void explain(const std::exception& e) {
  static const bool verbose = std::getenv("PAGESIM_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "rejected: %s\n", e.what());
}

}  // namespace pagesim::fuzz
