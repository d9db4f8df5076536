// The bad-input suite of issue 12 (items 3, 4 and 5): settings that used to run and report
// numbers that mean nothing, or fail under the wrong key, or never end. Each case is the
// experiment file, the exit status of `pagesim run`, and the exact "file:line: key:" its
// message starts with (a warning's also in summary.json's "warnings"). Runs the built binary
// (PAGESIM_BINARY) in a fresh temporary folder; traces are written there too.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = PAGESIM_SOURCE_DIR;

using pagesim::sim::testing::read_file;
using pagesim::sim::testing::shell_quote;
using Result = pagesim::sim::testing::CommandResult;

// Lines 1-7 of every synthetic case; a case's own text starts at line 8.
std::string synthetic() {
  return "name: bad\n"                                        // 1
         "seed: 3\n"                                          // 2
         "workload:\n"                                        // 3
         "  arrival: {kind: poisson, rate: 10}\n"             // 4
         "  lengths: {kind: empirical, path: '" +             // 5
         (kSource / "traces/data/sharegpt_opt_lengths.csv").string() +
         "'}\n"
         "  max_total_tokens: 2048\n"                         // 6
         "  max_requests: 30\n";                              // 7
}

// Lines 1-4 of every trace case (trace.csv in the run's folder); a case's text starts at 5.
// The fixture's 3,000-token prompt exceeds opt-13b's 2,048-token context: tests of the other
// limits append this (last, so the lines they name stay put).
constexpr const char* kOff = "max_model_len: off\n";

std::string replay() {
  return "name: bad\n"                                        // 1
         "workload:\n"                                        // 2
         "  kind: trace\n"                                    // 3
         "  trace: {path: trace.csv, format: native}\n";      // 4
}

class BadInput : public pagesim::sim::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    // Prompts of 100, 3000 and 200 tokens, 10 output tokens each.
    write("trace.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,3000,10\n1,200,10\n");
  }
  // Writes `text` to case.yaml and runs it into a fresh folder, out_ afterwards; `shell`
  // (e.g. a ulimit) runs first in the same shell.
  Result run(const std::string& text, const std::string& shell = "") {
    write("case.yaml", text);
    out_ = dir_ / ("out" + std::to_string(++runs_));
    return pagesim::sim::testing::run_in(
        dir_, shell + shell_quote(PAGESIM_BINARY) + " run case.yaml --out " + shell_quote(out_.string()) + " -q");
  }

  // The run fails (status 1) with "case.yaml:<line>: <key>: " and every one of `says`.
  void expect_error(const std::string& text, int line, const std::string& key,
                    const std::vector<std::string>& says = {}) {
    const Result r = run(text);
    EXPECT_EQ(r.status, 1) << r.err;
    const std::string at = "pagesim: error: case.yaml" + (line > 0 ? ":" + std::to_string(line) : "") + ": " + key + ": ";
    EXPECT_EQ(r.err.rfind(at, 0), 0u) << "expected it to start with '" << at << "', got: " << r.err;
    for (const auto& s : says) EXPECT_NE(r.err.find(s), std::string::npos) << "'" << s << "' missing in: " << r.err;
    EXPECT_FALSE(fs::exists(out_ / "summary.json"));
  }

  // The run succeeds (status 0), warning "case.yaml:<line>: <key>: ..." on stderr and in
  // summary.json's "warnings", with every one of `says`.
  void expect_warning(const std::string& text, int line, const std::string& key,
                      const std::vector<std::string>& says = {}) {
    const Result r = run(text);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string at = "case.yaml:" + std::to_string(line) + ": " + key + ": ";
    EXPECT_EQ(r.err.rfind("pagesim: warning: " + at, 0), 0u) << r.err;
    const auto summary = nlohmann::json::parse(read_file(out_ / "summary.json"));
    ASSERT_TRUE(summary.contains("warnings")) << summary.dump(2);
    ASSERT_EQ(summary["warnings"].size(), 1u);
    const std::string w = summary["warnings"][0];
    EXPECT_EQ(w.rfind(at, 0), 0u) << w;
    for (const auto& s : says) EXPECT_NE(w.find(s), std::string::npos) << "'" << s << "' missing in: " << w;
  }

  nlohmann::json summary() const { return nlohmann::json::parse(read_file(out_ / "summary.json")); }

  fs::path out_;  // the last run's output folder
  int runs_ = 0;
};

