// The pagesim command line: help, exit statuses, error lines naming file:line and key, a
// run that prints its table and writes its files, trace stats on the bundled Azure trace
// (detected or named by --format) and on a malformed file, trace gen read back by trace
// stats, trace cache-curve on the bundled Mooncake trace, traces with no request refused,
// integer options that say their range; and the hand-over of the CUDA commands to pagesim-cuda (sim/cli/cuda_handoff.h):
// pagesim loads no CUDA library, runs `validate --device cpu` itself, and `validate --device
// cuda` / `profile` reach the CUDA code through pagesim-cuda (or name the missing
// executable); the output folder: results of another run refused unless --overwrite or
// --resume, a second run into a folder in use refused naming the first's pid, a run into a
// point folder of a running or finished sweep refused naming the sweep's folder, SIGINT /
// SIGTERM stopping a run with 128 + the signal and no temporary left. Runs the built binaries (PAGESIM_BINARY, and PAGESIM_CUDA_BINARY in a CUDA
// build) from a fresh temporary folder.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "temp_dir_test.h"

#ifdef PAGESIM_CUDA_BINARY
#include "kernels/cuda/cuda_host.h"
#endif

namespace {

namespace fs = std::filesystem;

const fs::path kSource = PAGESIM_SOURCE_DIR;

using Result = pagesim::sim::testing::CommandResult;

using pagesim::sim::testing::read_file;

using pagesim::sim::testing::shell_quote;

class Cli : public pagesim::sim::testing::TempDirTest {
 protected:
  // Runs `pagesim <args>` in the temporary folder.
  Result pagesim(const std::string& args) const { return run_binary(PAGESIM_BINARY, args); }

  // Runs `binary <args>` in the temporary folder.
  Result run_binary(const fs::path& binary, const std::string& args) const {
    return pagesim::sim::testing::run_in(dir_, shell_quote(binary.string()) + " " + args);
  }

  // A copy of pagesim alone in a folder of its own: no pagesim-cuda beside it.
  fs::path lone_pagesim() const {
    const fs::path lone = dir_ / "lone";
    fs::create_directories(lone);
    fs::copy_file(PAGESIM_BINARY, lone / "pagesim", fs::copy_options::overwrite_existing);
    return lone / "pagesim";
  }

  // Runs a small experiment that samples two small batches; returns OUT/batches.jsonl.
  std::string sampled_batches() const;
};

std::string small_experiment() {
  return "name: cli-small\n"
         "seed: 3\n"
         "workload:\n"
         "  arrival: {kind: poisson, rate: 10}\n"
         "  lengths: {kind: empirical, path: '" +
         (kSource / "traces/data/sharegpt_opt_lengths.csv").string() +
         "'}\n"
         "  max_total_tokens: 2048\n"
         "  max_requests: 60\n"
         "kv: {slots: 8192}\n"
         "cost: {kind: roofline}\n";
}

std::string Cli::sampled_batches() const {
  const std::string file = write("small.yaml", small_experiment());
  const Result r = pagesim("run " + shell_quote(file) +
                           " --out sampled -q --set validate.every_n_iterations=20 --set validate.max_batches=2 "
                           "--set workload.max_total_tokens=256");  // small batches: a quick check
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "sampled/batches.jsonl"));
  return (dir_ / "sampled/batches.jsonl").string();
}

// The number after `label` at the start of a line of a trace stats table.
long stat(const std::string& table, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(table, m, std::regex("(^|\n)" + label + " +([0-9]+)"))) return -1;
  return std::stol(m[2]);
}

TEST_F(Cli, HelpExitsZero) {
  const Result r = pagesim("--help");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("trace"), std::string::npos) << r.out;
  EXPECT_EQ(pagesim("run --help").status, 0);
}

// `pagesim presets` prints the listing (presets_listing_test.cpp checks its content); `run
// --help` says where each output goes, and that progress stays off stdout.
TEST_F(Cli, PresetsAndWhereOutputsGo) {
  const Result presets = pagesim("presets");
  EXPECT_EQ(presets.status, 0) << presets.err;
  for (const char* s : {"opt-13b", "a100-40gb", "vllm-v1", "contiguous", "lru_protect_waiting"})
    EXPECT_NE(presets.out.find(s), std::string::npos) << s;
  const Result help = pagesim("run --help");
  for (const char* s : {"out/<file name without .yaml>", "timeline.json", "batches.jsonl", "NN-label",
                        "progress and warnings go to stderr"})
    EXPECT_NE(help.out.find(s), std::string::npos) << s << " in:\n" << help.out;
  EXPECT_EQ(pagesim("plot --help").status, 0);
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(pagesim("").status, 2);
  EXPECT_EQ(pagesim("run").status, 2);
  EXPECT_EQ(pagesim("trace").status, 2);
  EXPECT_EQ(pagesim("run x.yaml --no-such-flag").status, 2);
}

