// `pagesim profile --device cuda --model PRESET [--out FILE]`: measures a calibration profile
// on the GPU it runs on and writes it, atomically, as a profile CSV that ProfileCostModel
// reads (sim/cost/profile_cost_model.h) — the measured alternative to the roofline model.
// Then, on a device kind with published operator tables (H100 SXM, H200, A100 80 GB, L40S),
// it times the operators `cost.kind: operators` reads and writes them beside the tables'
// values (operator_check.h), so every profile cross-checks the tables.
//
// What is timed and how: profile_grid.h (the points) and profile_measure.h (the method).
// The CSV opens with '#' lines naming the device, the UTC date, the command, the model and
// the method. Without CUDA in the build, or without a usable device, it writes nothing and
// returns 1 with a one-line message. Stateless; one profile at a time per process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "sim/cost/model_spec.h"
#include "sim/profile/profile_grid.h"

namespace pagesim::sim {

struct ProfileOptions {
  std::string device = "cuda";     // only "cuda": the profile measures a GPU
  std::string model;               // model preset (sim/cost/presets.h), e.g. "opt-13b"; required
  std::filesystem::path out;       // CSV to write; empty: "profile-<model>.csv"
  // The operator check (operator_check.h), run after the profile on a device with published
  // tables: its CSV (empty: out with "-operators" before ".csv") and the tables folder (empty:
  // default_operator_tables(), the check skipped with a message when it does not exist; given:
  // it must exist).
  std::filesystem::path operators_out;
  std::filesystem::path operator_tables;
  std::int32_t warmup = 3;         // untimed runs before each point's timed runs
  std::int32_t repeats = 20;       // timed runs per point (the median is kept); >= 20
  ProfileGridOptions grid;         // which points are measured (profile_grid.h)
  std::string command_line;        // recorded in the CSV header; empty: rebuilt from options
};

// Returns 0 after writing the CSV; 1 on any error (message on `err`). Progress and a summary
// go to `out`.
int run_profile_command(const ProfileOptions& options, std::ostream& out, std::ostream& err);

// True when this build can run the profile (PAGESIM_HAVE_CUDA).
bool profile_has_cuda();
// True when CUDA is built in and a device is usable; otherwise `why` (if given) says why.
bool profile_device_available(std::string* why);

// The command as it would be typed: "pagesim profile --device cuda --model M ..." with every
// option that differs from its default.
std::string profile_command_line(const ProfileOptions& options);

// The '#' lines of the CSV (without the '# '): device, date, command, model, method.
std::vector<std::string> profile_header_comments(const ModelSpec& model, const ProfileOptions& options,
                                                 const std::string& device, const std::string& date_utc,
                                                 const std::string& command);

// Checks everything that needs no GPU — device name, model preset, repeats, warm-up, grid
// options — and returns the model and the grid. Throws std::invalid_argument (CostModelError
// for model and grid problems) naming the option.
struct ProfilePlan {
  ModelSpec model;
  ProfileGrid grid;
  std::filesystem::path out;
  std::filesystem::path operators_out;
  std::filesystem::path operator_tables;  // empty: no tables, the operator check is skipped
  std::string operator_check_skip;        // why the model cannot be checked ("" when it can)
};
ProfilePlan plan_profile(const ProfileOptions& options);

}  // namespace pagesim::sim
