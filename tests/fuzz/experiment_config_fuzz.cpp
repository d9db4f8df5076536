// Fuzzes the experiment loader (sim/config): load_yaml_file(), apply_override() for each
// --set line, the Sweep and parse_experiment() of the file or of every sweep point —
// the path `pagesim run` takes before building anything. Input layout: experiment_input.h.
//
// The only accepted failure is ConfigError (it names file, line and key). A config that
// parses must also survive its own round trip: to_yaml() (config.resolved.yaml) parses
// again to the same YAML, else the resolved file would not reproduce the run.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "experiment_input.h"
#include "scratch_file.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/config/sweep.h"

namespace {

using namespace pagesim;

constexpr std::size_t kMaxPoints = 64;

std::string emit(const YAML::Node& node) {
  YAML::Emitter e;
  e << node;
  return e.c_str();
}

void check_round_trip(const sim::ExperimentConfig& config) {
  const std::string resolved = emit(sim::to_yaml(config));
  std::string again;
  try {
    again = emit(sim::to_yaml(sim::parse_experiment(YAML::Load(resolved), "config.resolved.yaml")));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "config.resolved.yaml does not parse: %s\n--- resolved:\n%s\n", e.what(), resolved.c_str());
    std::abort();
  }
  if (again != resolved) {
    std::fprintf(stderr, "config.resolved.yaml changes on a round trip\n--- first:\n%s\n--- second:\n%s\n",
                 resolved.c_str(), again.c_str());
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fuzz::ExperimentInput input = fuzz::split_experiment_input(fuzz::as_text(data, size));
  fuzz::ScratchFile file(input.yaml, ".yaml");
  try {
    const sim::Sweep sweep = sim::Sweep::from_file(file.path(), input.overrides);
    (void)sweep.keys();
    // Points are made on demand: only the first kMaxPoints of a large sweep are checked.
    const std::size_t n = std::min<std::size_t>(sweep.size(), kMaxPoints);
    for (std::size_t i = 0; i < n; ++i) {
      (void)sweep.label(i);
      (void)sweep.assignments(i);
      check_round_trip(sweep.config(i));
    }
  } catch (const sim::ConfigError& e) {
    fuzz::explain(e);
  }
  return 0;
}