// Integer options with a range say it (usage errors, status 2), not CLI11's double range
// "Value 0 not in range 0.000000 to 1.79769e+308".
TEST_F(Cli, IntegerOptionsSayTheRangeTheyExpect) {
  const std::string trace = shell_quote((kSource / "traces/data/mooncake_conversation_trace.jsonl").string());
  write("b.jsonl", "");
  write("x.yaml", "name: x\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model opt-13b --tp 0", "--tp: expected an integer >= 1, found '0'"},
      {"model opt-13b --tp -2", "--tp: expected an integer >= 1, found '-2'"},
      {"model opt-13b --tp 1.5", "--tp: expected an integer >= 1, found '1.5'"},
      {"model opt-13b --tp 99999999999", "--tp: expected an integer >= 1 no larger than 2147483647, found "
                                         "'99999999999'"},
      {"trace cache-curve " + trace + " --block-size 0", "--block-size: expected an integer >= 1, found '0'"},
      {"trace cache-curve " + trace + " --hash-block-tokens 0",
       "--hash-block-tokens: expected an integer >= 1, found '0'"},
      {"trace cache-curve " + trace + " --points-per-decade 0",
       "--points-per-decade: expected an integer in [1, 1000], found '0'"},
      {"run x.yaml -j 0", "--jobs: expected an integer in [1, 1024], found '0'"},
      {"run x.yaml -j 2000", "--jobs: expected an integer in [1, 1024], found '2000'"},
      {"validate b.jsonl --heads 0", "--heads: expected an integer >= 1, found '0'"},
      {"validate b.jsonl --kv-heads 0", "--kv-heads: expected an integer >= 1, found '0'"},
      {"validate b.jsonl --head-dim 0", "--head-dim: expected an integer >= 1, found '0'"},
  };
  for (const auto& [args, says] : cases) {
    const Result r = pagesim(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_NE(r.err.find(says), std::string::npos) << args << ": " << r.err;
    EXPECT_EQ(r.err.find("not in range"), std::string::npos) << args << ": " << r.err;
  }
  const Result ok = pagesim("model opt-13b --tp 2");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_NE(pagesim("model --help").out.find("INT:POSITIVE"), std::string::npos);
}

TEST_F(Cli, MissingExperimentFileFails) {
  const Result r = pagesim("run missing.yaml --out out");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(Cli, UnknownKeyNamesFileLineAndKey) {
  const std::string file =
      write("typo.yaml", "name: typo\nscheduler:\n  kind: vllm\n  max_num_seq: 8\n");
  const Result r = pagesim("run " + shell_quote(file) + " --out out -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(file + ":4: scheduler.max_num_seq: unknown key"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("max_num_seqs"), std::string::npos) << r.err;  // the allowed keys
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(Cli, BadSetOverrides) {
  const std::string file = write("small.yaml", small_experiment());
  // A --set key that does not exist: named with the option that gave it, not the file.
  Result r = pagesim("run " + shell_quote(file) + " --out out -q --set scheduler.max_num_seq=8");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: --set scheduler.max_num_seq=8: scheduler.max_num_seq: unknown key"), std::string::npos)
      << r.err;
  // A bad --set value is not blamed on the file.
  r = pagesim("run " + shell_quote(file) + " --out out -q --set kv.slots=lots");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: --set kv.slots=lots: kv.slots: expected an integer, found 'lots'"), std::string::npos)
      << r.err;
  // A --set value found bad only while building the run: the option and the key.
  r = pagesim("run " + shell_quote(file) + " --out out -q --set allocator.kind=contiguous");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: --set allocator.kind=contiguous: allocator.kind: scheduler.kind 'vllm' needs the paged "
                       "allocator"),
            std::string::npos)
      << r.err;
  // A malformed --set.
  r = pagesim("run " + shell_quote(file) + " --out out -q --set kv.slots");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--set: kv.slots: expected key.path=value"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// run -j N: the sweep's points on N threads, the same sweep.csv as -j 1; --set of a swept
// key is refused naming both; a sweep axis replaced by --set.
TEST_F(Cli, RunSweepJobsAndSetOfSweptKeys) {
  const std::string file =
      write("sweep.yaml", small_experiment() + "sweep:\n  scheduler.max_num_seqs: [8, 32]\n  seed: [1, 2]\n");
  Result r = pagesim("run " + shell_quote(file) + " --out one -q -j 1");
  ASSERT_EQ(r.status, 0) << r.err;
  r = pagesim("run " + shell_quote(file) + " --out three -q -j 3");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir_ / "one/sweep.csv"), read_file(dir_ / "three/sweep.csv"));
  EXPECT_NE(read_file(dir_ / "three/sweep.csv"), "");
  r = pagesim("run " + shell_quote(file) + " --out zero -q -j 0");
  EXPECT_EQ(r.status, 2) << r.err;
  r = pagesim("run " + shell_quote(file) + " --out clash -q --set scheduler.max_num_seqs=16");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--set: scheduler.max_num_seqs: the sweep also varies 'scheduler.max_num_seqs' (" + file +
                       ":"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "clash"));
  r = pagesim("run " + shell_quote(file) + " --out axis -q --set 'sweep.scheduler.max_num_seqs=[16]'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "axis/01-scheduler.max_num_seqs=16_seed=2/summary.json"));
  EXPECT_FALSE(fs::exists(dir_ / "axis/02-scheduler.max_num_seqs=32_seed=1"));
}

TEST_F(Cli, RunPrintsTheTableAndWritesFiles) {
  const std::string file = write("small.yaml", small_experiment());
  const Result r = pagesim("run " + shell_quote(file) + " --out out --set scheduler.max_num_seqs=32");
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* col : {"run", "tokens%", "resv%", "over%", "round%", "free%", "batch", "req/s", "norm.lat", "preempt"})
    EXPECT_NE(r.out.find(col), std::string::npos) << col << " in:\n" << r.out;
  EXPECT_NE(r.out.find("results in out"), std::string::npos) << r.out;
  // One result row: "run" and nine numbers.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nrun( +[0-9.]+){9}\n"))) << r.out;
  for (const char* f : {"summary.json", "config.resolved.yaml", "requests.csv", "iterations.csv"})
    EXPECT_TRUE(fs::is_regular_file(dir_ / "out" / f)) << f;
  EXPECT_NE(read_file(dir_ / "out/config.resolved.yaml").find("max_num_seqs: 32"), std::string::npos);
  EXPECT_NE(read_file(dir_ / "out/summary.json").find("\"requests_finished\": 60"), std::string::npos);
}

