// Experiments end to end through run_experiment_file(): the four result files, determinism,
// sweeps and sweep.csv, no half-written output after a failure, a shortened vLLM-paper
// Figure 2, and prefix caching on the Mooncake trace. Everything is written under a fresh
// temporary folder; bundled data is found through PAGESIM_SOURCE_DIR.
#include "sim/experiment/experiment.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/sweep.h"
#include "sim/core/simulation_error.h"
#include "sim/cost/batch_shape.h"
#include "sim/experiment/result_folder.h"
#include "sim/metrics/metrics.h"
#include "sim/output/build_info.h"
#include "sim_harness.h"
#include "traces/trace_error.h"
#include "temp_dir_test.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::parse_csv;
using testing::Row;

const fs::path kSource = PAGESIM_SOURCE_DIR;
const std::string kShareGpt = (kSource / "traces/data/sharegpt_opt_lengths.csv").string();
const std::string kMooncake = (kSource / "traces/data/mooncake_conversation_trace.jsonl").string();

// A fresh folder per test process, removed at the end.
class ExperimentTest : public testing::TempDirTest {};

using testing::kAnyLine;
using testing::read_file;
using testing::throws_config_error;

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p)); }

// Every file below `dir`, relative, sorted.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

// The summary without the host timings (the only fields two identical runs may differ in).
nlohmann::json reproducible(nlohmann::json j) {
  for (auto it = j.begin(); it != j.end();) {
    if (is_host_timing(it.key())) it = j.erase(it);
    else ++it;
  }
  return j;
}

// A small synthetic run: ShareGPT lengths, Poisson arrivals, a pool small enough to preempt.
std::string small_experiment(int requests = 120, std::uint64_t seed = 7) {
  return "name: small\n"
         "seed: " + std::to_string(seed) + "\n"
         "workload:\n"
         "  kind: synthetic\n"
         "  arrival: {kind: poisson, rate: 20}\n"
         "  lengths: {kind: empirical, path: '" + kShareGpt + "'}\n"
         "  max_total_tokens: 2048\n"
         "  max_requests: " + std::to_string(requests) + "\n"
         "model: opt-13b\n"
         "gpu: a100-40gb\n"
         "kv: {slots: 4096}\n"
         "allocator: {kind: paged, block_size: 16}\n"
         "scheduler: {kind: vllm}\n"
         "cost: {kind: roofline}\n"
         "measure: {window_start_s: 1, window_end_s: 1000}\n";
}

double mem_sum(const nlohmann::json& m) {
  return m["token_states"].get<double>() + m["reserved"].get<double>() + m["over_reserved"].get<double>() +
         m["rounding"].get<double>() + m["free"].get<double>();
}

TEST_F(ExperimentTest, WritesFourFilesThatParse) {
  const std::string file = write("small.yaml", small_experiment());
  const fs::path out = dir_ / "out";
  const auto results = run_experiment_file(file, {}, out);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].label.empty());
  EXPECT_EQ(files_under(out),
            (std::set<std::string>{"config.resolved.yaml", "iterations.csv", "requests.csv", "summary.json"}));

  const nlohmann::json s = read_json(out / "summary.json");
  for (const char* k : {"name", "allocator", "scheduler", "cost_model", "workload", "kv_slots", "memory_pct",
                        "memory_pct_time_weighted", "mean_batched_requests", "throughput_rps",
                        "normalized_latency_s_per_token", "preemptions", "prefix_hit_rate", "sharing_saving_pct",
                        "sim_time_s", "wall_s", "requests_finished", "iterations", "window_iterations"})
    EXPECT_TRUE(s.contains(k)) << k;
  for (const char* k : {"token_states", "reserved", "over_reserved", "rounding", "free", "unusable_free", "cached_free"})
    EXPECT_TRUE(s["memory_pct"].contains(k)) << k;
  EXPECT_EQ(s["name"], "small");
  // Which pagesim wrote it, first (experiments/reference/compare.sh drops the two lines).
  EXPECT_EQ(s["pagesim_version"], std::string(pagesim_version()));
  EXPECT_EQ(s["pagesim_commit"], std::string(pagesim_commit()));
  EXPECT_TRUE(read_file(out / "summary.json").starts_with("{\n  \"pagesim_version\": \"" +
                                                          std::string(pagesim_version()) + "\",\n  \"pagesim_commit\": "));
  EXPECT_EQ(s["kv_slots"], 4096);
  EXPECT_NEAR(mem_sum(s["memory_pct"]), 100.0, 1e-6);
  EXPECT_NEAR(mem_sum(s["memory_pct_time_weighted"]), 100.0, 1e-6);
  EXPECT_GT(s["memory_pct"]["token_states"].get<double>(), 0);
  EXPECT_EQ(s["requests_arrived"], 120);
  EXPECT_EQ(s["requests_finished"], 120);
  EXPECT_GT(s["mean_batched_requests"].get<double>(), 1.0);
  EXPECT_GT(s["normalized_latency_s_per_token"].get<double>(), 0);
  EXPECT_GT(s["preemptions"].get<std::int64_t>(), 0);  // 4,096 slots are tight at 20 req/s
  EXPECT_EQ(s["prefix_hit_rate"], 0.0);
  const double sim_time = s["sim_time_s"].get<double>();
  EXPECT_GT(sim_time, 0);
  EXPECT_NEAR(s["throughput_rps"].get<double>(), 120 / sim_time, 1e-9);
  EXPECT_GT(s["window_iterations"].get<std::int64_t>(), 0);
  EXPECT_LT(s["window_iterations"].get<std::int64_t>(), s["iterations"].get<std::int64_t>());  // window starts at 1 s
  EXPECT_DOUBLE_EQ(results[0].summary.memory_pct.token_states, s["memory_pct"]["token_states"].get<double>());

  // requests.csv: one row per finished request.
  const std::string requests = read_file(out / "requests.csv");
  EXPECT_EQ(requests.substr(0, requests.find('\n')), Metrics::requests_csv_header());
  const auto rows = parse_csv(requests);
  ASSERT_EQ(rows.size(), 120u);
  std::set<std::string> ids;
  for (const Row& r : rows) {
    ids.insert(r.at("id"));
    EXPECT_GE(std::stod(r.at("finish_s")), std::stod(r.at("arrival_s")));
    EXPECT_LE(std::stod(r.at("finish_s")), sim_time);
  }
  EXPECT_EQ(ids.size(), 120u);

  // iterations.csv: one row per iteration (stride 1), classes summing to the capacity.
  const std::string iterations = read_file(out / "iterations.csv");
  EXPECT_EQ(iterations.substr(0, iterations.find('\n')), Metrics::iterations_csv_header());
  const auto its = parse_csv(iterations);
  ASSERT_EQ(static_cast<std::int64_t>(its.size()), s["iterations"].get<std::int64_t>());
  for (const Row& r : its) {
    const std::int64_t total = std::stoll(r.at("token_states")) + std::stoll(r.at("reserved")) +
                               std::stoll(r.at("over_reserved")) + std::stoll(r.at("rounding")) +
                               std::stoll(r.at("free"));
    ASSERT_EQ(total, 4096) << "iteration " << r.at("index");
  }

  // config.resolved.yaml: the full config, which parses back to the same run.
  const YAML::Node resolved = YAML::LoadFile((out / "config.resolved.yaml").string());
  const ExperimentConfig c = parse_experiment(resolved, "config.resolved.yaml");
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.kv.slots, 4096);
  EXPECT_EQ(c.workload.max_requests, 120u);
  // The bundled file, named relative to the source tree (input_path.h): the same text anywhere.
  EXPECT_EQ(c.workload.lengths.path, "traces/data/sharegpt_opt_lengths.csv");
  EXPECT_EQ(c.measure.window_start_s, 1);
  EXPECT_TRUE(resolved["scheduler"]["max_num_batched_tokens"]);  // defaults written out
}

