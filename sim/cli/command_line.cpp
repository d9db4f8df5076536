#include "sim/cli/command_line.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <string_view>
#include <system_error>

#include "sim/core/close_names.h"
#include "traces/trace_error.h"

namespace pagesim::sim::cli {

template <class T>
CLI::Validator integer_in(T min_value, T max_value) {
  const bool capped = max_value != std::numeric_limits<T>::max();
  const std::string rule = capped ? fmt::format("an integer in [{}, {}]", min_value, max_value)
                                  : fmt::format("an integer >= {}", min_value);
  auto check = [=](std::string& text) -> std::string {
    T value{};
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, value);
    const bool parsed = ec == std::errc() && stop == end;
    if (parsed && value >= min_value && value <= max_value) return {};
    // Past the type's range only when it parsed as digits: "99999999999" for an int.
    const bool too_large = ec == std::errc::result_out_of_range && stop == end && text.front() != '-';
    return fmt::format("expected {}{}, found {}", rule, too_large ? fmt::format(" no larger than {}", max_value) : "",
                       traces::quote_found(text));
  };
  const std::string help = capped ? fmt::format("in [{}, {}]", min_value, max_value)
                           : min_value == 1 ? std::string("POSITIVE")
                                            : fmt::format(">= {}", min_value);
  return CLI::Validator(check, help);
}

template CLI::Validator integer_in<std::int32_t>(std::int32_t, std::int32_t);
template CLI::Validator integer_in<std::int64_t>(std::int64_t, std::int64_t);
template CLI::Validator integer_in<std::size_t>(std::size_t, std::size_t);

CLI::App* add_run_command(CLI::App& app, CommandLine& cl) {
  auto* run = app.add_subcommand("run", "Run an experiment (or its sweep) and write results");
  run->add_option("experiment", cl.file, "Experiment YAML file")->required()->check(CLI::ExistingFile);
  run->add_option("--out,-o", cl.out, "Output folder (default: out/<file name without .yaml>, under the current folder)");
  run->add_option("--set,-s", cl.sets, "Override a setting, e.g. --set scheduler.max_num_seqs=128")->take_all();
  run->add_flag("--quiet,-q", cl.quiet,
                "No progress on stderr (otherwise: a bar with percentage and ETA on a terminal, a plain line every "
                "10 s in a log)");
  run->add_option("--jobs,-j", cl.jobs, "Sweep points to run at once, each on its own thread (same results for any N)")
      ->check(integer_in<std::size_t>(1, 1024));
  auto* overwrite = run->add_flag(
      "--overwrite", cl.overwrite,
      "Replace the results of another run in the output folder (its summary.json, config.resolved.yaml, "
      "requests.csv, iterations.csv, batches.jsonl, timeline.json, sweep.csv and NN-label point folders; other files stay). "
      "Without --overwrite or --resume such a folder is refused");
  run->add_flag("--resume", cl.resume,
                "Keep the sweep points whose results are complete for the same resolved config (config.resolved.yaml "
                "unchanged, summary.json present), run the others and rewrite sweep.csv; remove the rest of the old "
                "run")
      ->excludes(overwrite);
  run->add_option("--ray", cl.ray_address,
                  "Run the points as Ray tasks through the pagesim Python package (`python -m pagesim sweep "
                  "--executor ray`; same files as a local run); ADDRESS joins a running cluster ('auto', "
                  "'ray://host:10001'), none starts a local instance. Put it after the experiment file")
      ->expected(0, 1);
  run->footer(
      "Outputs: into --out, else out/<file name without .yaml> under the current folder: summary.json, "
      "config.resolved.yaml, requests.csv and iterations.csv (unless output.requests_csv: false / "
      "output.iterations_stride: 0), batches.jsonl (validate.every_n_iterations > 0) and timeline.json "
      "(output.timeline: true); a sweep writes sweep.csv there and each point's files in NN-label/ folders. "
      "stdout gets the results table; progress and warnings go to stderr. "
      "The output folder is locked while a run writes it: a second run into it fails at once, naming the first's "
      "pid; so does a run into a sweep's NN-label point folder while the sweep runs or once its sweep.csv is "
      "written. SIGINT or SIGTERM stops a run, removes its temporary files and exits with 128 + the signal's number; "
      "finished sweep points stay (continue with --resume).");
  return run;
}

