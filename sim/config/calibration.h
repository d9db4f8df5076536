// Calibration files: fitted config values an experiment takes by naming the file.
//
// `pagesim calibrate` (python/pagesim/reports/sim_to_real/calibrate.py) writes a YAML file whose `values`
// map dotted config keys (cost.host.step_s, client.latency_s, ...) to scalars, beside a
// `fit` section saying how they were found (read by people, not here). An experiment names
// one with the top-level key `calibration: PATH` (relative to the working directory, as a
// trace's path is; `none` names no file, so --set calibration=none turns it off). Every
// key of `values` that the experiment (or a --set, or a sweep point) does not give itself
// is set from the file, within the sections the experiment has: a value under `client` or
// `cost` is taken only by an experiment that has that section (a calibration adds no
// client_metrics.json to a run that asked for none). Keys the experiment gives win. The
// values then go through the same checks as if written in the experiment; an error on one
// names the calibration file and the key (CalibratedKeys::rethrow).
// Stateless functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"

namespace pagesim::sim {

inline constexpr const char* kNoCalibration = "none";
// The largest calibration file read (bytes): a file of a few dozen values is a few KiB.
inline constexpr std::uintmax_t kMaxCalibrationBytes = 1 << 20;

// The keys a calibration filled in, and the file they came from.
struct CalibratedKeys {
  std::string file;               // the calibration file, as named
  std::vector<std::string> keys;  // dotted keys set from it
  // Rethrows `e` (an error on the experiment's settings) as an error of the calibration
  // file when its key is one this calibration filled, naming `values.<key>` and how to
  // override it; else rethrows `e` as it is.
  [[noreturn]] void rethrow(const ConfigError& e) const;
};

// `root` with the values of the calibration file it names laid under its own keys (see
// above), and the keys filled; `root` itself when it names none. Never modifies `root`
// (shared subtrees stay as they are). Throws ConfigError naming `file` and the line of
// `calibration` when the file cannot be read, lacks a `values` map, or names another; naming
// the calibration file and the key for a value that is not a scalar or a malformed key path.
YAML::Node apply_calibration(const YAML::Node& root, const std::string& file, CalibratedKeys* filled);

}  // namespace pagesim::sim