TEST_F(ExperimentTest, SameConfigSameBytesDifferentSeedDifferentRun) {
  const std::string file = write("small.yaml", small_experiment(80));
  run_experiment_file(file, {}, dir_ / "a");
  run_experiment_file(file, {}, dir_ / "b");
  for (const char* f : {"requests.csv", "iterations.csv", "config.resolved.yaml"}) {
    const std::string a = read_file(dir_ / "a" / f);
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == read_file(dir_ / "b" / f)) << f << " differs between two runs";
  }
  const nlohmann::json sa = read_json(dir_ / "a/summary.json"), sb = read_json(dir_ / "b/summary.json");
  EXPECT_TRUE(sa.contains("wall_s"));
  EXPECT_EQ(reproducible(sa), reproducible(sb));
  EXPECT_FALSE(reproducible(sa).contains("wall_s"));
  EXPECT_FALSE(reproducible(sa).contains("sim_seconds_per_wall_second"));

  run_experiment_file(file, {"seed=8"}, dir_ / "c");
  EXPECT_NE(read_file(dir_ / "a/requests.csv"), read_file(dir_ / "c/requests.csv"));
  EXPECT_NE(read_file(dir_ / "a/config.resolved.yaml"), read_file(dir_ / "c/config.resolved.yaml"));
}

constexpr const char* kSweep =
    "sweep:\n"
    "  cases:\n"
    "    - {label: tight, kv.slots: 2048}\n"
    "    - {label: roomy, kv.slots: 8192}\n"
    "  scheduler.max_num_seqs: [8, 64]\n";

TEST_F(ExperimentTest, SweepRerunGivesTheSameBytes) {
  const std::string file = write("sweep.yaml", small_experiment(40) + kSweep);
  run_experiment_file(file, {}, dir_ / "a");
  run_experiment_file(file, {}, dir_ / "b");
  const std::set<std::string> files = files_under(dir_ / "a");
  ASSERT_EQ(files.size(), 17u);  // sweep.csv + 4 points x 4 files
  EXPECT_EQ(files_under(dir_ / "b"), files);
  for (const auto& f : files) {
    if (f.ends_with("summary.json"))
      EXPECT_EQ(reproducible(read_json(dir_ / "a" / f)), reproducible(read_json(dir_ / "b" / f))) << f;
    else
      EXPECT_TRUE(read_file(dir_ / "a" / f) == read_file(dir_ / "b" / f)) << f << " differs between two runs";
  }
}

// The vLLM paper's block-size ablation sweeps blocks up to 256 over 15,728 slots, not a whole
// number of blocks of 32 and up. Each point reports the pool it simulated: summary.json's
// kv_slots is the slots whose classes fill every row of iterations.csv (4,200 slots: 262
// blocks of 16, 16 blocks of 256), and the point warns.
TEST_F(ExperimentTest, ASweepOfBlockSizesReportsThePoolEachPointHolds) {
  const std::string file = write("blocks.yaml", small_experiment(60) + "sweep:\n  allocator.block_size: [16, 256]\n");
  const fs::path out = dir_ / "out";
  const auto results = run_experiment_file(file, {"kv.slots=4200"}, out);
  ASSERT_EQ(results.size(), 2u);
  const std::vector<std::int64_t> held = {4192, 4096};
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(results[i].label);
    const fs::path point = out / point_folder(i, results[i].label);
    const nlohmann::json s = read_json(point / "summary.json");
    EXPECT_EQ(s["kv_slots"], held[i]);
    ASSERT_TRUE(s.contains("warnings"));
    EXPECT_NE(s["warnings"][0].get<std::string>().find("kv.slots: 4200 slots are not a whole number of blocks"),
              std::string::npos)
        << s["warnings"];
    const auto rows = parse_csv(read_file(point / "iterations.csv"));
    ASSERT_FALSE(rows.empty());
    for (const Row& r : rows) {
      std::int64_t sum = 0;
      for (const char* k : {"token_states", "reserved", "over_reserved", "rounding", "free"}) sum += std::stoll(r.at(k));
      ASSERT_EQ(sum, held[i]) << "iteration " << r.at("index");
    }
  }
}

// Point folders: the label made safe, and a label too long for a file name cut to 255 bytes
// with a hash of the whole, so two long labels differing only at the end stay apart; a sweep
// with such a label runs.
TEST_F(ExperimentTest, PointFoldersFitAFileName) {
  EXPECT_EQ(point_folder(3, "a b/c,kv.slots=4096"), "03-a_b_c_kv.slots=4096");
  const std::string a = point_folder(1, std::string(300, 'x') + "a");
  const std::string b = point_folder(1, std::string(300, 'x') + "b");
  EXPECT_EQ(a.size(), 255u);
  EXPECT_EQ(b.size(), 255u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.substr(0, 20), "01-" + std::string(17, 'x'));
  EXPECT_EQ(a, point_folder(1, std::string(300, 'x') + "a"));  // the same on every run
  EXPECT_EQ(point_folder(0, std::string(252, 'y')).size(), 255u);  // at the limit: kept whole
  EXPECT_EQ(point_folder(0, std::string(252, 'y')), "00-" + std::string(252, 'y'));
  const std::string file = write("long.yaml", small_experiment(10) + "sweep:\n  cases:\n    - {label: short}\n"
                                              "    - {label: " + std::string(300, 'L') + "}\n");
  const auto results = run_experiment_file(file, {}, dir_ / "out");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(fs::exists(dir_ / "out" / point_folder(1, std::string(300, 'L')) / "summary.json"));
}

