// The pagesim command line: the subcommands and their options, declared once for both
// executables. `pagesim` declares every command; `pagesim-cuda` (cuda_handoff.h) declares
// only the commands that need CUDA, so the two parse those commands identically and the
// argument vector pagesim hands over means the same thing on both sides.
//
// Each add_* function adds one subcommand (or group) to `app` and binds its options to the
// fields of a CommandLine, which must outlive the parse. The returned pointer is owned by
// `app`; after app.parse(), `*command` is true for the subcommand that was given.
// Not thread-safe (CLI11 apps are not); one CommandLine per parse.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/cost/vllm_kv_budget.h"
#include "sim/profile/profile_command.h"
#include "sim/validate/validate_command.h"

namespace pagesim::sim::cli {

// Every value a pagesim command line can set, with the defaults the commands document.
struct CommandLine {
  // run, trace stats, trace gen, trace cache-curve
  std::string file;               // experiment YAML (run, trace gen) or trace file (trace stats)
  std::string out;                // output folder (run) or CSV (trace gen); run: empty = out/<name>
  std::vector<std::string> sets;  // --set key.path=value overrides, in order
  bool quiet = false;             // run: no progress line
  std::size_t jobs = 1;           // run: sweep points run at once (-j), each on its own thread
  bool overwrite = false;         // run: replace the results of another run in the output folder
  bool resume = false;            // run: keep the complete points of a sweep there, run the rest
  bool ray = false;               // run: points as Ray tasks (ray_handoff.h); set by main after the parse
  std::string ray_address;        // run --ray ADDRESS: the Ray cluster; empty = a local instance
  std::string format;             // trace stats, cache-curve, import: trace format; empty = detected
  std::uint64_t seed = 0;         // trace import: draws vllm-bench arrivals that the file does not record
  std::string simulated;          // trace compare: a run's folder or its requests.csv
  bool json = false;              // trace stats: JSON instead of a table

  // trace cache-curve (also file, format; out = the CSV, empty = none)
  std::vector<std::string> capacities;  // tokens, with an optional k / M / G suffix (10^3, 10^6, 10^9)
  std::vector<std::string> policies = {"fifo", "lfu"};  // simulated directly at each capacity
  std::int64_t block_size = 0;          // tokens per cache block; 0 = the trace's hash block
  std::int64_t hash_block_tokens = 0;   // tokens per hash id; 0 = the format's default
  bool full_blocks_only = false;        // cache full blocks only (the simulator's allocator)
  int points_per_decade = 20;           // LRU curve points per factor of 10

  // validate (options.file is set from batches_file after the parse)
  ValidateOptions validate;
  std::string batches_file;

  // model (a preset's numbers as JSON)
  std::string model_name;
  int model_tp = 1;
  std::string model_kv_dtype = "auto";
  // `pagesim model --gpu G`: also vLLM's KV budget on G (sim/cost/vllm_kv_budget.h).
  std::string model_gpu;
  std::string model_vllm_version = "0.15.1";
  sim::VllmProfileSettings model_profile;
  // plot (file = the results folder)
  std::vector<std::string> metrics;  // summary metrics drawn against the swept keys
  std::vector<std::string> plot_formats = {"png", "svg"};
  // compare (metrics as for plot; out = the folder of compare.csv and figures, empty = none)
  std::vector<std::string> compare_folders;  // results folders, the first the baseline
  std::vector<std::string> compare_names;    // a name per folder (default: the folders' names)
  std::vector<std::string> compare_formats = {"png"};

  // profile (options.out is set from profile_out after the parse)
  ProfileOptions profile;
  std::string profile_out;
  std::string profile_operators_out;
  std::string profile_operator_tables;
};

struct TraceCommands {
  CLI::App* stats = nullptr;
  CLI::App* gen = nullptr;
  CLI::App* cache_curve = nullptr;
  CLI::App* import = nullptr;   // benchmark result -> trace.csv + measured_requests.csv
  CLI::App* compare = nullptr;  // measured_requests.csv against a run's requests.csv (Python)
};

// A check for an integer option: it passes a value in [min_value, max_value] and otherwise
// says the rule, e.g. "--tp: expected an integer >= 1, found '0'" (CLI11's PositiveNumber and
// Range check a double range and print "Value 0 not in range 0.000000 to 1.79769e+308").
// Every integer option with a range uses it. Defined for std::int32_t, std::int64_t and
// std::size_t.
template <class T>
CLI::Validator integer_in(T min_value, T max_value = std::numeric_limits<T>::max());

CLI::App* add_run_command(CLI::App& app, CommandLine& cl);
TraceCommands add_trace_commands(CLI::App& app, CommandLine& cl);
CLI::App* add_validate_command(CLI::App& app, CommandLine& cl);
CLI::App* add_profile_command(CLI::App& app, CommandLine& cl);
CLI::App* add_model_command(CLI::App& app, CommandLine& cl);
CLI::App* add_presets_command(CLI::App& app);
// `pagesim schema` / `pagesim keys`: the experiment file's JSON Schema / key reference
// (sim/config/config_schema.h) on standard output.
CLI::App* add_schema_command(CLI::App& app);
CLI::App* add_keys_command(CLI::App& app);
CLI::App* add_plot_command(CLI::App& app, CommandLine& cl);
// `pagesim compare A B [C...]`: handed over to python -m pagesim compare (python/pagesim/compare.py).
CLI::App* add_compare_command(CLI::App& app, CommandLine& cl);
// The arguments of `python -m pagesim compare` for the parsed compare command `cl`.
std::vector<std::string> compare_arguments(const CommandLine& cl);
// `pagesim calibrate ARGS...`: every argument is passed to python -m pagesim.reports.sim_to_real calibrate.
CLI::App* add_calibrate_command(CLI::App& app);

// Copies the values CLI11 holds as strings into the commands' options (validate.file,
// profile.out) and records the command as typed (profile.command_line).
// REQUIRES: app.parse(argc, argv) returned without throwing.
void finish_parse(CommandLine& cl, int argc, const char* const* argv);

// The usage error for a command line whose subcommand is not one `app` (or the group it is
// under, e.g. trace) has, with the close names: "unknown subcommand 'rnu': did you mean run?
// (pagesim --help lists the commands)"; "" when every subcommand given is known (CLI11 then
// reports any other mistake). REQUIRES: every subcommand has been added to `app`.
std::string unknown_subcommand_message(CLI::App& app, int argc, const char* const* argv);

// The command that continues the parsed `pagesim run` `cl` into `out` with --resume, each
// argument quoted for a POSIX shell where it needs it:
//   pagesim run exp.yaml --out out/exp --resume --set 'workload.arrival={rate: 2}' -j 4
std::string resume_command(const CommandLine& cl, const std::string& out);

// The one line main prints when an input needs more memory than the process may use
// (std::bad_alloc reached the top): "pagesim validate b.jsonl: out of memory (std::bad_alloc):
// ..." — the command as typed (argv[1...]), so the input at fault is named.
std::string out_of_memory_message(int argc, const char* const* argv);

}  // namespace pagesim::sim::cli