// ---- Item 3: no silently wrong result. ----

TEST_F(BadInput, MeasurementWindowAfterTheRunWarns) {
  expect_warning(synthetic() + "measure: {window_start_s: 1000, window_end_s: 2000}\n", 8, "measure.window_start_s",
                 {"holds no iteration", "every window average"});
}

// A fleet whose iterations run past the clock's range (1e10 s) fails on the iteration the
// engine that plans every iteration meets first, with its start, whether decode runs skip ahead
// of the queue or not. They used to report a later iteration of another replica, met first
// because its run went on past the other replicas' events, at the time of the event that
// started the run instead of its own.
TEST_F(BadInput, AFleetPastTheClocksRangeFailsWhereEveryIterationPlannedWould) {
  write("limit.csv",
        "prompt_tokens,arrival_s,output_tokens\n758,9999999998.612089,149\n1454,9999999998.629559,277\n"
        "235,9999999998.695698,14\n869,9999999998.720589,130\n660,9999999998.806559,206\n"
        "1138,9999999998.820312,32\n412,9999999998.834301,78\n1101,9999999998.922581,287\n"
        "1414,9999999999.002760,108\n262,9999999999.035864,36\n");
  const std::string fleet = "name: limit\n"
                            "workload: {kind: trace, trace: {path: limit.csv, format: native}}\n"
                            "model: opt-13b\n"
                            "gpu: a100-40gb\n"
                            "kv: {slots: 15728}\n"
                            "replicas: {count: 3, router: least_outstanding}\n"
                            "output: {iterations_stride: 0, requests_csv: false}\n";  // rows would stop runs ahead
  const Result skipping = run(fleet);
  const Result planned = run(fleet + "engine: {skip_decode_runs: false}\n");
  EXPECT_EQ(planned.status, 1) << planned.err;
  EXPECT_NE(planned.err.find("an iteration of replica 0 starting at 9999999999.980474 s would end at 10000000000.003582 s"),
            std::string::npos)
      << planned.err;
  EXPECT_EQ(skipping.status, 1) << skipping.err;
  EXPECT_EQ(skipping.err, planned.err);
}

TEST_F(BadInput, SwapPreemptionWithoutSwapSpace) {
  expect_error(synthetic() + "scheduler: {preemption: swap}\nallocator: {cpu_swap_gib: 0}\n", 9,
               "allocator.cpu_swap_gib", {"preemption: recompute"});
}

TEST_F(BadInput, SwapPreemptionWithSwapSpaceBelowOneBlock) {
  // 1e-6 GiB (1 KiB) holds no 16-token block of opt-13b (12.5 MiB).
  expect_error(synthetic() + "scheduler: {preemption: swap}\nallocator: {cpu_swap_gib: 0.000001}\n", 9,
               "allocator.cpu_swap_gib", {"holds no block"});
}

TEST_F(BadInput, PrefixCacheWithAContiguousAllocator) {
  expect_error(synthetic() + "allocator: {kind: contiguous, prefix_cache: true}\n", 8, "allocator.prefix_cache",
               {"allocator.kind: paged"});
}

TEST_F(BadInput, PrefixCacheWithoutTokenIdentities) {
  expect_error(synthetic() + "allocator: {prefix_cache: true}\n", 8, "allocator.prefix_cache", {"hash_ids"});
}

TEST_F(BadInput, PrefixCacheOnATraceWithoutTokenIdentitiesWarns) {
  expect_warning(replay() + "allocator: {prefix_cache: true}\nscheduler: {max_num_batched_tokens: 8192}\n" + kOff, 5,
                 "allocator.prefix_cache", {"hash_ids", "never had a prompt to match"});
}

TEST_F(BadInput, NanSettingsAreErrorsNotDefaults) {
  expect_error(synthetic() + "scheduler: {watermark: .nan}\n", 8, "scheduler.watermark", {"found nan"});
  expect_error(synthetic() + "cost: {compute_efficiency: .nan}\n", 8, "cost.compute_efficiency", {"found nan"});
  expect_error(synthetic() + "cost: {memory_efficiency: .nan}\n", 8, "cost.memory_efficiency", {"found nan"});
  expect_error(synthetic() + "cost: {iteration_overhead_s: .nan}\n", 8, "cost.iteration_overhead_s", {"found nan"});
}