// Input paths resolve against the experiment file's folder, then the bundled data
// (sim/config/input_path.h), whatever the working directory: a copy of a bundled experiment
// elsewhere, run from a third folder, writes what the bundled file writes, its lengths file
// named as the bundled file names it.
TEST_F(Cli, CopiedBundledExperimentRunsFromAnotherFolder) {
  fs::create_directories(dir_ / "exp");
  fs::create_directories(dir_ / "elsewhere");
  fs::copy_file(kSource / "experiments/vllm_paper/fig2.yaml", dir_ / "exp/fig2.yaml");
  const std::string shorter = " -q --set workload.duration_s=20 --set measure.window_start_s=0 --set "
                              "measure.window_end_s=20";
  Result r = pagesim::sim::testing::run_in(dir_ / "elsewhere", shell_quote(PAGESIM_BINARY) + " run ../exp/fig2.yaml --out ../copy" + shorter);
  ASSERT_EQ(r.status, 0) << r.err;
  r = pagesim("run " + shell_quote((kSource / "experiments/vllm_paper/fig2.yaml").string()) + " --out bundled" + shorter);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"sweep.csv", "03-vllm/config.resolved.yaml", "03-vllm/requests.csv", "00-orca-max/iterations.csv"})
    EXPECT_EQ(read_file(dir_ / "copy" / f), read_file(dir_ / "bundled" / f)) << f;
  EXPECT_NE(read_file(dir_ / "copy/03-vllm/config.resolved.yaml").find("    path: traces/data/sharegpt_opt_lengths.csv\n"),
            std::string::npos);
  EXPECT_NE(read_file(dir_ / "copy/03-vllm/summary.json").find("rows of 'traces/data/sharegpt_opt_lengths.csv'"),
            std::string::npos);
}

// A file beside the experiment is found by its name from any folder, and recorded by its
// absolute path (config.resolved.yaml reruns from anywhere); a --set value is relative to
// the working directory; a file the run reads that no folder holds names the key.
TEST_F(Cli, RelativeInputPathsResolveAgainstTheExperimentsFolder) {
  fs::create_directories(dir_ / "exp");
  fs::create_directories(dir_ / "elsewhere");
  fs::copy_file(kSource / "traces/data/sharegpt_opt_lengths.csv", dir_ / "exp/lengths.csv");
  std::string text = small_experiment();
  const std::string bundled = (kSource / "traces/data/sharegpt_opt_lengths.csv").string();
  text.replace(text.find(bundled), bundled.size(), "lengths.csv");
  std::ofstream(dir_ / "exp/own.yaml") << text;
  const std::string binary = shell_quote(PAGESIM_BINARY);
  Result r = pagesim::sim::testing::run_in(dir_ / "elsewhere", binary + " run ../exp/own.yaml --out ../own -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string lengths = (fs::weakly_canonical(dir_) / "exp/lengths.csv").string();
  EXPECT_NE(read_file(dir_ / "own/config.resolved.yaml").find("path: " + lengths + "\n"), std::string::npos)
      << read_file(dir_ / "own/config.resolved.yaml");
  // The resolved config reruns from another folder to the same results.
  r = pagesim("run own/config.resolved.yaml --out again -q");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir_ / "own/requests.csv"), read_file(dir_ / "again/requests.csv"));
  // --set: relative to the working directory, not to the file's folder.
  r = pagesim::sim::testing::run_in(dir_, binary + " run exp/own.yaml --out set -q --set workload.lengths.path=exp/lengths.csv");
  EXPECT_EQ(r.status, 0) << r.err;
  r = pagesim::sim::testing::run_in(dir_, binary + " run exp/own.yaml --out set2 -q --set workload.lengths.path=lengths.csv");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pagesim: error: --set workload.lengths.path=lengths.csv: workload.lengths.path: expected an "
                       "existing file, found "
                       "'lengths.csv': not in " + fs::weakly_canonical(dir_).string() + ", "),
            std::string::npos)
      << r.err;
  // A missing file: the file, the line and the key, and the folders looked in.
  std::ofstream(dir_ / "exp/missing.yaml") << "workload:\n  kind: trace\n  trace: {path: nope.csv}\n";
  r = pagesim::sim::testing::run_in(dir_ / "elsewhere", binary + " run ../exp/missing.yaml --out ../missing -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pagesim: error: ../exp/missing.yaml:3: workload.trace.path: expected an existing file, "
                       "found 'nope.csv': not in " + (fs::weakly_canonical(dir_) / "exp").string() + ", " +
                       (kSource / "traces/data").string()),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "missing"));
}

// `pagesim model`: the layer groups per GPU, the KV dtype applied; an unknown preset is a
// one-line error listing the valid names.
TEST_F(Cli, ModelPrintsLayerGroupsAsJson) {
  const Result r = pagesim("model llama-3.2-11b-vision --tp 2 --kv-dtype fp8");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"kind\": \"cross_attention\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"encoder_tokens\": 6404"), std::string::npos) << r.out;
  // 8 layers · 2 · 4 KV heads per GPU · 128 · 1 byte
  EXPECT_NE(r.out.find("\"kv_bytes_per_token\": 8192"), std::string::npos) << r.out;
  const Result bad = pagesim("model opt-14b");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("unknown model preset 'opt-14b'"), std::string::npos) << bad.err;
  EXPECT_NE(pagesim("model opt-13b --kv-dtype fp4").status, 0);
}

