// pagesim: the command-line front end.
//   pagesim run EXP.yaml [--out DIR] [--set key.path=value]... [-j N] [--overwrite | --resume]
//                        [--ray [ADDRESS]]  (Ray: execs the Python package, ray_handoff.h)
//   pagesim trace stats FILE [--format F] [--json]
//   pagesim trace gen EXP.yaml --out FILE [--set key.path=value]...
//   pagesim trace cache-curve FILE [--out CSV] [--capacity T,...] [--policy P,...] [--block-size B]
//   pagesim validate BATCHES.jsonl|RUN_FOLDER|SWEEP_FOLDER [--device cpu|cuda] [--heads H --kv-heads K --head-dim D --dtype T]
//   pagesim profile --device cuda --model PRESET [--out FILE] [grid options]
//   pagesim presets
//   pagesim schema | pagesim keys   (the experiment file's JSON Schema | key reference)
//   pagesim plot OUT [--metric a,b] [--format png,svg,pdf]
//   pagesim compare A B [C...] [--name N]... [--metric a,b] [--out DIR] [--format png,pdf] (python/pagesim)
//   pagesim calibrate --measured FILE --configs DIR --out FILE [...] (python/pagesim/reports/sim_to_real)
// Errors print one line naming the file, line or key and exit with status 1 (2 for usage);
// a run stopped by SIGINT / SIGTERM exits with 128 + the signal's number.
// `validate --device cuda` and `profile` run in pagesim-cuda, beside this executable
// (cuda_handoff.h): pagesim itself links no CUDA library.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cli/command_line.h"
#include "sim/cli/guarded_main.h"
#include "sim/cli/cuda_handoff.h"
#include "sim/cli/interrupt_watcher.h"
#include "sim/cli/model_info.h"
#include "sim/cli/presets_listing.h"
#include "sim/config/config_schema.h"
#include "sim/cli/progress_reporter.h"
#include "sim/cli/python_handoff.h"
#include "sim/cli/ray_handoff.h"
#include "sim/analysis/cache_curve.h"
#include "sim/experiment/summary_table.h"
#include "sim/config/config_error.h"
#include "sim/config/enum_names.h"
#include "sim/config/experiment_config.h"
#include "sim/config/kind_rules.h"
#include "sim/cost/presets.h"
#include "sim/config/sweep.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/result_folder.h"
#include "sim/output/build_info.h"
#include "sim/validate/cpu_paged_attention.h"
#include "sim/validate/validate_command.h"
#include "sim/validate/validate_path.h"
#include "traces/make_source.h"
#include "traces/native_csv_writer.h"
#include "traces/trace_error.h"
#include "traces/trace_format.h"
#include "traces/trace_stats.h"