TraceCommands add_trace_commands(CLI::App& app, CommandLine& cl) {
  auto* trace = app.add_subcommand("trace", "Inspect or generate workload traces");
  trace->require_subcommand(1);
  TraceCommands t;
  t.stats = trace->add_subcommand("stats", "Print statistics of a trace file");
  t.stats->add_option("file", cl.file, "Trace file (native, vidur, azure, mooncake, lengths CSV, vllm-bench or inference-perf-requests JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  t.stats->add_option("--format", cl.format, "Trace format (default: detected)");
  t.stats->add_flag("--json", cl.json, "Print JSON instead of a table");
  t.gen = trace->add_subcommand("gen", "Write an experiment's workload as a native CSV trace");
  t.gen->add_option("experiment", cl.file, "Experiment YAML file (its workload section)")
      ->required()
      ->check(CLI::ExistingFile);
  t.gen->add_option("--out,-o", cl.out, "Destination CSV")->required();
  t.gen->add_option("--set,-s", cl.sets, "Override a setting")->take_all();
  t.cache_curve = trace->add_subcommand(
      "cache-curve",
      "Hit rate against prefix-cache capacity, idealised (no timing, no pinned blocks): LRU at every capacity in one "
      "pass (stack distances), other policies simulated at --capacity");
  t.cache_curve->add_option("file", cl.file, "Trace file with hash ids (mooncake, or native with a hash_ids column)")
      ->required()
      ->check(CLI::ExistingFile);
  t.cache_curve->add_option("--format", cl.format, "Trace format (default: detected)");
  t.cache_curve->add_option("--out,-o", cl.out, "Write every point of the curve to this CSV");
  t.cache_curve->add_option("--capacity,-c", cl.capacities,
                            "Capacities in tokens for the direct runs, e.g. 3M 50M or 3000000,50000000 (k, M, G: "
                            "10^3, 10^6, 10^9)")
      ->delimiter(',');
  t.cache_curve->add_option("--policy,-p", cl.policies, "Policies simulated at each capacity (lru, fifo, lfu)")
      ->delimiter(',')
      ->check(CLI::IsMember({"lru", "fifo", "lfu"}));
  t.cache_curve->add_option("--block-size", cl.block_size, "Tokens per cache block (default: the trace's hash block)")
      ->check(integer_in<std::int64_t>(1));
  t.cache_curve->add_option("--hash-block-tokens", cl.hash_block_tokens,
                            "Tokens per hash id (default: the format's; mooncake 512; needed for native CSV)")
      ->check(integer_in<std::int64_t>(1));
  t.cache_curve->add_flag("--full-blocks-only", cl.full_blocks_only,
                          "Cache full blocks only, as the simulator's paged allocator does (default: a prompt's "
                          "last, partial block too, as the Mooncake paper counts hash ids)");
  t.cache_curve->add_option("--points-per-decade", cl.points_per_decade, "LRU curve points per factor of 10")
      ->check(integer_in(1, 1000));
  t.import = trace->add_subcommand(
      "import",
      "Read a load test's result file — vLLM's `vllm bench serve --save-result --save-detailed` JSON (vllm-bench) or "
      "inference-perf's per_request_lifecycle_metrics.json (inference-perf-requests) — and write OUT/trace.csv (its "
      "successful requests as a native trace to replay) and OUT/measured_requests.csv (what the client measured, in "
      "requests.csv's columns, for `pagesim trace compare`)");
  t.import->add_option("file", cl.file, "Benchmark result file")->required()->check(CLI::ExistingFile);
  t.import->add_option("--out,-o", cl.out, "Output folder (created if missing)")->required();
  t.import->add_option("--format", cl.format, "vllm-bench or inference-perf-requests (default: detected)");
  t.import->add_option("--seed", cl.seed,
                       "Seed of the arrival process for a vllm-bench file that records no send times (start_times) "
                       "and a finite request_rate");
  t.compare = trace->add_subcommand(
      "compare",
      "Compare the latencies a client measured (measured_requests.csv of `pagesim trace import`) with a run of its "
      "trace: TTFT, TPOT and E2E mean and percentiles, and their differences (pagesim.reports.sim_to_real)");
  t.compare->add_option("measured", cl.file, "measured_requests.csv")->required()->check(CLI::ExistingFile);
  t.compare->add_option("simulated", cl.simulated, "The run's folder (its requests.csv) or a requests.csv")
      ->required()
      ->check(CLI::ExistingPath);
  t.compare->add_option("--json", cl.out, "Also write the comparison to this JSON file");
  return t;
}

CLI::App* add_model_command(CLI::App& app, CommandLine& cl) {
  auto* model = app.add_subcommand(
      "model", "Print a model preset's numbers as pagesim uses them (layer groups per GPU, KV bytes) as JSON");
  model->add_option("name", cl.model_name, "Model preset")->required();
  model->add_option("--tp", cl.model_tp, "Tensor-parallel degree")->check(integer_in(1));
  model->add_option("--kv-dtype", cl.model_kv_dtype, "KV cache format")
      ->check(CLI::IsMember({"auto", "fp16", "bf16", "fp8", "int4"}));
  VllmProfileSettings& p = cl.model_profile;
  model->add_option("--gpu", cl.model_gpu, "GPU preset: also print vLLM's KV budget on it (kv_budget)");
  model->add_option("--vllm-version", cl.model_vllm_version,
                    "vLLM release whose start-up profiling the budget follows (0.10 to 0.20)");
  model->add_option("--gpu-memory-utilization", p.gpu_memory_utilization, "vLLM's gpu_memory_utilization");
  model->add_option("--max-num-batched-tokens", p.max_num_batched_tokens, "Tokens of the profile run")
      ->check(integer_in<std::int64_t>(1));
  model->add_option("--max-num-seqs", p.max_num_seqs, "Sequences the profile run samples")
      ->check(integer_in<std::int64_t>(1));
  model->add_option("--block-size", p.block_size, "Tokens per KV block")->check(integer_in<std::int64_t>(1));
  model->add_option("--max-model-len", p.max_model_len, "Tokens per request for max_concurrency (default: the "
                                                         "model's context)")
      ->check(integer_in<std::int64_t>(1));
  return model;
}

CLI::App* add_validate_command(CLI::App& app, CommandLine& cl) {
  ValidateOptions& v = cl.validate;
  auto* validate = app.add_subcommand(
      "validate", "Run the paged-attention kernels on sampled batches (OUT/batches.jsonl, or every point's of a "
                  "sweep's folder) and compare with dense attention; exits 1 if any batch fails");
  validate->add_option("batches", cl.batches_file,
                       "Sampled batch file (experiment option validate.every_n_iterations), a run's folder (its "
                       "batches.jsonl) or a sweep's folder (every point's, a summary line per point)")
      ->required()
      ->check(CLI::ExistingPath);
  validate->add_option("--device", v.device, "cpu (the reference) or cuda (the kernels)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  validate->add_option("--heads", v.num_q_heads, "Query heads of the synthetic model")
      ->check(integer_in<std::int32_t>(1));
  validate->add_option("--kv-heads", v.num_kv_heads, "KV heads (must divide --heads)")
      ->check(integer_in<std::int32_t>(1));
  validate->add_option("--head-dim", v.head_dim, "Head size")->check(integer_in<std::int32_t>(1));
  validate->add_option("--dtype", v.dtype, "KV and query element type (fp8: an MLA pool's latent cache, bf16 queries)")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "fp8"}));
  validate->add_option("--seed", v.seed, "Seed of the synthetic KV content");
  return validate;
}