TEST_F(BadInput, NAndBeamWidthBothSet) {
  expect_error(synthetic() + "  sampling: [{n: 2, beam_width: 2}]\n", 8, "workload.sampling[0].beam_width",
               {"n = 2 and beam_width = 2"});
}

TEST_F(BadInput, ZeroRequestsNamesTheKeyThatLeftNone) {
  expect_error(synthetic() + "  duration_s: 0.00001\n", 8, "workload.duration_s",
               {"first request arrives at", "not before duration_s = 1e-05 s"});
  write("empty.csv", "arrival_s,prompt_tokens,output_tokens\n");
  expect_error("name: bad\nworkload:\n  kind: trace\n  trace: {path: empty.csv, format: native}\n", 4,
               "workload.trace.path", {"/empty.csv' holds no request"});
  expect_error(replay() + "  max_total_tokens: 50\n", 5, "workload.max_total_tokens",
               {"below max_total_tokens = 50"});
  expect_error(replay() + "  oversize: drop\nmax_model_len: 20\n", 5, "workload.oversize",
               {"dropped all 3 requests"});
  // The trace's first arrival is 0 s: a later-starting window of arrivals holds none.
  write("late.csv", "arrival_s,prompt_tokens,output_tokens\n5,100,10\n");
  expect_error("name: bad\nworkload:\n  kind: trace\n  trace: {path: late.csv, format: native}\n"
               "  duration_s: 2\n",
               5, "workload.duration_s", {"arrives at 5 s"});
}

TEST_F(BadInput, FixedZeroReservation) {
  expect_error(synthetic() + "allocator: {kind: contiguous, reservation: 'fixed:0'}\n", 8, "allocator.reservation",
               {"fixed:N, N >= 1"});
}

TEST_F(BadInput, PromptLongerThanTheModelsContext) {
  // llama-2-13b serves 4,096 tokens: the 3,000-token prompt fits, a 5,000-token one does not.
  write("trace.csv", "arrival_s,prompt_tokens,output_tokens\n0,3000,10\n1,5000,10\n");
  expect_error(replay() + "model: llama-2-13b\nmax_model_len: model\nscheduler: {max_num_batched_tokens: 8192}\n", 6,
               "max_model_len", {"prompt 5000 + output 10", "4096", "workload.oversize"});
  // An explicit limit is a number of tokens.
  expect_error(replay() + "max_model_len: 1000\nscheduler: {max_num_batched_tokens: 8192}\n", 5, "max_model_len",
               {"exceed max_model_len = 1000"});
  expect_error(replay() + "max_model_len: many\n", 5, "max_model_len", {"expected off, model"});
}

TEST_F(BadInput, TheModelsContextIsTheDefaultLimit) {
  // Without the key, llama-2-13b still refuses a 32k-token prompt (the model serves 4,096),
  // and the message says how to opt out.
  write("trace.csv", "arrival_s,prompt_tokens,output_tokens\n0,3000,10\n1,32000,10\n");
  expect_error(replay() + "model: llama-2-13b\nscheduler: {max_num_batched_tokens: 40000}\nkv: {slots: 65536}\n", 0,
               "max_model_len", {"prompt 32000 + output 10", "max_model_len: model", "max_model_len: off"});
  // off replays it as if a longer-context model served it.
  const Result r = run(replay() + "model: llama-2-13b\nmax_model_len: off\n"
                       "scheduler: {max_num_batched_tokens: 40000}\nkv: {slots: 65536}\n");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(out_ / "config.resolved.yaml").find("max_model_len: off"), std::string::npos);
}

TEST_F(BadInput, KvSlotsBeyondTheGpuWarnsWithTheImpliedGib) {
  // opt-13b: 800 KiB of KV per token; 100,000 slots are 76.3 GiB, an a100-40gb has 39.6.
  expect_warning(synthetic() + "kv: {slots: 100000}\n", 8, "kv.slots", {"76.3 GiB", "39.6 GiB"});
}

TEST_F(BadInput, ACleanRunHasNoNotes) {
  const Result r = run(synthetic());
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto s = summary();
  EXPECT_FALSE(s.contains("warnings"));
  EXPECT_FALSE(s.contains("requests_dropped_oversize"));
  EXPECT_FALSE(s.contains("requests_truncated_oversize"));
  const std::string resolved = read_file(out_ / "config.resolved.yaml");
  EXPECT_EQ(resolved.find("oversize"), std::string::npos) << resolved;  // new keys at their default
  EXPECT_EQ(resolved.find("max_model_len"), std::string::npos) << resolved;
}