namespace {

using namespace pagesim;

// Each point's horizon for the progress report (progress_reporter.h): its workload's
// duration, or minus its request count, or 0. None when the file does not parse (the run
// itself reports that error).
std::vector<double> point_horizons(const sim::cli::CommandLine& cl) {
  std::vector<double> horizons;
  try {
    const sim::Sweep sweep = sim::Sweep::from_file(cl.file, cl.sets);
    for (std::size_t i = 0; i < sweep.size(); ++i) {
      const traces::WorkloadSpec w = sweep.config(i).workload;
      horizons.push_back(w.duration_s > 0 ? w.duration_s : -static_cast<double>(w.max_requests));
    }
  } catch (const std::exception&) {
    horizons.clear();
  }
  return horizons;
}

// Progress on stderr (progress_reporter.h; none with --quiet); every report, and the start
// of each point, first stops the run if `watcher` saw a signal.
sim::ProgressFactory run_progress(bool quiet, sim::cli::ProgressReporter& reporter,
                                  const sim::cli::InterruptWatcher& watcher) {
  return [quiet, &reporter, &watcher](const std::string& label, std::size_t index,
                                      std::size_t count) -> sim::ProgressFn {
    watcher.throw_if_stopped();
    sim::ProgressFn report = quiet ? sim::ProgressFn{} : reporter.for_point(label, index, count);
    return [report, &watcher](double sim_now, std::int64_t arrived, std::int64_t finished) {
      watcher.throw_if_stopped();
      if (report) report(sim_now, arrived, finished);
    };
  };
}

int cmd_run(const sim::cli::CommandLine& cl) {
  const std::filesystem::path out = cl.out.empty()
                                        ? std::filesystem::path("out") / std::filesystem::path(cl.file).stem()
                                        : std::filesystem::path(cl.out);
  const sim::ExistingResults existing = cl.overwrite ? sim::ExistingResults::kOverwrite
                                        : cl.resume  ? sim::ExistingResults::kResume
                                                     : sim::ExistingResults::kRefuse;
  if (cl.ray) {
    const std::string why = sim::cli::exec_ray_sweep(cl, out);  // on success this never returns
    std::cerr << "pagesim: error: " << why << "\n";
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const sim::cli::InterruptWatcher watcher;  // before any other thread starts
  constexpr double kLogEverySeconds = 10;
  sim::cli::ProgressReporter reporter(cl.quiet ? std::vector<double>{} : point_horizons(cl), isatty(STDERR_FILENO),
                                      kLogEverySeconds);
  std::vector<sim::PointResult> results;
  sim::SweepStop stop;
  try {
    results = sim::run_experiment_file(cl.file, cl.sets, out, run_progress(cl.quiet, reporter, watcher), cl.jobs,
                                       existing, &stop);
  } catch (const sim::cli::Interrupted& e) {
    reporter.clear();
    if (std::filesystem::exists(out))
      std::cerr << fmt::format("pagesim: {}; temporary files removed; finished results stay in {} (continue a "
                               "sweep with --resume)\n",
                               e.what(), out.string());
    else
      std::cerr << fmt::format("pagesim: {}; nothing was written\n", e.what());
    return e.exit_status();
  } catch (const std::exception& e) {
    if (stop.points == 0) throw;  // not a sweep stopped part-way: main reports it
    // A point failed while the sweep ran: what finished stays, with the command that runs the rest.
    reporter.clear();
    std::cerr << "pagesim: error: " << e.what() << "\n";
    std::cerr << fmt::format("pagesim: the sweep stopped: {} of {} points finished, {} failed, {} not run{}; once the "
                             "cause is fixed, run the rest with\n  {}\n",
                             stop.finished, stop.points, stop.failed, stop.not_run,
                             stop.table_written ? fmt::format(" ({} lists every point with its status)",
                                                              (out / "sweep.csv").string())
                                                : std::string(),
                             sim::cli::resume_command(cl, out.string()));
    return 1;
  }
  reporter.clear();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& r : results)
    for (const auto& w : r.notes.warnings)
      std::cerr << "pagesim: warning: " << (r.label.empty() ? "" : r.label + ": ") << w << "\n";
  if (existing == sim::ExistingResults::kResume) std::cerr << "pagesim: " << sim::format_resume_note(results);
  std::cout << sim::format_results_table(results);
  std::cout << sim::kResultsTableNote;
  std::cout << fmt::format("results in {} ({:.2f} s wall)\n", out.string(), wall);
  // A signal after the last point: the results are complete, but the run was asked to stop.
  if (const int s = watcher.stop_requested()) return sim::cli::Interrupted(s).exit_status();
  return 0;
}

// --format's value: a name of kTraceFormatNames; empty = auto.
traces::TraceFormat format_option(const std::string& format) {
  if (format.empty()) return traces::TraceFormat::kAuto;
  const auto named = sim::find_enum(traces::kTraceFormatNames, format);
  if (!named)
    throw std::invalid_argument("--format: expected one of " + sim::enum_name_list(traces::kTraceFormatNames) +
                                ", found " + traces::quote_found(format));
  return *named;
}

int cmd_trace_stats(const std::string& file, const std::string& format, bool json) {
  traces::TraceFileOptions opt;
  opt.format = format_option(format);
  const traces::TraceFormat f = opt.format == traces::TraceFormat::kAuto ? traces::detect_format(file) : opt.format;
  std::unique_ptr<traces::RequestSource> source;
  if (f == traces::TraceFormat::kLengths) {
    // Lengths only: stream the rows in file order on a nominal 1 req/s clock.
    traces::WorkloadSpec w;
    w.kind = traces::WorkloadKind::kSynthetic;
    w.arrival.kind = traces::ArrivalKind::kConstant;
    w.arrival.rate = 1.0;
    w.lengths.kind = traces::LengthsKind::kFileOrder;
    w.lengths.path = file;
    source = traces::make_source(w);
    std::cerr << "note: " << file << " has lengths only; arrival statistics assume a nominal 1 req/s\n";
  } else {
    source = traces::open_trace(file, opt);
  }
  traces::TraceStats stats = traces::compute_stats(*source);
  // Zeros for every percentile and mean would read as measurements; `pagesim run` refuses
  // such a trace in the same words.
  if (stats.requests == 0)
    throw std::invalid_argument(fmt::format("the trace '{}' holds no request: expected at least one", file));
  if (json) std::cout << traces::stats_to_json(stats).dump(2) << "\n";
  else std::cout << traces::format_stats_table(stats);
  return 0;
}

// "3000000", "3M", "512k", "1.5G": tokens (k, M, G = 10^3, 10^6, 10^9).
std::int64_t parse_token_count(const std::string& text) {
  std::size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  double scale = 1.0;
  const std::string suffix = used > 0 ? text.substr(used) : "";
  if (suffix == "k" || suffix == "K") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "G") scale = 1e9;
  else if (!suffix.empty()) used = 0;
  const double tokens = v * scale;
  if (used == 0 || !std::isfinite(tokens) || tokens < 0 || tokens > 9e18 || tokens != std::floor(tokens))
    throw std::invalid_argument("--capacity: expected a whole number of tokens >= 0, optionally with a k, M or G "
                                "suffix (e.g. 3M), found " +
                                traces::quote_found(text));
  return static_cast<std::int64_t>(tokens);
}