CLI::App* add_profile_command(CLI::App& app, CommandLine& cl) {
  ProfileOptions& p = cl.profile;
  auto* profile = app.add_subcommand(
      "profile", "Time the attention kernels and the model's GEMMs on a GPU and write a profile cost-model CSV");
  profile->add_option("--device", p.device, "cuda (the only device that can be profiled)")
      ->check(CLI::IsMember({"cuda"}));
  profile->add_option("--model", p.model, "Model preset, e.g. opt-13b")->required();
  profile->add_option("--out,-o", cl.profile_out, "Destination CSV (default: profile-<model>.csv)");
  profile->add_option("--warmup", p.warmup, "Warm-up runs per point");
  profile->add_option("--repeats", p.repeats, "Timed runs per point (median; >= 20)");
  profile->add_option("--max-tokens", p.grid.max_tokens, "Largest token count of the GEMM grid");
  profile->add_option("--prefill-tokens", p.grid.prefill_tokens, "Largest prefill of the attention grid");
  profile->add_option("--max-decode-seqs", p.grid.max_decode_seqs, "Largest decode batch");
  profile->add_option("--max-context", p.grid.max_context, "Largest decode context (0: the model's maximum)");
  profile->add_option("--block-size", p.grid.block_size, "KV block size of the attention kernels");
  profile->add_option("--max-swap-blocks", p.grid.max_swap_blocks, "Largest swap of the copy grid");
  profile->add_option("--operators-out", cl.profile_operators_out,
                      "Operator check CSV: the operators cost.kind: operators reads, measured beside the published "
                      "tables (default: <out>-operators.csv)");
  profile->add_option("--operator-tables", cl.profile_operator_tables,
                      "Published operator tables folder (default: sim/cost/operator_tables of this source tree)");
  return profile;
}