// The steps one by one, as a front end that runs points elsewhere takes them (the Python
// package's Ray executor): plan, claim, each point into its folder in reverse order, then
// sweep.csv from the summaries read back. Same bytes as run_experiment_file(), sweep.csv
// included (so a summary.json read back gives the row the in-memory summary gave).
TEST_F(ExperimentTest, SweepStepByStepWritesTheSameBytes) {
  const std::string text = small_experiment(40) + kSweep;
  const std::string file = write("sweep.yaml", text);
  run_experiment_file(file, {}, dir_ / "a");
  const Sweep sweep = Sweep::from_text(text, file);
  const std::vector<PlannedPoint> plan = plan_points(sweep);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[1].folder, point_folder(1, sweep.label(1)));
  const fs::path out = dir_ / "b";
  {
    ResultFolder folder(out, ExistingResults::kRefuse);  // unlocked at the end of the block
    for (const auto& kept : folder.prepare(plan)) EXPECT_FALSE(kept.has_value());
    for (std::size_t i = plan.size(); i-- > 0;) run_experiment(sweep.config(i), out / plan[i].folder);
    std::vector<PointResult> results(plan.size());
    for (std::size_t i = 0; i < plan.size(); ++i) {
      std::optional<KeptPoint> done = read_complete_point(out / plan[i].folder, plan[i].resolved_config);
      ASSERT_TRUE(done.has_value()) << plan[i].folder;
      results[i] = {sweep.label(i), sweep.assignments(i), done->summary, done->notes};
    }
    EXPECT_FALSE(read_complete_point(out / plan[0].folder, plan[1].resolved_config).has_value());  // another config
    write_sweep_table(sweep, results, out);
    folder.finish();
  }
  const std::set<std::string> files = files_under(dir_ / "a");
  EXPECT_EQ(files_under(out), files);
  for (const auto& f : files) {
    if (f.ends_with("summary.json"))
      EXPECT_EQ(reproducible(read_json(dir_ / "a" / f)), reproducible(read_json(out / f))) << f;
    else
      EXPECT_TRUE(read_file(dir_ / "a" / f) == read_file(out / f)) << f << " differs from run_experiment_file's";
  }
}

TEST_F(ExperimentTest, SweepWritesOneFolderPerPointAndSweepCsv) {
  const std::string file = write("sweep.yaml", small_experiment(60) + kSweep);
  const fs::path out = dir_ / "out";
  const auto results = run_experiment_file(file, {}, out);
  ASSERT_EQ(results.size(), 4u);
  const std::vector<std::string> folders = {"00-tight_scheduler.max_num_seqs=8", "01-tight_scheduler.max_num_seqs=64",
                                            "02-roomy_scheduler.max_num_seqs=8", "03-roomy_scheduler.max_num_seqs=64"};
  const std::vector<std::string> labels = {"tight,scheduler.max_num_seqs=8", "tight,scheduler.max_num_seqs=64",
                                           "roomy,scheduler.max_num_seqs=8", "roomy,scheduler.max_num_seqs=64"};
  std::set<std::string> want_files{"sweep.csv"};
  for (const auto& f : folders)
    for (const char* name : {"config.resolved.yaml", "iterations.csv", "requests.csv", "summary.json"})
      want_files.insert(f + "/" + name);
  EXPECT_EQ(files_under(out), want_files);

  // Each point ran its own config.
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(results[i].label, labels[i]);
    const nlohmann::json s = read_json(out / folders[i] / "summary.json");
    EXPECT_EQ(s["kv_slots"], i < 2 ? 2048 : 8192);
    EXPECT_EQ(s["requests_finished"], 60);
    const ExperimentConfig c =
        parse_experiment(YAML::LoadFile((out / folders[i] / "config.resolved.yaml").string()), "resolved");
    EXPECT_EQ(c.scheduler.max_num_seqs, i % 2 == 0 ? 8 : 64);
  }

  // sweep.csv: point, label, case, the swept keys, the flattened summary without host timings.
  const std::string csv = read_file(out / "sweep.csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  std::string want_header = "point,label,case,kv.slots,scheduler.max_num_seqs";
  for (const auto& [k, v] : flatten(results[0].summary.to_json()))
    if (!is_host_timing(k)) want_header += "," + k;
  EXPECT_EQ(header, want_header);
  EXPECT_NE(header.find(",memory_pct.token_states,"), std::string::npos);
  EXPECT_NE(header.find(",e2e_s.p99,"), std::string::npos);
  EXPECT_EQ(header.find("wall"), std::string::npos);
  // Labels hold commas: parse_csv's naive split would shift columns, so compare whole lines.
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(std::getline(lines, line));
    std::string want = folders[i] + ",\"" + labels[i] + "\"," + (i < 2 ? "tight,2048" : "roomy,8192") + "," +
                       (i % 2 == 0 ? "8" : "64");
    // The point's summary.json, flattened, minus the run description and host timings.
    const auto sj = nlohmann::ordered_json::parse(read_file(out / folders[i] / "summary.json"));
    const std::set<std::string> description{"pagesim_version", "pagesim_commit", "name",     "allocator",
                                            "scheduler",       "cost_model",     "workload", "kv_slots"};
    for (const auto& [k, v] : flatten(sj))
      if (!description.count(k) && !is_host_timing(k)) want += "," + v.dump();
    EXPECT_EQ(line, want) << "row " << i;
  }
  EXPECT_FALSE(std::getline(lines, line)) << "extra row: " << line;
}