TEST_F(Cli, TraceStatsOfTheAzureConversationTrace) {
  const Result r = pagesim("trace stats " + shell_quote((kSource / "traces/data/azure2023_conv.csv").string()));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(stat(r.out, "requests"), 19366) << r.out;
  EXPECT_NE(r.out.find("prompt"), std::string::npos);
  const Result j = pagesim("trace stats --json " + shell_quote((kSource / "traces/data/azure2023_conv.csv").string()));
  ASSERT_EQ(j.status, 0) << j.err;
  EXPECT_NE(j.out.find("\"requests\": 19366"), std::string::npos) << j.out;
}

TEST_F(Cli, TraceStatsOfAMalformedCsvNamesFileAndLine) {
  const std::string csv = write("bad.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,5\n0.5,12,6\n1.0,abc,5\n2,3,4\n");
  const Result r = pagesim("trace stats " + shell_quote(csv));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(csv + ":4:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("prompt_tokens"), std::string::npos) << r.err;
}

// A trace with no request (a native CSV that holds only its header) has no statistics and
// no curve: stats (table and JSON) and cache-curve fail as `pagesim run` does, and trace gen
// of a workload that yields no request names the key and writes nothing.
TEST_F(Cli, TraceCommandsRefuseATraceWithNoRequest) {
  write("empty.csv", "arrival_s,prompt_tokens,output_tokens,hash_ids\n");
  for (const char* args : {"trace stats empty.csv", "trace stats --json empty.csv"}) {
    const Result r = pagesim(args);
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    EXPECT_EQ(r.err, "pagesim: error: the trace 'empty.csv' holds no request: expected at least one\n") << args;
  }
  const Result c = pagesim("trace cache-curve empty.csv --hash-block-tokens 16");
  EXPECT_EQ(c.status, 1);
  EXPECT_EQ(c.err, "pagesim: error: native csv 'empty.csv': the trace holds no request: expected at least one, with "
                   "hash ids\n");
  write("gen.yaml", "workload:\n  kind: trace\n  trace: {path: empty.csv, format: native}\n");
  const Result g = pagesim("trace gen gen.yaml --out out.csv");
  EXPECT_EQ(g.status, 1);
  // The trace is named as the run found it: beside gen.yaml, by its absolute path.
  EXPECT_EQ(g.err, "pagesim: error: gen.yaml:3: workload.trace.path: the trace '" + (dir_ / "empty.csv").string() +
                       "' holds no request\n");
  EXPECT_FALSE(fs::exists(dir_ / "out.csv"));
}

// --format names the reader instead of detecting it; an unknown name is an error that lists
// the formats.
TEST_F(Cli, TraceStatsFormatOption) {
  const std::string azure = shell_quote((kSource / "traces/data/azure2023_conv.csv").string());
  const Result r = pagesim("trace stats --format azure " + azure);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(stat(r.out, "requests"), 19366) << r.out;
  const Result bad = pagesim("trace stats --format jsonl " + azure);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--format: expected one of auto, native, vidur, azure, mooncake, lengths, vllm-bench, inference-perf-requests, found 'jsonl'"),
            std::string::npos)
      << bad.err;
}

// cache-curve on the bundled Mooncake trace: the table (infinite capacity: 37.36% of prompt
// tokens, the rate the simulator's vllm scheduler reports with an unbounded pool), the CSV,
// and a capacity that is not a number of tokens.
TEST_F(Cli, TraceCacheCurveOfTheMooncakeTrace) {
  const std::string trace = shell_quote((kSource / "traces/data/mooncake_conversation_trace.jsonl").string());
  const Result r = pagesim("trace cache-curve " + trace + " --capacity 3M,50M --policy lru,fifo --out curve.csv");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("93588480 (inf)        182790     37.36%     36.64%"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fifo    direct"), std::string::npos) << r.out;
  const std::string csv = read_file(dir_ / "curve.csv");
  EXPECT_EQ(csv.rfind("policy,method,capacity_blocks,capacity_tokens,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\nlru,direct,97656,49999872,"), std::string::npos) << csv;
  const Result bad = pagesim("trace cache-curve " + trace + " --capacity 3X");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--capacity: expected a whole number of tokens >= 0"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("found '3X'"), std::string::npos) << bad.err;
}

TEST_F(Cli, TraceGenWritesATraceThatStatsReadsBack) {
  const std::string file = write("gen.yaml",
                                 "workload:\n"
                                 "  arrival: {kind: gamma, rate: 5, cv: 2}\n"
                                 "  lengths:\n"
                                 "    prompt: {kind: uniform, lo: 10, hi: 500}\n"
                                 "    output: {kind: lognormal, median: 100, sigma: 0.5, lo: 1, hi: 1000}\n"
                                 "  sampling:\n"
                                 "    - {weight: 1, n: 1}\n"
                                 "    - {weight: 1, n: 3}\n"
                                 "  max_requests: 400\n"
                                 "sweep:\n"
                                 "  allocator.block_size: [8, 16]\n");  // the same trace at every point
  const Result g = pagesim("trace gen " + shell_quote(file) + " --out gen.csv --set workload.max_requests=250");
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.out.find("wrote 250 requests"), std::string::npos) << g.out;
  ASSERT_TRUE(fs::is_regular_file(dir_ / "gen.csv"));
  EXPECT_EQ(read_file(dir_ / "gen.csv").rfind("arrival_s,prompt_tokens,output_tokens", 0), 0u);
  const Result s = pagesim("trace stats gen.csv");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(stat(s.out, "requests"), 250) << s.out;
  // The mix of n survives the round trip.
  EXPECT_TRUE(std::regex_search(s.out, std::regex("mean n / beam width +[12]\\.[0-9]+ / 1\\.000"))) << s.out;
  EXPECT_EQ(s.out.find("mean n / beam width   1.000"), std::string::npos) << s.out;
  // Same file, same seed: the same trace.
  const std::string first = read_file(dir_ / "gen.csv");
  ASSERT_EQ(pagesim("trace gen " + shell_quote(file) + " --out gen.csv --set workload.max_requests=250").status, 0);
  EXPECT_EQ(read_file(dir_ / "gen.csv"), first);
  // A sweep of the workload (or its seed) has a trace per point: refused, saying how to pick one.
  const Result swept = pagesim("trace gen " + shell_quote(file) + " --out other.csv --set 'sweep={seed: [1, 2]}'");
  EXPECT_EQ(swept.status, 1);
  EXPECT_NE(swept.err.find("sweep.seed: the sweep varies the workload"), std::string::npos) << swept.err;
  EXPECT_FALSE(fs::exists(dir_ / "other.csv"));
  const Result picked = pagesim("trace gen " + shell_quote(file) + " --out other.csv --set 'sweep={}' --set seed=2 "
                                "--set workload.max_requests=250");
  ASSERT_EQ(picked.status, 0) << picked.err;
  EXPECT_NE(read_file(dir_ / "other.csv"), first);
  // A bad workload value is named as run names it: the file and the workload.* key.
  const Result bad = pagesim("trace gen " + shell_quote(file) + " --out bad.csv --set workload.duration_s=-5");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("gen.yaml: workload.duration_s: "), std::string::npos) << bad.err;
}