CLI::App* add_presets_command(CLI::App& app) {
  return app.add_subcommand("presets",
                            "List the model and GPU presets, schedulers, allocators and eviction policies a config "
                            "may name, with their key facts");
}

CLI::App* add_schema_command(CLI::App& app) {
  return app.add_subcommand("schema",
                            "Print the JSON Schema of an experiment file (editor completion and validation; "
                            "docs/experiment.schema.json)");
}

CLI::App* add_keys_command(CLI::App& app) {
  return app.add_subcommand("keys",
                            "Print every experiment key with its type, default and allowed values as Markdown "
                            "(docs/experiment-keys.md)");
}

namespace {
// --format of the commands that draw figures (plot, compare): what matplotlib writes for them.
void add_figure_formats(CLI::App* command, std::vector<std::string>& formats, const std::string& help) {
  command->add_option("--format", formats, help)->delimiter(',')->check(CLI::IsMember({"png", "svg", "pdf"}));
}
}  // namespace

CLI::App* add_plot_command(CLI::App& app, CommandLine& cl) {
  auto* plot = app.add_subcommand(
      "plot",
      "Plot the results in a run's folder: a single run's memory classes over time and latency CDFs; a sweep's "
      "metrics against its swept keys and memory bars per point. Writes PNG and SVG (or PDF) into the folder (Python with "
      "matplotlib: <repo>/.venv, else python3)");
  plot->add_option("folder", cl.file, "Results folder of pagesim run (its summary.json or sweep.csv)")
      ->required()
      ->check(CLI::ExistingDirectory);
  plot->add_option("--metric,-m", cl.metrics,
                   "Sweep: summary metrics to draw, e.g. throughput_rps,memory_pct.token_states (sweep.csv columns; "
                   "default: throughput_rps, normalized_latency_s_per_token, memory_pct.token_states)")
      ->delimiter(',');
  add_figure_formats(plot, cl.plot_formats, "Image formats (png, svg, pdf)");
  return plot;
}

CLI::App* add_compare_command(CLI::App& app, CommandLine& cl) {
  auto* compare = app.add_subcommand(
      "compare",
      "Compare results folders of pagesim run (runs or sweeps; points matched by label) side by side: summary "
      "metrics, their differences to the first folder (absolute and %), and with --out compare.csv and figures "
      "(python/pagesim/compare.py; Python with pandas and matplotlib: <repo>/.venv, else python3)");
  compare->add_option("folders", cl.compare_folders, "Results folders; the first is the baseline")
      ->required()
      ->expected(2, -1)
      ->check(CLI::ExistingDirectory);
  compare->add_option("--name", cl.compare_names,
                      "A name per folder, in order, one --name each (default: the folders' names)");
  compare->add_option("--metric,-m", cl.metrics,
                      "Summary metrics, e.g. throughput_rps,ttft_s.p99 (sweep.csv columns; default: throughput, "
                      "TTFT / TPOT / E2E p50 and p99, normalized latency, token states %, batch, preemptions)")
      ->delimiter(',');
  compare->add_option("--out,-o", cl.out, "Also write compare.csv and the figures into this folder");
  add_figure_formats(compare, cl.compare_formats, "Figure formats (png, svg, pdf)");
  return compare;
}