// A sweep of cases that set different keys: every row carries every swept key's effective
// value (the point's own; else from its resolved config, defaults included), so grouping by
// a key keeps the cases that leave it alone; the case column names each point's case.
TEST_F(ExperimentTest, SweepCsvGivesEveryCaseItsEffectiveValues) {
  const std::string file = write("cases.yaml", small_experiment(30) +
                                                   "sweep:\n"
                                                   "  cases:\n"
                                                   "    - {label: orca, scheduler.kind: orca, allocator.kind: "
                                                   "contiguous, allocator.reservation: pow2}\n"
                                                   "    - {label: fp8, kv_dtype: fp8}\n"
                                                   "    - {label: plain}\n");
  const fs::path out = dir_ / "out";
  run_experiment_file(file, {}, out);
  const std::vector<Row> rows = parse_csv(read_file(out / "sweep.csv"));
  ASSERT_EQ(rows.size(), 3u);
  const std::vector<std::string> cases = {"orca", "fp8", "plain"};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const bool orca = i == 0;
    EXPECT_EQ(rows[i].at("case"), cases[i]) << i;
    EXPECT_EQ(rows[i].at("scheduler.kind"), orca ? "orca" : "vllm") << i;
    EXPECT_EQ(rows[i].at("allocator.kind"), orca ? "contiguous" : "paged") << i;
    // A key of another kind's: the value the resolved config holds (paged writes it too).
    EXPECT_EQ(rows[i].at("allocator.reservation"), orca ? "pow2" : "max") << i;
    // Left out of config.resolved.yaml at its default: the default's name.
    EXPECT_EQ(rows[i].at("kv_dtype"), cases[i] == "fp8" ? "fp8" : "auto") << i;
  }
  // A grid without cases has no case column.
  run_experiment_file(write("grid.yaml", small_experiment(30) + "sweep:\n  seed: [1, 2]\n"), {}, dir_ / "grid");
  const std::string grid = read_file(dir_ / "grid/sweep.csv");
  EXPECT_TRUE(grid.starts_with("point,label,seed,")) << grid.substr(0, 40);
}

// Runs `file` expecting it to fail with E; afterwards no result file and no temporary is
// left under `out`.
template <class E>
void expect_failure_leaves_nothing(const std::string& file, const fs::path& out,
                                   const std::set<std::string>& allowed = {}) {
  EXPECT_THROW(run_experiment_file(file, {}, out), E);
  for (const auto& f : files_under(out)) {
    EXPECT_EQ(f.find(".tmp"), std::string::npos) << "temporary left behind: " << f;
    EXPECT_TRUE(allowed.count(f)) << "file left behind: " << f;
  }
}

TEST_F(ExperimentTest, RequestThatCanNeverFitLeavesNothing) {
  // 1,500-token prompts in a 1,024-slot pool.
  const std::string file = write("nofit.yaml",
                                 "workload:\n"
                                 "  arrival: {kind: constant, rate: 1}\n"
                                 "  lengths: {kind: distributions, prompt: {kind: fixed, value: 1500}, output: {kind: "
                                 "fixed, value: 10}}\n"
                                 "  max_requests: 20\n"
                                 "kv: {slots: 1024}\n"
                                 "scheduler: {max_num_batched_tokens: 4096}\n");
  expect_failure_leaves_nothing<ConfigError>(file, dir_ / "out");
}

TEST_F(ExperimentTest, MalformedTraceRowMidRunLeavesNothing) {
  std::string trace = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 200; ++i) trace += std::to_string(i * 0.05) + "," + (i == 150 ? "many" : "100") + ",20\n";
  const std::string csv = write("trace.csv", trace);
  const std::string file = write("trace.yaml",
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + csv + "', format: native}\n"
                                 "kv: {slots: 8192}\n");
  try {
    run_experiment_file(file, {}, dir_ / "out");
    FAIL() << "no error";
  } catch (const traces::TraceError& e) {
    EXPECT_EQ(e.line(), 152);  // header + 150 good rows before it
    EXPECT_NE(std::string(e.what()).find(csv), std::string::npos) << e.what();
  }
  for (const auto& f : files_under(dir_ / "out")) ADD_FAILURE() << "file left behind: " << f;
  EXPECT_FALSE(fs::exists(dir_ / "out")) << "an empty result folder left behind";
}

TEST_F(ExperimentTest, FailingSweepPointKeepsFinishedPointsAndListsEveryPointsStatus) {
  // The second point's pool cannot hold one request; the first point completes.
  const std::string file =
      write("sweep.yaml", small_experiment(30) + "sweep:\n  kv.slots: [4096, 512]\n  scheduler.max_num_batched_tokens: [4096]\n");
  const std::string p0 = "00-kv.slots=4096_scheduler.max_num_batched_tokens=4096/";
  expect_failure_leaves_nothing<ConfigError>(
      file, dir_ / "out",
      {p0 + "config.resolved.yaml", p0 + "iterations.csv", p0 + "requests.csv", p0 + "summary.json", "sweep.csv"});
  EXPECT_TRUE(fs::exists(dir_ / "out" / p0 / "summary.json"));
  EXPECT_FALSE(fs::exists(dir_ / "out/01-kv.slots=512_scheduler.max_num_batched_tokens=4096"));
  // sweep.csv (issue 41): the finished point's results, the failed point's keys, a status each.
  const std::string table = read_file(dir_ / "out/sweep.csv");
  EXPECT_NE(table.find(",status\n00-kv.slots=4096_scheduler.max_num_batched_tokens=4096,"), std::string::npos)
      << table;
  const std::string failed = "\n01-kv.slots=512_scheduler.max_num_batched_tokens=4096,"
                             "\"kv.slots=512,scheduler.max_num_batched_tokens=4096\",512,4096,,";
  EXPECT_NE(table.find(failed), std::string::npos) << table;
  EXPECT_TRUE(table.ends_with(",,failed\n")) << table;
}

TEST_F(ExperimentTest, ConfigErrorInAnyPointRunsNothing) {
  const std::string file = write("sweep.yaml", small_experiment(30) + "sweep:\n  scheduler.kind: [vllm, fifo]\n");
  // 17: the line of 'fifo' in the sweep.
  EXPECT_TRUE(
      throws_config_error([&] { run_experiment_file(file, {}, dir_ / "out"); }, file, 17, "scheduler.kind", {}));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// A point that parses but cannot be built (vLLM's scheduler on a contiguous allocator) is
// found before any point runs, and the error names the point's values.
TEST_F(ExperimentTest, PointThatCannotBeBuiltRunsNothing) {
  const std::string file = write("sweep.yaml", small_experiment(30) + "sweep:\n  allocator.kind: [paged, contiguous]\n");
  // 17: the sweep's line.
  EXPECT_TRUE(throws_config_error(
      [&] { run_experiment_file(file, {}, dir_ / "out"); }, file, 17, "allocator.kind",
      {"needs the paged allocator", "(in sweep point 1 'allocator.kind=contiguous': allocator.kind=contiguous)"}));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// -j N runs the points on N threads and writes the same files as -j 1.
TEST_F(ExperimentTest, JobsWriteTheSameFilesAsOneJob) {
  const std::string file = write(
      "sweep.yaml", small_experiment(40) + kSweep + "  seed: [1, 2, 3]\n");
  const auto one = run_experiment_file(file, {}, dir_ / "one", {}, 1);
  const auto four = run_experiment_file(file, {}, dir_ / "four", {}, 4);
  ASSERT_EQ(one.size(), 12u);
  ASSERT_EQ(four.size(), 12u);
  for (std::size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].label, four[i].label);
    EXPECT_EQ(one[i].assignments, four[i].assignments);
  }
  const std::set<std::string> files = files_under(dir_ / "one");
  ASSERT_EQ(files.size(), 1u + 12u * 4u);
  EXPECT_EQ(files_under(dir_ / "four"), files);
  for (const auto& f : files) {
    if (f.ends_with("summary.json"))
      EXPECT_EQ(reproducible(read_json(dir_ / "one" / f)), reproducible(read_json(dir_ / "four" / f))) << f;
    else
      EXPECT_TRUE(read_file(dir_ / "one" / f) == read_file(dir_ / "four" / f)) << f << " differs between -j 1 and -j 4";
  }
}