// A sessions workload written by trace gen: hash ids with their block size noted, and
// cache-curve reads the file back given that size (sessions share prefixes: hits > 0).
TEST_F(Cli, TraceGenOfSessionsFeedsCacheCurve) {
  const std::string file = write("sessions.yaml",
                                 "seed: 5\n"
                                 "workload:\n"
                                 "  kind: sessions\n"
                                 "  arrival: {kind: poisson, rate: 1}\n"
                                 "  sessions: {turns: {kind: fixed, value: 3}, system_prompts: 2}\n"
                                 "  max_requests: 60\n");
  const Result g = pagesim("trace gen " + shell_quote(file) + " --out s.csv");
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.out.find("wrote 60 requests"), std::string::npos) << g.out;
  EXPECT_NE(g.err.find("workload.trace.hash_block_tokens: 16"), std::string::npos) << g.err;
  const Result c = pagesim("trace cache-curve s.csv --hash-block-tokens 16");
  ASSERT_EQ(c.status, 0) << c.err;
  EXPECT_TRUE(std::regex_search(c.out, std::regex(R"(\(inf\) +[0-9]+ +[1-9][0-9]\.[0-9]{2}%)"))) << c.out;
  const Result bare = pagesim("trace cache-curve s.csv");
  EXPECT_EQ(bare.status, 1);
  EXPECT_NE(bare.err.find("--hash-block-tokens"), std::string::npos) << bare.err;
}

// A Mooncake workload keeps its hash ids; trace gen says how many tokens each covers (the
// native format cannot), and a replay given that size hits the prefix cache.
TEST_F(Cli, TraceGenOfMooncakeKeepsHashIds) {
  const std::string file = write("mc.yaml",
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + (kSource / "traces/data/mooncake_conversation_trace.jsonl").string() +
                                     "', format: mooncake}\n"
                                 "  max_total_tokens: 16384\n"
                                 "  max_requests: 100\n");
  const Result g = pagesim("trace gen " + shell_quote(file) + " --out mc.csv");
  ASSERT_EQ(g.status, 0) << g.err;
  EXPECT_NE(g.err.find("workload.trace.hash_block_tokens: 512"), std::string::npos) << g.err;
  EXPECT_NE(read_file(dir_ / "mc.csv").find(",hash_ids\n"), std::string::npos);
  const Result s = pagesim("trace stats mc.csv");
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_EQ(stat(s.out, "requests"), 100) << s.out;
  EXPECT_NE(s.out.find("prefix reuse"), std::string::npos) << s.out;
  const std::string replay = write("replay.yaml",
                                   "workload:\n"
                                   "  kind: trace\n"
                                   "  trace: {path: mc.csv, format: native, hash_block_tokens: 512}\n"
                                   "model: llama-2-7b\nmax_model_len: off\n"
                                   "gpu: a100-80gb\n"
                                   "kv: {slots: 262144}\n"
                                   "allocator: {prefix_cache: true}\n"
                                   "scheduler: {max_num_batched_tokens: 16384}\n");
  const Result r = pagesim("run " + shell_quote(replay) + " --out out -q");
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string summary = read_file(dir_ / "out/summary.json");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(summary, m, std::regex("\"prefix_hit_rate\": ([0-9.e-]+)"))) << summary;
  EXPECT_GT(std::stod(m[1]), 0.0) << summary;
}

// A run into a folder holding another run's results is refused, naming the folder, what is
// there and both flags; --overwrite replaces them, --resume keeps what is complete; the two
// flags together are a usage error.
TEST_F(Cli, FolderWithResultsNeedsOverwriteOrResume) {
  const std::string sweep = write("sweep.yaml", small_experiment() + "sweep:\n  kv.slots: [4096, 8192]\n");
  const std::string file = write("small.yaml", small_experiment());
  ASSERT_EQ(pagesim("run " + shell_quote(sweep) + " --out out -q").status, 0);
  Result r = pagesim("run " + shell_quote(file) + " --out out -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "pagesim: error: output folder 'out' holds the results of another run: sweep.csv, 2 point folders "
                   "(00-kv.slots=4096, 01-kv.slots=8192); pass --overwrite to replace them, or --resume to keep the "
                   "points whose results are complete for the same config and run the rest\n");
  EXPECT_FALSE(fs::exists(dir_ / "out/summary.json"));
  r = pagesim("run " + shell_quote(file) + " --out out -q --overwrite");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "out/sweep.csv"));
  EXPECT_FALSE(fs::exists(dir_ / "out/00-kv.slots=4096"));
  EXPECT_TRUE(fs::exists(dir_ / "out/summary.json"));
  r = pagesim("run " + shell_quote(file) + " --out out -q --resume");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("results in out"), std::string::npos) << r.out;
  EXPECT_EQ(pagesim("run " + shell_quote(file) + " --out out -q --resume --overwrite").status, 2);
  const Result help = pagesim("run --help");
  for (const char* s : {"--overwrite", "--resume", "sweep.csv", "point folders", "locked", "SIGINT"})
    EXPECT_NE(help.out.find(s), std::string::npos) << s << " in:\n" << help.out;
}

