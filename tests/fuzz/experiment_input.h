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

// Prints an accepted error when PAGESIM_FUZZ_VERBOSE is set, to see how far an input got
// when reproducing it by hand (silent while fuzzing).
inline void explain(const std::exception& e) {
  static const bool verbose = std::getenv("PAGESIM_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "rejected: %s\n", e.what());
}

}  // namespace pagesim::fuzz