// After a point fails at run time (a request that never fits its pool, found when it
// arrives: a ConfigError naming kv.slots), -j N starts no new point and reports the failing one.
TEST_F(ExperimentTest, JobsStopAfterAFailingPoint) {
  const std::string file = write(
      "sweep.yaml", small_experiment(30) + "sweep:\n  kv.slots: [512, 4096, 4112, 4128, 4144, 4160]\n");
  SweepStop stop;
  EXPECT_TRUE(throws_config_error(
      [&] { run_experiment_file(file, {}, dir_ / "out", {}, 2, ExistingResults::kRefuse, &stop); }, file, kAnyLine,
      "kv.slots", {}))
      << "expected the 512-slot point to fail";
  EXPECT_FALSE(fs::exists(dir_ / "out/05-kv.slots=4160"));
  // Point 1 (and, timing allowing, the next) ran beside point 0 and finished: sweep.csv keeps
  // them, with every point's status.
  EXPECT_EQ(stop.points, 6u);
  EXPECT_EQ(stop.failed, 1u);
  EXPECT_GE(stop.finished, 1u);
  EXPECT_EQ(stop.finished + stop.failed + stop.not_run, 6u);
  EXPECT_TRUE(stop.table_written);
  const std::string table = read_file(dir_ / "out/sweep.csv");
  EXPECT_NE(table.find(",status\n00-kv.slots=512,kv.slots=512,512,,"), std::string::npos) << table;
  EXPECT_NE(table.find(",failed\n01-kv.slots=4096,kv.slots=4096,4096,"), std::string::npos) << table;
  const auto rows_ending = [&](const std::string& status) {
    std::size_t count = 0;
    for (std::size_t at = table.find(status + "\n"); at != std::string::npos; at = table.find(status + "\n", at + 1))
      ++count;
    return count;
  };
  EXPECT_EQ(rows_ending(",ok"), stop.finished) << table;
  EXPECT_EQ(rows_ending(",not run"), stop.not_run) << table;
  EXPECT_EQ(table.substr(table.size() - 9), ",not run\n") << table;
}

// A timeline window that starts after the run leaves timeline.json without an iteration:
// the run says so, naming the key, as it does for an empty measurement window.
TEST_F(ExperimentTest, AnEmptyTimelineWindowIsWarnedAbout) {
  const std::string file = write("late.yaml", small_experiment(20) + "output: {timeline: true, timeline_start_s: 1.0e+6}\n");
  run_experiment_file(file, {}, dir_ / "out");
  const nlohmann::json s = read_json(dir_ / "out/summary.json");
  ASSERT_TRUE(s.contains("warnings")) << s.dump();
  EXPECT_NE(s["warnings"].dump().find("output.timeline_start_s: timeline.json holds no iteration"), std::string::npos)
      << s["warnings"].dump();
}

// A bad swept value is reported with its point, whether parsing it or running it fails.
TEST_F(ExperimentTest, PointErrorsNameThePoint) {
  const std::string parse = write("parse.yaml", small_experiment(30) + "sweep:\n  allocator.block_size: [16, 0]\n");
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(parse, {}, dir_ / "p"); }, parse, kAnyLine,
                                  "allocator.block_size", {"(in sweep point 1 'allocator.block_size=0'"}));
  const std::string run = write("run.yaml", small_experiment(30) + "sweep:\n  cost.iteration_overhead_s: [0.01, 1.0e+12]\n");
  try {
    run_experiment_file(run, {}, dir_ / "r");
    FAIL() << "no error";
  } catch (const SimulationError& e) {
    EXPECT_NE(std::string(e.what()).find("(in sweep point 1 'cost.iteration_overhead_s=1.0e+12')"), std::string::npos)
        << e.what();
  }
}

TEST_F(ExperimentTest, WorkloadErrorsNameTheKey) {
  const std::string file = write("bad.yaml",
                                 "name: bad\n"
                                 "workload:\n"
                                 "  arrival: {kind: poisson, rate: 2}\n"
                                 "  duration_s: -5\n");
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(file, {}, dir_ / "out"); }, file, 4, "workload.duration_s",
                                  {"found -5"}));
  const std::string file2 = write("bad2.yaml",
                                  "name: bad\n"
                                  "workload:\n"
                                  "  arrival:\n"
                                  "    kind: poisson\n"
                                  "    rate: -2\n"
                                  "  max_requests: 10\n");
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(file2, {}, dir_ / "out"); }, file2, 5,
                                  "workload.arrival.rate", {}));
  // The workload's seed comes from the top-level key, and the error names that key.
  const std::string file3 = write("bad3.yaml",
                                  "name: bad\n"
                                  "seed: 5000000000\n"
                                  "workload:\n"
                                  "  lengths: {kind: cycle_shuffle, path: " + kShareGpt + "}\n"
                                  "  arrival: {kind: poisson_quantum, rate: 4}\n"
                                  "  duration_s: 10\n"
                                  "  rng: artifact\n");
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(file3, {}, dir_ / "out"); }, file3, 2, "seed",
                                  {"found 5000000000"}));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// A sessions workload: a value error names workload.sessions.<key> at its line; a valid one