// ---- Item 4: errors that name the right key. ----

TEST_F(BadInput, SettingsReportedUnderTheirOwnKey) {
  expect_error(synthetic() + "allocator: {block_size: 0}\n", 8, "allocator.block_size", {"found 0"});
  expect_error(synthetic() + "tensor_parallel: 3\n", 8, "tensor_parallel", {"does not divide heads 40"});
  expect_error(synthetic() + "cost: {compute_efficiency: 0}\n", 8, "cost.compute_efficiency", {"found 0"});
  expect_error(synthetic() + "cost: {iteration_overhead_s: .inf}\n", 8, "cost.iteration_overhead_s", {"found inf"});
}

TEST_F(BadInput, GibSettingsOutOfRange) {
  for (const std::string v : {".nan", ".inf", "1e30"}) {
    expect_error(synthetic() + "allocator: {cpu_swap_gib: " + v + "}\n", 8, "allocator.cpu_swap_gib", {"1 PiB"});
    expect_error(synthetic() + "kv: {activation_reserve_gib: " + v + "}\n", 8, "kv.activation_reserve_gib",
                 {"1 PiB"});
  }
}

TEST_F(BadInput, HugeKvSlotsIsAnErrorNotBadAlloc) {
  expect_error(synthetic() + "kv: {slots: 1000000000000}\n", 8, "kv.slots", {"block ids", "GiB"});
}

TEST_F(BadInput, KvSlotsBeyondHostMemoryNamesKvSlots) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#endif
#endif
  // 1.9e9 blocks fit 32-bit ids, but not 4 GB of address space.
  const Result r = run(synthetic() + "kv: {slots: 30000000000}\n", "ulimit -v 4000000 && ");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("pagesim: error: case.yaml:8: kv.slots: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("not enough host memory"), std::string::npos) << r.err;
}

// Issue 24 item 9: a rate far beyond the GPU queued a billion requests (gigabytes, then
// std::bad_alloc); refused up front at the rate's line, naming the duration and the limit.
TEST_F(BadInput, RateFarBeyondWhatCanBeQueuedIsRefused) {
  expect_error("name: bad\n"
               "workload:\n"
               "  arrival: {kind: poisson, rate: 1e9}\n"
               "  lengths: {kind: empirical, path: '" +
                   (kSource / "traces/data/sharegpt_opt_lengths.csv").string() +
                   "'}\n"
                   "  duration_s: 1\n",
               3, "workload.arrival.rate", {"workload.duration_s", "at most 10000000 requests", "1e+09 requests"});
}

// Issue 24 item 10: no input ends in a bare std::bad_alloc. A block id near 2^31 sizes the
// validator's cache to terabytes; under a 4 GB address-space limit the message is one line
// naming the command and its input.
TEST_F(BadInput, OutOfMemoryNamesTheCommandAndItsInput) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  GTEST_SKIP() << "AddressSanitizer reserves more address space than the limit";
#endif
#endif
  write("b.jsonl",
        R"({"format": "pagesim-batches", "version": 1, "block_size": 16, "num_blocks": 2147483647})" "\n"
        R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 0, "kv_len": 4,)"
        R"( "query_len": 1, "block_table": [2147483000], "tokens": [{"start": 0, "length": 4, "origin": "p1",)"
        R"( "offset": 0}]}]})" "\n");
  const Result r =
      pagesim::sim::testing::run_in(dir_, "ulimit -v 4000000 && " + shell_quote(PAGESIM_BINARY) + " validate b.jsonl");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.err, "pagesim: error: pagesim validate b.jsonl: out of memory (std::bad_alloc): the input needs more "
                   "memory than this process may use\n");
}

TEST_F(BadInput, KeysInSweepCasesAndAxesHaveLines) {
  expect_error(synthetic() +
                   "sweep:\n"                                          // 8
                   "  cases:\n"                                        // 9
                   "    - {label: a}\n"                                // 10
                   "    - {label: b, allocator.block_size: 0}\n",      // 11
               11, "allocator.block_size");
  expect_error(synthetic() +
                   "sweep:\n"                                          // 8
                   "  cost.compute_efficiency:\n"                      // 9
                   "    - 0.5\n"                                       // 10
                   "    - 0\n",                                        // 11
               11, "cost.compute_efficiency");
}