// --resume reports a kept point's warnings again, as the run that made it did.
TEST_F(Cli, ResumeRepeatsTheWarningsOfKeptPoints) {
  const std::string sweep = write("sweep.yaml", small_experiment() + "sweep:\n  kv.slots: [4096, 100000]\n");
  const Result first = pagesim("run " + shell_quote(sweep) + " --out out -q");
  ASSERT_EQ(first.status, 0) << first.err;
  ASSERT_NE(first.err.find("pagesim: warning: kv.slots=100000: "), std::string::npos) << first.err;
  const Result resumed = pagesim("run " + shell_quote(sweep) + " --out out -q --resume");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(resumed.err, first.err + "pagesim: --resume kept 2 of 2 points (complete for this config): "
                                     "00-kv.slots=4096, 01-kv.slots=100000; ran none\n");
  EXPECT_EQ(resumed.out.substr(0, resumed.out.find("results in")), first.out.substr(0, first.out.find("results in")));
}

// --resume says which points it kept and which it ran again; results it replaces take the
// plots drawn from them (a sweep's top-level plots, a rerun point's), files of other names stay.
TEST_F(Cli, ResumeNamesKeptAndRerunPointsAndDropsStalePlots) {
  const std::string sweep = write("sweep.yaml", small_experiment() + "sweep:\n  kv.slots: [4096, 8192, 16384]\n");
  ASSERT_EQ(pagesim("run " + shell_quote(sweep) + " --out out -q").status, 0);
  for (const char* f : {"sweep_metrics.png", "sweep_memory.svg", "memory_bars.png", "notes.txt",
                        "00-kv.slots=4096/memory_over_time.png", "01-kv.slots=8192/latency_cdf.svg"})
    std::ofstream(dir_ / "out" / f) << "old";
  fs::remove(dir_ / "out/01-kv.slots=8192/summary.json");  // as if the run had been stopped there
  const Result r = pagesim("run " + shell_quote(sweep) + " --out out -q --resume");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "pagesim: --resume kept 2 of 3 points (complete for this config): 00-kv.slots=4096, "
                   "02-kv.slots=16384; ran 1: 01-kv.slots=8192\n");
  for (const char* f : {"sweep_metrics.png", "sweep_memory.svg", "memory_bars.png", "01-kv.slots=8192/latency_cdf.svg"})
    EXPECT_FALSE(fs::exists(dir_ / "out" / f)) << f;
  for (const char* f : {"notes.txt", "00-kv.slots=4096/memory_over_time.png", "01-kv.slots=8192/summary.json"})
    EXPECT_TRUE(fs::exists(dir_ / "out" / f)) << f;
  // A run without sweep, and --overwrite: the plots go with the results.
  const std::string file = write("small.yaml", small_experiment());
  ASSERT_EQ(pagesim("run " + shell_quote(file) + " --out one -q").status, 0);
  Result again = pagesim("run " + shell_quote(file) + " --out one -q --resume");
  EXPECT_EQ(again.err, "pagesim: --resume kept the run's results (complete for this config)\n");
  std::ofstream(dir_ / "one/latency_cdf.png") << "old";
  again = pagesim("run " + shell_quote(file) + " --out one -q --resume --set seed=4");
  EXPECT_EQ(again.err, "pagesim: --resume ran the run (no complete results for this config)\n");
  EXPECT_FALSE(fs::exists(dir_ / "one/latency_cdf.png"));
  std::ofstream(dir_ / "one/latency_cdf.png") << "old";
  ASSERT_EQ(pagesim("run " + shell_quote(file) + " --out one -q --overwrite").status, 0);
  EXPECT_FALSE(fs::exists(dir_ / "one/latency_cdf.png"));
}

// A pagesim run started in the background that lasts until it is stopped: millions of
// requests, every iteration written; `extra` is appended to its file (a sweep). Returns its
// pid once it writes its temporaries (a sweep's, in its first point folder).
pid_t start_long_run(const fs::path& dir, const std::string& out, const std::string& extra = "") {
  std::ofstream(dir / "long.yaml") << "name: long\n"
                                      "workload:\n"
                                      "  arrival: {kind: poisson, rate: 50}\n"
                                      "  lengths: {kind: empirical, path: '" +
                                          (kSource / "traces/data/sharegpt_opt_lengths.csv").string() +
                                          "'}\n"
                                          "  max_total_tokens: 2048\n"
                                          "  max_requests: 9000000\n"
                                          "kv: {slots: 65536}\n" +
                                          extra;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(127);
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::execl(PAGESIM_BINARY, PAGESIM_BINARY, "run", "long.yaml", "--out", out.c_str(), "-q",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  for (int i = 0; i < 1000; ++i) {  // up to 10 s
    bool temporaries = false;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir / out, ec))
      temporaries |= e.path().filename().string().find(".tmp.") != std::string::npos;
    if (temporaries && fs::exists(dir / out / ".pagesim.lock")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pid;
}

// The exit status of `pid` (-1 when a signal killed it).
int wait_status(pid_t pid) {
  int raw = 0;
  if (::waitpid(pid, &raw, 0) != pid) return -2;
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

// Every name below `dir` holding ".tmp" (temporaries of any naming).
std::vector<std::string> temporaries_under(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec))
    if (e.path().filename().string().find(".tmp") != std::string::npos) found.push_back(e.path().string());
  return found;
}