// runs with the prefix cache on (its hash ids are what the cache keys on) and hits it.
TEST_F(ExperimentTest, SessionsWorkloadRunsWithThePrefixCacheAndNamesBadKeys) {
  const std::string bad = write("bad.yaml",
                                "name: bad\n"
                                "workload:\n"
                                "  kind: sessions\n"
                                "  max_requests: 10\n"
                                "  sessions:\n"
                                "    turns: {kind: uniform, lo: 0, hi: 3}\n");
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(bad, {}, dir_ / "bad"); }, bad, 6,
                                  "workload.sessions.turns.lo", {}));
  const std::string good = write("sessions.yaml",
                                 "name: sessions\n"
                                 "workload:\n"
                                 "  kind: sessions\n"
                                 "  arrival: {kind: poisson, rate: 1}\n"
                                 "  lengths:\n"
                                 "    prompt: {kind: uniform, lo: 20, hi: 200}\n"
                                 "    output: {kind: uniform, lo: 10, hi: 100}\n"
                                 "  sessions:\n"
                                 "    turns: {kind: uniform, lo: 2, hi: 5}\n"
                                 "    think_time: {kind: fixed, value_s: 30}\n"
                                 "    system_prompts: 2\n"
                                 "    system_prompt_tokens: {kind: fixed, value: 256}\n"
                                 "  max_requests: 120\n"
                                 "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
                                 "kv: {slots: 65536}\n");
  run_experiment_file(good, {}, dir_ / "good");
  const nlohmann::json s = read_json(dir_ / "good/summary.json");
  EXPECT_GT(s["prefix_hit_rate"].get<double>(), 0.3) << s.dump();
  EXPECT_TRUE(YAML::LoadFile((dir_ / "good/config.resolved.yaml").string())["workload"]["sessions"]);
}

// kv.slots = 0 (the default) derives the pool from GPU memory as vLLM 0.15.1 sizes it: for
// OPT-13B on an A100-40GB 14,496 slots, 8% below the paper's 15,728 (vLLM of 2023 profiled no
// sampler or non-torch memory), in whole blocks; pagesim's own formula (kv.engine: pagesim)
// keeps its 15,312; a bigger GPU holds more.
TEST(BuildRun, DefaultKvSlotsAreDerivedFromGpuMemory) {
  const YAML::Node root = YAML::Load("workload: {max_requests: 1}\n");
  const sim::Run run = build_run(parse_experiment(root, "defaults.yaml"));
  EXPECT_EQ(run.kv_slots, 14496);
  ASSERT_TRUE(run.kv_budget);
  EXPECT_EQ(build_run(parse_experiment(YAML::Load("workload: {max_requests: 1}\nkv: {engine: pagesim}\n"), "p.yaml"))
                .kv_slots,
            15312);
  EXPECT_EQ(run.kv_slots % 16, 0);
  EXPECT_EQ(run.allocator->block_size(), 16);
  const YAML::Node big = YAML::Load("workload: {max_requests: 1}\ngpu: a100-80gb\n");
  EXPECT_GT(build_run(parse_experiment(big, "big.yaml")).kv_slots, 2 * run.kv_slots);
  const YAML::Node set = YAML::Load("workload: {max_requests: 1}\nkv: {slots: 15728}\n");
  EXPECT_EQ(build_run(parse_experiment(set, "set.yaml")).kv_slots, 15728);
}

// kv.engine vllm (the default) sizes the derived pool as vllm_version's start-up profiling
// does (vllm_kv_budget.h): the run's pool is the budget's tokens, its profile run takes the
// scheduler's limits (fewer sequences sampled, a smaller activation peak), and summary.json
// prints the budget. kv.engine pagesim keeps the earlier formula and no kv_budget; a release
// outside the modelled ones is refused naming vllm_version.
TEST(BuildRun, VllmEngineSizesThePoolAsVllmDoes) {
  const std::string base = "workload: {max_requests: 1}\nmodel: llama-3.1-8b\ngpu: h100-sxm\nmax_model_len: 8192\n"
                           "scheduler: {kind: vllm-v1, max_num_batched_tokens: 8192, max_num_seqs: 1024}\n";
  const sim::Run run = build_run(parse_experiment(YAML::Load(base + "vllm_version: 0.19.0\nkv: {gpu_memory_utilization: 0.95}\n"), "v.yaml"));
  ASSERT_TRUE(run.kv_budget);
  EXPECT_EQ(run.kv_slots, run.kv_budget->tokens);
  EXPECT_NEAR(static_cast<double>(run.kv_slots) / 476'016, 1.0, 0.01);  // vLLM v0.19.0's log
  EXPECT_DOUBLE_EQ(run.kv_budget->max_concurrency, static_cast<double>(run.kv_slots) / 8192);
  const sim::Run few = build_run(parse_experiment(
      YAML::Load("workload: {max_requests: 1}\nmodel: llama-3.1-8b\ngpu: h100-sxm\nmax_model_len: 8192\n"
                 "scheduler: {kind: vllm-v1, max_num_batched_tokens: 8192, max_num_seqs: 16}\n"
                 "vllm_version: 0.19.0\nkv: {gpu_memory_utilization: 0.95}\n"),
      "few.yaml"));
  EXPECT_LT(few.kv_budget->activation_bytes, run.kv_budget->activation_bytes);
  EXPECT_GT(few.kv_slots, run.kv_slots);
  const sim::Run legacy = build_run(parse_experiment(YAML::Load(base + "kv: {engine: pagesim, gpu_memory_utilization: 0.95}\n"), "p.yaml"));
  EXPECT_FALSE(legacy.kv_budget);
  EXPECT_GT(legacy.kv_slots, run.kv_slots);  // datasheet memory, no activation or non-torch terms
  const nlohmann::json j = kv_budget_json(*run.kv_budget, KvEngine::kVllm0_17);
  EXPECT_EQ(j["engine"], "vllm-0.17");
  EXPECT_EQ(j["kv_cache_tokens"], run.kv_slots);
  EXPECT_DOUBLE_EQ(j["requested_gib"].get<double>(), 75.23);
  try {
    build_run(parse_experiment(YAML::Load(base + "vllm_version: 0.34.0\n"), "new.yaml"));
    ADD_FAILURE() << "a release whose CUDA-graph estimate is not modelled sized a pool";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("vllm_version is 0.34.0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kv.engine: pagesim"), std::string::npos) << e.what();
  }
  EXPECT_EQ(build_run(parse_experiment(YAML::Load(base + "vllm_version: 0.34.0\nkv: {slots: 4096}\n"), "s.yaml")).kv_slots,
            4096);
}