std::vector<std::string> compare_arguments(const CommandLine& cl) {
  std::vector<std::string> args = {"compare"};
  args.insert(args.end(), cl.compare_folders.begin(), cl.compare_folders.end());
  for (const std::string& n : cl.compare_names) args.insert(args.end(), {"--name", n});
  if (!cl.metrics.empty()) args.push_back("--metric=" + fmt::format("{}", fmt::join(cl.metrics, ",")));
  if (!cl.out.empty()) args.insert(args.end(), {"--out", cl.out});
  args.push_back("--format=" + fmt::format("{}", fmt::join(cl.compare_formats, ",")));
  return args;
}

CLI::App* add_calibrate_command(CLI::App& app) {
  auto* calibrate = app.add_subcommand(
      "calibrate",
      "Fit the latency coefficients measured operators cannot give (host time per step and per sequence, the "
      "operator-time factor, the client's fixed time) by least squares on measured server runs, and write them to a "
      "calibration file an experiment names (calibration: FILE). Runs python/pagesim/reports/sim_to_real/calibrate.py, which "
      "simulates with this pagesim; its options: pagesim calibrate --help");
  calibrate->prefix_command();  // every argument goes to the Python side, --help included
  calibrate->set_help_flag();
  return calibrate;
}

void finish_parse(CommandLine& cl, int argc, const char* const* argv) {
  cl.validate.file = cl.batches_file;
  cl.profile.out = cl.profile_out;
  cl.profile.operators_out = cl.profile_operators_out;
  cl.profile.operator_tables = cl.profile_operator_tables;
  cl.profile.command_line.clear();
  for (int i = 0; i < argc; ++i) cl.profile.command_line += (i ? " " : "") + std::string(argv[i]);
}

std::string unknown_subcommand_message(CLI::App& app, int argc, const char* const* argv) {
  CLI::App* group = &app;
  std::string typed = "pagesim";  // the commands so far, for the help hint
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::vector<CLI::App*> commands = group->get_subcommands([](CLI::App* c) { return !c->get_name().empty(); });  // not option groups
    // An option (--help, --version) or a command without subcommands: CLI11 reads the rest.
    if (arg.empty() || arg.front() == '-' || commands.empty()) return {};
    std::vector<std::string> names;
    CLI::App* found = nullptr;
    for (CLI::App* c : commands) {
      names.push_back(c->get_name());
      if (c->check_name(std::string(arg))) found = c;
    }
    if (found == nullptr) {
      const std::string mean = did_you_mean(arg, names);
      return fmt::format("unknown subcommand '{}': {} ({} --help lists the commands)", arg,
                         mean.empty() ? fmt::format("expected one of {}", fmt::join(names, ", ")) : mean, typed);
    }
    group = found;
    typed += " " + found->get_name();
  }
  return {};
}

namespace {
// `word` as one shell word: as is when it holds only characters no shell treats specially,
// else in single quotes (a quote inside as '\'').
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./=:,+-@%") == std::string::npos;
  if (plain) return word;
  std::string quoted = "'";
  for (const char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}
}  // namespace

std::string resume_command(const CommandLine& cl, const std::string& out) {
  std::string command = fmt::format("pagesim run {} --out {} --resume", shell_word(cl.file), shell_word(out));
  for (const std::string& s : cl.sets) command += " --set " + shell_word(s);
  if (cl.jobs > 1) command += fmt::format(" -j {}", cl.jobs);
  return command;
}

std::string out_of_memory_message(int argc, const char* const* argv) {
  std::string command = "pagesim";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  return command + ": out of memory (std::bad_alloc): the input needs more memory than this process may use";
}

}  // namespace pagesim::sim::cli