int cmd_trace_cache_curve(const sim::cli::CommandLine& cl) {
  traces::TraceFileOptions opt;
  opt.format = format_option(cl.format);
  opt.hash_block_tokens = cl.hash_block_tokens;
  sim::CacheCurveOptions o;
  o.block_size = cl.block_size;
  o.partial_tail = !cl.full_blocks_only;
  o.points_per_decade = cl.points_per_decade;
  for (const std::string& c : cl.capacities) o.capacities_tokens.push_back(parse_token_count(c));
  o.policies.clear();
  for (const std::string& p : cl.policies) o.policies.push_back(*sim::find_enum(sim::kIdealPolicyNames, p));
  auto source = traces::open_trace(cl.file, opt);
  const sim::CacheCurve curve = sim::compute_cache_curve(*source, o);
  std::cout << sim::format_cache_curve_table(curve);
  if (!cl.out.empty()) {
    sim::write_cache_curve_csv(curve, cl.out);
    std::cout << fmt::format("wrote {} points to {}\n", curve.points.size(), cl.out);
  }
  return 0;
}

int cmd_trace_gen(const std::string& file, const std::string& out, const std::vector<std::string>& sets) {
  // One trace per file: a sweep that varies the workload (or the seed it draws from) has one
  // per point, and writing the base's would not be any point's.
  for (const std::string& key : sim::Sweep::from_file(file, sets).keys())
    if (key == "seed" || key == "workload" || key.rfind("workload.", 0) == 0)
      throw sim::ConfigError(file, 0, "sweep." + key,
                             "the sweep varies the workload, so each point has its own trace; trace gen writes "
                             "one: --set 'sweep={}' --set " + key + "=VALUE picks one");
  YAML::Node root = sim::load_yaml_file(file);
  std::vector<sim::KeyAssignment> laid;
  for (const auto& s : sets) laid.push_back(sim::apply_override(root, s));
  sim::drop_other_kinds_keys(root, laid, sim::kServingKinds);
  root.remove("sweep");
  sim::ExperimentConfig c = sim::parse_experiment(root, file);
  auto source = sim::make_workload_source(c);
  traces::NativeCsvColumns cols;
  cols.hash_ids = true;
  traces::NativeCsvWriter writer(out, cols);
  std::int64_t n = 0;
  bool hash_ids = false;
  while (auto r = source->next()) {
    writer.write(*r);
    hash_ids |= !r->hash_ids.empty();
    ++n;
  }
  // A header-only file is a trace that run, stats and cache-curve refuse: name the key that
  // left it empty instead (nothing is written: the writer is not committed).
  if (n == 0) throw sim::no_request_error(c);
  writer.commit();
  std::cout << fmt::format("wrote {} requests to {}\n", n, out);
  // The native format does not record how many tokens a hash id covers; without it a
  // replay never builds prefix-cache keys from the ids.
  if (hash_ids && source->hash_block_tokens() > 0)
    std::cerr << fmt::format("note: each hash id covers {} tokens; to replay with the prefix cache set "
                             "workload.trace.hash_block_tokens: {}\n",
                             source->hash_block_tokens(), source->hash_block_tokens());
  return 0;
}