// A pool of whole blocks holds kv.slots rounded down to them, and the run says so and reports
// that pool (issue 24, item 5): 4,100 slots in blocks of 16 are 256 blocks, 4,096 slots, for
// paged, radix and contiguous buddy alike (buddy refused 4,100 before). One warning names
// kv.slots, the block size and the slots simulated. Slot-granular placement holds any number.
TEST(BuildRun, APoolOfWholeBlocksHoldsKvSlotsRoundedDownToThem) {
  const std::vector<std::pair<std::string, std::string>> pools = {
      {"paged", "{kind: paged, block_size: 16}\nscheduler: {kind: vllm}"},
      {"radix", "{kind: radix, block_size: 16}\nscheduler: {kind: sglang}"},
      {"contiguous", "{kind: contiguous, placement: buddy, block_size: 16}\nscheduler: {kind: orca}"}};
  for (const auto& pool : pools) {
    SCOPED_TRACE(pool.first);
    const std::string rest = "allocator: " + pool.second + "\n";
    const sim::Run run = build_run(parse_experiment(YAML::Load("workload: {max_requests: 1}\nkv:\n  slots: 4100\n" + rest), "x.yaml"));
    EXPECT_EQ(run.kv_slots, 4096);
    EXPECT_EQ(run.allocator->capacity_slots(), 4096);
    EXPECT_EQ(run.warnings, std::vector<std::string>{
                                "x.yaml:3: kv.slots: 4100 slots are not a whole number of blocks of allocator.block_size "
                                "= 16: the " + pool.first + " pool holds 256 blocks = 4096 slots, which the run "
                                "simulates and reports as kv_slots (4096 or 4112 would be whole blocks)"});
    const sim::Run whole = build_run(parse_experiment(YAML::Load("workload: {max_requests: 1}\nkv: {slots: 4096}\n" + rest), "x.yaml"));
    EXPECT_EQ(whole.kv_slots, 4096);
    EXPECT_TRUE(whole.warnings.empty());
  }
  for (const char* placement : {"first_fit", "best_fit"}) {
    const sim::Run run = build_run(parse_experiment(
        YAML::Load(std::string("workload: {max_requests: 1}\nkv: {slots: 4100}\nallocator: {kind: contiguous, placement: ") +
                   placement + "}\nscheduler: {kind: orca}\n"),
        "x.yaml"));
    EXPECT_EQ(run.kv_slots, 4100) << placement;
    EXPECT_EQ(run.allocator->capacity_slots(), 4100) << placement;
    EXPECT_TRUE(run.warnings.empty()) << placement;
  }
}

// kv_dtype sets the run's KV bytes per token, so the derived pool: fp8 twice the slots of
// fp16 up to one block; the measured-profile cost model is warned about (its timings are fp16).
TEST(BuildRun, KvDtypeSetsTheDerivedPool) {
  const YAML::Node fp16 = YAML::Load("workload: {max_requests: 1}\nmodel: llama-3-8b\ngpu: a100-80gb\n");
  const YAML::Node fp8 = YAML::Load("workload: {max_requests: 1}\nmodel: llama-3-8b\ngpu: a100-80gb\nkv_dtype: fp8\n");
  const sim::Run a = build_run(parse_experiment(fp16, "fp16.yaml"));
  const sim::Run b = build_run(parse_experiment(fp8, "fp8.yaml"));
  EXPECT_EQ(b.model.kv_dtype, KvDtype::kFp8);
  EXPECT_EQ(b.model.kv_bytes_per_token(), a.model.kv_bytes_per_token() / 2);
  EXPECT_GE(b.kv_slots, 2 * a.kv_slots);
  EXPECT_LE(b.kv_slots, 2 * a.kv_slots + 16);
  EXPECT_TRUE(b.warnings.empty());
}

// Under a measured profile, cost.iteration_overhead_s is the host's time per step that a
// GPU-only profile lacks: the run's cost model charges it on every non-empty iteration.
TEST(BuildRun, ProfileTakesTheIterationOverhead) {
  const std::string profile = (kSource / "tests/sim/data/cost_profile_example.csv").string();
  const YAML::Node plain = YAML::Load("workload: {max_requests: 1}\ncost: {kind: profile, profile: '" + profile + "'}\n");
  const YAML::Node host = YAML::Load("workload: {max_requests: 1}\ncost: {kind: profile, profile: '" + profile +
                                     "', iteration_overhead_s: 0.0125}\n");
  const sim::Run a = build_run(parse_experiment(plain, "plain.yaml"));
  const sim::Run b = build_run(parse_experiment(host, "host.yaml"));
  BatchShape batch;
  batch.add_decode_seq(512);
  batch.add_prefill_chunk(100, 0, true);
  EXPECT_DOUBLE_EQ(b.cost->iteration_seconds(batch), a.cost->iteration_seconds(batch) + 0.0125);
  EXPECT_EQ(b.cost->iteration_seconds(BatchShape{}), 0.0);
}

// Errors found while building a run, after parsing, name the file, the line and the key:
// `root`'s config is built and must fail with exactly "<file>[:line]: <key>: ..." holding
// `words`.
::testing::AssertionResult build_fails_with(const YAML::Node& root, const std::string& file, int line,
                                            const std::string& key, const std::string& words) {
  return throws_config_error([&] { build_run(parse_experiment(root, file)); }, file, line, key, {words});
}

TEST(BuildRun, ErrorsNameFileLineAndKey) {
  const char* mismatch =
      "name: bad\n"                     // 1
      "workload: {max_requests: 1}\n"   // 2
      "allocator:\n"                    // 3
      "  kind: contiguous\n"            // 4
      "scheduler:\n"                    // 5
      "  kind: vllm\n";                 // 6
  EXPECT_TRUE(build_fails_with(YAML::Load(mismatch), "bad.yaml", 4, "allocator.kind",
                               "scheduler.kind 'vllm' needs the paged allocator, found 'contiguous'"));
  // The scheduler left to its default: still on allocator.kind.
  EXPECT_TRUE(build_fails_with(YAML::Load("allocator: {kind: contiguous}\n"), "bad.yaml", 1, "allocator.kind",
                               "needs the paged allocator"));
  EXPECT_TRUE(build_fails_with(YAML::Load("name: bad\nmodel: nonexistent\n"), "bad.yaml", 2, "model",
                               "'nonexistent'"));
  EXPECT_TRUE(build_fails_with(YAML::Load("name: bad\ngpu: abacus\n"), "bad.yaml", 2, "gpu", "'abacus'"));
  // A component's own check, mapped to its section: the paged allocator's block size.
  EXPECT_TRUE(build_fails_with(YAML::Load("name: bad\nkv: {slots: 4096}\nallocator:\n  block_size: 12\n"),
                               "bad.yaml", 4, "allocator", "block_size must be a power of two, got 12"));
}