// Two runs into one folder at once: the second fails at once naming the folder and the
// first's pid, and touches nothing of the first's.
TEST_F(Cli, SecondRunIntoAFolderInUseIsRefused) {
  const pid_t first = start_long_run(dir_, "busy");
  const std::string file = write("small.yaml", small_experiment());
  const Result r = pagesim("run " + shell_quote(file) + " --out busy -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pagesim: error: output folder 'busy' is in use by another pagesim run (pid " +
                       std::to_string(first) + ", holding 'busy/.pagesim.lock')"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "busy/summary.json"));
  ::kill(first, SIGTERM);
  EXPECT_EQ(wait_status(first), 128 + SIGTERM);
}

// A run into a point folder of a sweep is refused while the sweep runs (its lock covers the
// sweep's folder, not the points) and after it finished (sweep.csv describes the points):
// one line naming the folder and the sweep's, exit 1, nothing written; the sweep is
// untouched and --resume of the sweep itself still runs (issue 24, item 7).
TEST_F(Cli, RunIntoAPointFolderOfASweepIsRefused) {
  const pid_t sweep = start_long_run(dir_, "busy", "sweep:\n  seed: [0, 1]\n");
  const std::string file = write("small.yaml", small_experiment());
  for (const char* point : {"busy/00-seed=0/", "busy/01-seed=1"}) {
    const Result r = pagesim("run " + shell_quote(file) + " --out " + point + " -q");
    EXPECT_EQ(r.status, 1) << point;
    EXPECT_EQ(r.out, "") << point;
    EXPECT_EQ(r.err, "pagesim: error: output folder '" + std::string(point) + "' is a point folder of 'busy', which "
                     "another pagesim run is writing (pid " + std::to_string(sweep) + ", holding "
                     "'busy/.pagesim.lock'); choose another --out\n");
  }
  EXPECT_FALSE(fs::exists(dir_ / "busy/01-seed=1"));
  EXPECT_FALSE(fs::exists(dir_ / "busy/00-seed=0/summary.json"));
  EXPECT_FALSE(fs::exists(dir_ / "busy/00-seed=0/.pagesim.lock"));
  ::kill(sweep, SIGTERM);
  EXPECT_EQ(wait_status(sweep), 128 + SIGTERM);

  const std::string swept = write("swept.yaml", small_experiment() + "sweep:\n  kv.slots: [4096, 8192]\n");
  ASSERT_EQ(pagesim("run " + shell_quote(swept) + " --out done -q").status, 0);
  const std::string before = read_file(dir_ / "done/00-kv.slots=4096/summary.json");
  for (const char* flag : {"", " --overwrite", " --resume"}) {
    const Result r = pagesim("run " + shell_quote(file) + " --out done/00-kv.slots=4096 -q" + flag);
    EXPECT_EQ(r.status, 1) << flag;
    EXPECT_EQ(r.err, "pagesim: error: output folder 'done/00-kv.slots=4096' is a point folder of the sweep in "
                     "'done' ('done/sweep.csv' describes its points): results run into it would not be the ones "
                     "sweep.csv reports; rerun the sweep into 'done' (--resume keeps its complete points) or "
                     "choose another --out\n")
        << flag;
  }
  EXPECT_EQ(read_file(dir_ / "done/00-kv.slots=4096/summary.json"), before);
  EXPECT_FALSE(fs::exists(dir_ / "done/00-kv.slots=4096/.pagesim.lock"));
  EXPECT_EQ(pagesim("run " + shell_quote(file) + " --out done/02-other -q").status, 1);
  EXPECT_FALSE(fs::exists(dir_ / "done/02-other"));
  // A folder of another name inside the sweep's is no point of it.
  EXPECT_EQ(pagesim("run " + shell_quote(file) + " --out done/plots -q").status, 0);
  const Result resumed = pagesim("run " + shell_quote(swept) + " --out done -q --resume");
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_EQ(read_file(dir_ / "done/00-kv.slots=4096/summary.json"), before);
}

// SIGINT and SIGTERM stop a run: its temporaries and lock file are removed, the folder it
// created too (nothing finished), and it exits with 128 + the signal.
TEST_F(Cli, SignalStopsARunAndRemovesItsTemporaries) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const std::string out = "stopped-" + std::to_string(sig);
    const pid_t pid = start_long_run(dir_, out);
    ASSERT_FALSE(temporaries_under(dir_ / out).empty()) << "the run never started writing";
    ::kill(pid, sig);
    EXPECT_EQ(wait_status(pid), 128 + sig) << "signal " << sig;
    for (const auto& t : temporaries_under(dir_)) ADD_FAILURE() << "temporary left behind: " << t;
    EXPECT_FALSE(fs::exists(dir_ / out)) << "an empty result folder left behind";
  }
}

// After SIGKILL the temporaries stay; the next run into the folder removes them.
TEST_F(Cli, NextRunRemovesTheTemporariesOfAKilledRun) {
  const pid_t pid = start_long_run(dir_, "killed");
  ::kill(pid, SIGKILL);
  EXPECT_EQ(wait_status(pid), -1);
  ASSERT_FALSE(temporaries_under(dir_ / "killed").empty());
  const std::string file = write("small.yaml", small_experiment());
  const Result r = pagesim("run " + shell_quote(file) + " --out killed -q");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(temporaries_under(dir_ / "killed").empty());
  EXPECT_FALSE(fs::exists(dir_ / "killed/.pagesim.lock"));
}

