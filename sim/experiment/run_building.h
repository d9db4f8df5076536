// What building a run shares with running it and with sweeps, internal to sim/experiment
// (build_run.cpp, experiment.cpp, experiment_sweep.cpp): errors and warnings located at a
// config key, the words for a request the built pool could never hold, and the text of
// config.resolved.yaml.
#pragma once

#include <cmath>
#include <exception>
#include <new>
#include <string>

#include "sim/config/config_error.h"
#include "sim/config/config_origin.h"
#include "sim/config/experiment_config.h"
#include "sim/experiment/experiment.h"
#include "traces/trace_error.h"
#include "traces/workload_spec.h"

namespace pagesim::sim {

// Runs `build`, turning a component's own error into a ConfigError on `key` (or, for a
// workload spec's error, on the field it names: workload.arrival.rate, ...) at the line the
// config's origin recorded for it.
template <class F>
auto in_section(const ConfigOrigin& origin, const std::string& key, F&& build) {
  try {
    return build();
  } catch (const ConfigError&) {
    throw;
  } catch (const traces::TraceError&) {
    throw;  // names the trace file and line itself
  } catch (const traces::SpecError& e) {
    // The workload's seed is the experiment's top-level `seed` (parse_experiment copies it).
    const std::string path = key == "workload" && e.field() == "seed" ? "seed" : key + "." + e.field();
    std::string message = e.what();
    if (message.rfind(e.field() + ": ", 0) == 0) message.erase(0, e.field().size() + 2);
    throw origin.error(path, message);
  } catch (const std::bad_alloc&) {
    throw;  // build_run names the setting that sized what did not fit
  } catch (const std::exception& e) {
    throw origin.error(key, e.what());
  }
}

// A warning located like an error: "file:line: key: message".
inline std::string warning(const ConfigOrigin& origin, const std::string& key, const std::string& message) {
  return origin.error(key, message).what();
}

inline double gib(double bytes) { return bytes / std::pow(2.0, 30); }

// What to change for a request that can never be scheduled, by the key that keeps it out.
std::string unschedulable_hint(const ExperimentConfig& c, const Run& run, const std::string& key);

// config.resolved.yaml's text: the config with the limits the run's allocator was built
// with (they follow the model unless the file sets them); --resume compares it byte for
// byte with a kept point's.
std::string resolved_config_text(const ExperimentConfig& c, const Run& run);

}  // namespace pagesim::sim