TEST(BuildRun, ErrorsInASweepCaseNameTheCaseLine) {
  const Sweep points = Sweep::from_text(
      "name: bad\n"                                              // 1
      "workload: {max_requests: 1}\n"                            // 2
      "kv: {slots: 4096}\n"                                      // 3
      "sweep:\n"                                                 // 4
      "  cases:\n"                                               // 5
      "    - {label: paged}\n"                                   // 6
      "    - {label: orca-ish, allocator.kind: contiguous}\n"    // 7
      "    - {label: tiny, kv.slots: 8}\n",                      // 8
      "bad.yaml");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(build_run(points.config(0)).kv_slots, 4096);
  EXPECT_TRUE(throws_config_error([&] { build_run(points.config(1)); }, "bad.yaml", 7, "allocator.kind",
                                  {"needs the paged allocator"}));
  EXPECT_TRUE(throws_config_error([&] { points.config(2); }, "bad.yaml", 8, "kv.slots", {}));
}

TEST(BuildRun, ErrorsAboutASetValueNameTheKeyOnly) {
  YAML::Node root = YAML::Load("name: bad\nworkload: {max_requests: 1}\nallocator:\n  kind: paged\n");
  apply_override(root, "allocator.kind=contiguous");
  EXPECT_TRUE(build_fails_with(root, "bad.yaml", 0, "allocator.kind", "needs the paged allocator"));
  YAML::Node root2 = YAML::Load("name: bad\nmodel: opt-13b\n");
  apply_override(root2, "model=nonexistent");
  EXPECT_TRUE(build_fails_with(root2, "bad.yaml", 0, "model", "'nonexistent'"));
}

// The vLLM paper's Figure 2 on 120 s of arrivals (window 40-120 s): the share of KV memory
// holding token states orders Orca Max < Pow2 < Oracle < vLLM, and vLLM's is above 90%.
TEST(Fig2Shortened, OrderingAndVllmAbove90) {
  const fs::path out = fs::temp_directory_path() / ("pagesim-test-" + std::to_string(::getpid()) + "-fig2");
  fs::remove_all(out);
  const auto results = run_experiment_file((kSource / "experiments/vllm_paper/fig2.yaml").string(),
                                           {"workload.duration_s=120", "measure.window_start_s=40",
                                            "measure.window_end_s=120", "workload.lengths.path=" + kShareGpt},
                                           out);
  std::error_code ec;
  fs::remove_all(out, ec);
  ASSERT_EQ(results.size(), 4u);
  std::map<std::string, double> tokens;
  for (const auto& r : results) {
    tokens[r.label] = r.summary.memory_pct.token_states;
    EXPECT_GT(r.summary.window_iterations, 100) << r.label;
    EXPECT_NEAR(r.summary.memory_pct.token_states + r.summary.memory_pct.reserved +
                    r.summary.memory_pct.over_reserved + r.summary.memory_pct.rounding + r.summary.memory_pct.free,
                100.0, 1e-6)
        << r.label;
  }
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_LT(tokens.at("orca-max"), tokens.at("orca-pow2"));
  EXPECT_LT(tokens.at("orca-pow2"), tokens.at("orca-oracle"));
  EXPECT_LT(tokens.at("orca-oracle"), tokens.at("vllm"));
  EXPECT_GT(tokens.at("vllm"), 90.0);
  // Orca reserves (Max, Pow2 over-reserve); vLLM reserves nothing.
  EXPECT_GT(results[0].summary.memory_pct.over_reserved, results[1].summary.memory_pct.over_reserved);
  EXPECT_EQ(results[2].summary.memory_pct.over_reserved, 0.0);
  EXPECT_EQ(results[3].summary.memory_pct.reserved, 0.0);
}

// Mooncake's conversation trace shares prompt prefixes (hash ids per 512 tokens): with the
// prefix cache some prompt tokens are served from it; without, none.
TEST_F(ExperimentTest, MooncakePrefixCacheHits) {
  const std::string file = write("mooncake.yaml",
                                 "name: mooncake\n"
                                 "seed: 1\n"
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
                                 "  max_total_tokens: 16384\n"
                                 "  max_requests: 300\n"
                                 "model: llama-2-7b\nmax_model_len: off\n"
                                 "gpu: a100-80gb\n"
                                 "kv: {slots: 262144}\n"
                                 "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
                                 "scheduler: {kind: vllm, max_num_batched_tokens: 16384}\n"
                                 "cost: {kind: roofline}\n");
  const auto on = run_experiment_file(file, {}, dir_ / "on");
  const auto off = run_experiment_file(file, {"allocator.prefix_cache=false"}, dir_ / "off");
  ASSERT_EQ(on.size(), 1u);
  ASSERT_EQ(off.size(), 1u);
  EXPECT_EQ(on[0].summary.requests_finished, 300);
  EXPECT_EQ(off[0].summary.requests_finished, 300);
  EXPECT_GT(on[0].summary.prefix_hit_rate, 0.0);
  EXPECT_LT(on[0].summary.prefix_hit_rate, 1.0);
  EXPECT_EQ(off[0].summary.prefix_hit_rate, 0.0);
  EXPECT_EQ(read_json(dir_ / "on/summary.json")["prefix_hit_rate"].get<double>(), on[0].summary.prefix_hit_rate);
  // The hits show up per request as cached prompt tokens.
  std::int64_t cached_on = 0, cached_off = 0;
  for (const Row& r : parse_csv(read_file(dir_ / "on/requests.csv"))) cached_on += std::stoll(r.at("cached_tokens"));
  for (const Row& r : parse_csv(read_file(dir_ / "off/requests.csv"))) cached_off += std::stoll(r.at("cached_tokens"));
  EXPECT_GT(cached_on, 0);
  EXPECT_EQ(cached_off, 0);
  // Without preemptions every prompt is looked up once: the hit rate is the share of
  // prompt tokens served from the cache.
  ASSERT_EQ(on[0].summary.preemptions, 0);
  std::int64_t prompts = 0;
  for (const Row& r : parse_csv(read_file(dir_ / "on/requests.csv"))) prompts += std::stoll(r.at("prompt_tokens"));
  EXPECT_NEAR(on[0].summary.prefix_hit_rate, static_cast<double>(cached_on) / static_cast<double>(prompts), 1e-12);
}

}  // namespace
}  // namespace pagesim::sim