TEST_F(BadInput, ContiguousBlockSizeBelow16HitsTheChunkLimit) {
  // 1,510 tokens need 189 blocks of 8; a buddy chunk of 128 blocks holds 1,024 slots.
  write("trace.csv", "arrival_s,prompt_tokens,output_tokens\n0,1500,10\n");
  expect_error(replay() + "allocator: {kind: contiguous, block_size: 8, max_chunk_blocks: 128}\nscheduler: {kind: orca}\n",
               5, "allocator.max_chunk_blocks", {"128 × 8 = 1024", "below 16", "workload.oversize"});
  // By default the chunk grows with max_seq_len (2048 / 8 = 256 blocks): it runs.
  const Result r = run(replay() + "allocator: {kind: contiguous, block_size: 8}\nscheduler: {kind: orca}\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(out_ / "config.resolved.yaml").find("max_chunk_blocks: 256"), std::string::npos);
}

TEST_F(BadInput, ContiguousMaxSeqLenFollowsTheModel) {
  // opt-13b: 2,048 tokens; the 3,000-token prompt can never be admitted.
  expect_error(replay() + "allocator: {kind: contiguous}\nscheduler: {kind: orca, max_num_batched_tokens: 8192}\n" + kOff, 5,
               "allocator.max_seq_len", {"max_seq_len = 2048", "workload.oversize"});
  // llama-2-13b: 4,096 tokens; it runs, and config.resolved.yaml says what the allocator used.
  const Result r =
      run(replay() +
          "model: llama-2-13b\nallocator: {kind: contiguous}\nscheduler: {kind: orca, max_num_batched_tokens: 8192}\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(out_ / "config.resolved.yaml").find("max_seq_len: 4096"), std::string::npos);
  // A value the file gives is kept.
  expect_error(replay() +
                   "model: llama-2-13b\nallocator: {kind: contiguous, max_seq_len: 2048}\n"
                   "scheduler: {kind: orca, max_num_batched_tokens: 8192}\n",
               6, "allocator.max_seq_len");
}

TEST_F(BadInput, TokenBudgetNamesItsKeyAndTheFile) {
  // The 3,000-token prompt exceeds the default 2,560-token budget; no scheduler section: no line.
  expect_error(replay() + kOff, 0, "scheduler.max_num_batched_tokens", {"request 1", "sarathi", "workload.oversize"});
}

TEST_F(BadInput, DevZeroAsATraceEnds) {
  // A trace error names the trace file and its line (the 1 MiB line bound), format given or detected.
  for (const std::string format : {", format: native", ""}) {
    const Result r = run("name: bad\nworkload:\n  kind: trace\n  trace: {path: /dev/zero" + format + "}\n");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("pagesim: error: /dev/zero:1: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("at most 1048576 bytes"), std::string::npos) << r.err;
  }
}

// ---- Item 5: requests that can never fit, dropped or truncated on request. ----

TEST_F(BadInput, OversizeDropSkipsAndCounts) {
  const Result r = run(replay() + "  oversize: drop\n");
  ASSERT_EQ(r.status, 0) << r.err;
  const auto s = summary();
  EXPECT_EQ(s["requests_dropped_oversize"], 1);
  EXPECT_FALSE(s.contains("requests_truncated_oversize"));
  EXPECT_EQ(s["requests_finished"], 2);
  EXPECT_NE(read_file(out_ / "config.resolved.yaml").find("oversize: drop"), std::string::npos);
}

TEST_F(BadInput, OversizeTruncateCutsThePromptToFit) {
  const Result r = run(replay() + "  oversize: truncate\n" + kOff);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto s = summary();
  EXPECT_EQ(s["requests_truncated_oversize"], 1);
  EXPECT_FALSE(s.contains("requests_dropped_oversize"));
  EXPECT_EQ(s["requests_finished"], 3);
  // prompt + output - 1 <= 2560 (a recompute re-prefills all but the last token): 2551.
  EXPECT_NE(read_file(out_ / "requests.csv").find(",2551,"), std::string::npos) << read_file(out_ / "requests.csv");
}

TEST_F(BadInput, OversizeTruncateDropsWhatNeverFits) {
  // max_model_len 5 leaves no room for a 10-token output, whatever the prompt.
  // Every request dropped: nothing to simulate.
  expect_error(replay() + "  oversize: truncate\nmax_model_len: 5\n", 5, "workload.oversize",
               {"dropped all 3 requests"});
}

}  // namespace