int cmd_trace_import(const sim::cli::CommandLine& cl) {
  traces::TraceFileOptions opt;
  opt.format = format_option(cl.format);
  opt.seed = cl.seed;
  const traces::BenchmarkRequests b = traces::read_benchmark_requests(cl.file, opt);
  const std::filesystem::path out(cl.out);
  const std::string trace_csv = (out / "trace.csv").string();
  const std::string measured_csv = (out / "measured_requests.csv").string();
  auto replay = traces::replay_source(b);  // refuses a file without a request to replay
  std::filesystem::create_directories(out);
  traces::write_native_csv(trace_csv, *replay, traces::NativeCsvColumns{.n = false, .beam_width = false});
  traces::write_measured_requests_csv(b, measured_csv);
  std::cout << "imported " << traces::describe(b) << "\n";
  // A result file holds no token contents, so the trace has no hash ids: the config to replay
  // it says the prefix cache is off, and why (with it on, every replay would warn).
  std::cout << fmt::format("wrote {}; replay it with these keys of an experiment:\n"
                           "  workload: {{kind: trace, trace: {{path: {}}}}}\n"
                           "  allocator: {{prefix_cache: false}}  # no token contents (hash_ids) in a benchmark "
                           "result: no prompt could hit a prefix cache\n",
                           trace_csv, trace_csv);
  std::cout << fmt::format("wrote {} (after pagesim run: pagesim trace compare {} RUN_FOLDER)\n", measured_csv,
                           measured_csv);
  return 0;
}

// `python -m pagesim.reports.sim_to_real` (calibrate, trace compare): numpy and yaml, from python/.
sim::cli::PythonHandoff sim_to_real_handoff() {
  return {.module = "pagesim.reports.sim_to_real",
          .needs = {"numpy", "yaml"},
          .path = {sim::cli::python_dir()},
          .install_hint = "pip install numpy pyyaml into that Python (a venv's: <venv>/bin/python -m pip install numpy "
                          "pyyaml), or in a checkout make the project's venv with .ci/venv"};
}

}  // namespace