// pagesim links no CUDA library (they map about 200 MiB and take 0.1 s to load): its help
// stays within a small program's memory. The bound is the CPU-only build's size with room.
TEST_F(Cli, HelpLoadsNoCudaLibrary) {
#if defined(PAGESIM_SANITIZE_BUILD) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizer runtimes reserve their own memory";
#endif
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, STDOUT_FILENO);
    ::execl(PAGESIM_BINARY, PAGESIM_BINARY, "--help", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(::wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_LE(usage.ru_maxrss, 16 * 1024) << "pagesim --help peak RSS in KiB";  // Linux: ru_maxrss in KiB
}

// `validate --device cpu` runs inside pagesim: it needs no pagesim-cuda.
TEST_F(Cli, ValidateOnTheCpuNeedsNoCudaExecutable) {
  const std::string batches = sampled_batches();
  const Result r = run_binary(lone_pagesim(), "validate " + shell_quote(batches) + " --device cpu");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("device cpu, f32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("summary: 2 of 2 batches pass (0 fail)"), std::string::npos) << r.out;
}

// Without pagesim-cuda beside it, the CUDA commands fail with one line naming where it was
// looked for and how to get it; nothing is written.
TEST_F(Cli, CudaCommandsWithoutTheCudaExecutableNameItsPath) {
  const std::string batches = sampled_batches();
  const fs::path lone = lone_pagesim();
  const std::string expected_path = (lone.parent_path() / "pagesim-cuda").string();
  Result r = run_binary(lone, "validate " + shell_quote(batches) + " --device cuda");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("pagesim: error: validate --device cuda runs in pagesim-cuda, expected beside this pagesim at " +
                            expected_path + ", which does not exist: ",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("pagesim-cuda target"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("or use --device cpu"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;

  r = run_binary(lone, "profile --model opt-13b --out p.csv");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("pagesim: error: profile runs in pagesim-cuda, expected beside this pagesim at " +
                            expected_path + ", which does not exist: ",
                        0),
            0u)
      << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
  // Usage errors and help stay pagesim's own: they need no pagesim-cuda.
  EXPECT_EQ(run_binary(lone, "profile --model opt-13b --repeats many").status, 2);
  EXPECT_EQ(run_binary(lone, "profile --help").status, 0);
}

#ifdef PAGESIM_CUDA_BINARY
// The CUDA build: pagesim hands the CUDA commands to the pagesim-cuda beside it, which
// reaches the CUDA runtime — on a GPU it runs the kernels; elsewhere its own "no usable CUDA
// device" error (which pagesim, holding only the CPU validator, could not produce) comes back
// through pagesim with status 1, the same bytes as pagesim-cuda run directly.
TEST_F(Cli, CudaCommandsRunInTheCudaExecutable) {
  ASSERT_EQ(fs::path(PAGESIM_CUDA_BINARY).parent_path(), fs::path(PAGESIM_BINARY).parent_path());
  const std::string batches = sampled_batches();
  const std::string validate = "validate " + shell_quote(batches) + " --device cuda";
  const std::string profile =
      "profile --model llama-2-7b --out p.csv --warmup 0 --max-tokens 16 --prefill-tokens 16 "
      "--max-decode-seqs 2 --max-context 32 --max-swap-blocks 2";
  std::string why;
  const bool gpu = pagesim::kernels::cuda_device_available(&why);
  const Result v = pagesim(validate);
  const Result p = pagesim(profile);
  if (gpu) {
    EXPECT_EQ(v.status, 0) << v.err;
    EXPECT_NE(v.out.find("device cuda, f32"), std::string::npos) << v.out;
    EXPECT_NE(v.out.find("summary: 2 of 2 batches pass (0 fail)"), std::string::npos) << v.out;
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_NE(p.out.find("wrote p.csv"), std::string::npos) << p.out;
    // The recorded command is the one typed: pagesim, not the executable it handed over to.
    EXPECT_NE(read_file(dir_ / "p.csv").find("# command: " + std::string(PAGESIM_BINARY) + " " + profile),
              std::string::npos)
        << read_file(dir_ / "p.csv");
    return;
  }
  EXPECT_EQ(v.status, 1);
  EXPECT_EQ(v.out, "");
  EXPECT_EQ(v.err, "error: device cuda: no usable CUDA device (" + why + "); use --device cpu\n");
  EXPECT_EQ(p.status, 1);
  EXPECT_EQ(p.err,
            "error: pagesim profile: no usable CUDA device (" + why + "); run it on the GPU it describes\n");
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
  // The same bytes as pagesim-cuda run directly.
  const Result dv = run_binary(PAGESIM_CUDA_BINARY, validate);
  EXPECT_EQ(dv.status, v.status);
  EXPECT_EQ(dv.err, v.err);
  const Result dp = run_binary(PAGESIM_CUDA_BINARY, profile);
  EXPECT_EQ(dp.status, p.status);
  EXPECT_EQ(dp.err, p.err);
}
#else
// A build without CUDA has no pagesim-cuda: the CUDA commands say so.
TEST_F(Cli, CudaCommandsInABuildWithoutCudaSaySo) {
  const std::string batches = sampled_batches();
  const Result r = pagesim("validate " + shell_quote(batches) + " --device cuda");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("this pagesim was built without CUDA"), std::string::npos) << r.err;
  const Result p = pagesim("profile --model opt-13b --out p.csv");
  EXPECT_EQ(p.status, 1);
  EXPECT_NE(p.err.find("this pagesim was built without CUDA"), std::string::npos) << p.err;
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
}
#endif

}  // namespace
