// Calibration files: fitted config values an experiment takes by naming the file.
//
// `pagesim calibrate` (python/sim_to_real/calibrate.py) writes a YAML file whose `values`
// map dotted config keys (cost.host.step_s, client.latency_s, ...) to scalars, beside a
// `fit` section saying how they were found (read by people, not here). An experiment names
// one with the top-level key `calibration: PATH` (relative to the working directory, as a
// trace's path is; `none` names no file, so --set calibration=none turns it off). Every
// key of `values` that the experiment (or a --set, or a sweep point) does not give itself
// is set from the file; keys the experiment gives win. The values then go through the same
// checks as if written in the experiment (an unknown key is an error naming it).
// Stateless functions.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

namespace pagesim::sim {

inline constexpr const char* kNoCalibration = "none";

// `root` with the values of the calibration file it names laid under its own keys; `root`
// itself when it names none. Never modifies `root` (shared subtrees stay as they are).
// Throws ConfigError naming `file` and the line of `calibration` when the file cannot be
// read or parsed, lacks a `values` map, or holds a value that is not a scalar; naming the
// calibration file and the key for a malformed key path.
YAML::Node apply_calibration(const YAML::Node& root, const std::string& file);

}  // namespace pagesim::sim