int main(int argc, char** argv) {
  // Named, so help says `pagesim`, not argv[0] (the installed command execs <pkg>/bin/pagesim).
  CLI::App app{"pagesim: trace-driven simulator of KV-cache memory management for LLM serving", "pagesim"};
  app.require_subcommand(1);
  app.set_version_flag("--version", sim::version_text(), "print pagesim's version and source commit, then exit");
  sim::cli::CommandLine cl;
  auto* run = sim::cli::add_run_command(app, cl);
  const sim::cli::TraceCommands trace = sim::cli::add_trace_commands(app, cl);
  auto* validate = sim::cli::add_validate_command(app, cl);
  auto* profile = sim::cli::add_profile_command(app, cl);
  auto* model = sim::cli::add_model_command(app, cl);
  auto* presets = sim::cli::add_presets_command(app);
  auto* schema = sim::cli::add_schema_command(app);
  auto* keys = sim::cli::add_keys_command(app);
  auto* plot = sim::cli::add_plot_command(app, cl);
  auto* compare = sim::cli::add_compare_command(app, cl);
  auto* calibrate = sim::cli::add_calibrate_command(app);

  if (const std::string unknown = sim::cli::unknown_subcommand_message(app, argc, argv); !unknown.empty()) {
    std::cerr << "pagesim: error: " << unknown << "\n";
    return 2;
  }
  return sim::cli::guarded_main(app, cl, argc, argv, [&]() -> int {
    cl.ray = run->count("--ray") > 0;
    if (*run) return cmd_run(cl);
    if (*presets) {
      std::cout << sim::format_presets();
      return 0;
    }
    if (*schema) {
      std::cout << sim::experiment_json_schema();
      return 0;
    }
    if (*keys) {
      std::cout << sim::experiment_keys_markdown();
      return 0;
    }
    if (*plot) {
      std::vector<std::string> args = {cl.file};
      if (!cl.metrics.empty()) args.push_back("--metric=" + fmt::format("{}", fmt::join(cl.metrics, ",")));
      args.push_back("--format=" + fmt::format("{}", fmt::join(cl.plot_formats, ",")));
      const sim::cli::PythonHandoff handoff{
          .module = "pagesim.plot",
          .needs = {"matplotlib"},
          .path = {sim::cli::python_dir()},
          .install_hint = "pip install matplotlib into that Python (a venv's: <venv>/bin/python -m pip install "
                          "matplotlib), or in a checkout make the project's venv with .ci/venv"};
      const std::string why = sim::cli::exec_python_module(handoff, args);
      std::cerr << "pagesim: error: " << why << "\n";
      return 1;
    }
    if (*compare) {
      const sim::cli::PythonHandoff handoff{
          .module = "pagesim",
          .needs = {"pandas", "matplotlib", "yaml"},
          .path = {sim::cli::python_dir()},
          .install_hint = "pip install pandas matplotlib pyyaml into that Python (a venv's: <venv>/bin/python -m pip "
                          "install pandas matplotlib pyyaml), or in a checkout make the project's venv with .ci/venv"};
      const std::string why = sim::cli::exec_python_module(handoff, sim::cli::compare_arguments(cl));
      std::cerr << "pagesim: error: " << why << "\n";
      return 1;
    }
    if (*calibrate) {
      // The fit simulates with this very pagesim (pagesim/reports/sim_to_real/simulate.py reads $PAGESIM).
      std::error_code ec;
      const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
      if (ec) {
        std::cerr << "pagesim: error: cannot find this executable's path (/proc/self/exe): " << ec.message() << "\n";
        return 1;
      }
      ::setenv("PAGESIM", self.c_str(), 1);
      std::vector<std::string> args = {"calibrate"};
      for (const std::string& a : calibrate->remaining()) args.push_back(a);
      const std::string why = sim::cli::exec_python_module(sim_to_real_handoff(), args);
      std::cerr << "pagesim: error: " << why << "\n";
      return 1;
    }
    if (*trace.stats) return cmd_trace_stats(cl.file, cl.format, cl.json);
    if (*trace.gen) return cmd_trace_gen(cl.file, cl.out, cl.sets);
    if (*trace.cache_curve) return cmd_trace_cache_curve(cl);
    if (*trace.import) return cmd_trace_import(cl);
    if (*trace.compare) {
      std::vector<std::string> args = {"requests", cl.file, cl.simulated};
      if (!cl.out.empty()) args.insert(args.end(), {"--json", cl.out});
      const std::string why = sim::cli::exec_python_module(sim_to_real_handoff(), args);
      std::cerr << "pagesim: error: " << why << "\n";
      return 1;
    }
    if (*model) {
      sim::ModelSpec m = sim::model_preset(cl.model_name);
      m.kv_dtype = *sim::find_enum(sim::kKvDtypeNames, cl.model_kv_dtype);  // checked by the parser
      if (cl.model_gpu.empty()) {
        std::cout << sim::cli::model_info_json(m, cl.model_tp);
      } else {
        sim::VllmProfileSettings p = cl.model_profile;
        try {
          p.version = sim::parse_vllm_version(cl.model_vllm_version);
          p.engine = sim::vllm_family(p.version);
        } catch (const std::exception& e) {
          throw std::invalid_argument(std::string("--vllm-version: ") + e.what());
        }
        if (p.max_model_len == 0) p.max_model_len = m.max_seq_len;
        const sim::VllmKvBudget b = sim::vllm_kv_budget(m, sim::gpu_preset(cl.model_gpu), cl.model_tp, p);
        std::cout << sim::cli::model_info_json(m, cl.model_tp, sim::kv_budget_json(b, p.engine));
      }
      return 0;
    }
    // The GPU commands run in pagesim-cuda (cuda_handoff.h); on success this never returns.
    if (*validate && cl.validate.device == "cuda") {
      const std::string why = sim::cli::exec_cuda_executable(sim::cli::cuda_executable_path(), "validate --device cuda",
                                                             "or use --device cpu (the CPU reference)", argv);
      std::cerr << "pagesim: error: " << why << "\n";
      return 1;
    }
    if (*validate) {
      // pagesim offers the CPU reference only: the CUDA backend lives in pagesim-cuda.
      const sim::CpuPagedAttention cpu;
      return sim::run_validate_path(cl.validate, sim::PagedAttentionBackends{.cpu = &cpu, .cuda = nullptr},
                                       std::cout, std::cerr);
    }
    if (*profile) {
      const std::string why = sim::cli::exec_cuda_executable(sim::cli::cuda_executable_path(), "profile", "", argv);
      std::cerr << "pagesim: error: " << why << "\n";
      return 1;
    }
    return 0;
  });
}
