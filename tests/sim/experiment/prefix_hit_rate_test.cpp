// The prefix-cache hit rate end to end (issue 13, bugs 1-3), through run_experiment_file():
// chunked prefill looks up and caches whole prompts (sarathi, and sglang over its radix
// tree, agree with vllm on the Mooncake conversation trace), re-admissions after recompute
// preemptions do not count as hits (sglang's retractions included), and the per-iteration
// and window counts add up to the run's.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/experiment/experiment.h"
#include "sim_harness.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::parse_csv;
using testing::read_file;
using testing::Row;

const fs::path kSource = PAGESIM_SOURCE_DIR;
const std::string kMooncake = (kSource / "traces/data/mooncake_conversation_trace.jsonl").string();

class PrefixHitRateTest : public testing::TempDirTest {};

// The pool and policy lines of `scheduler`: the paged pool with its prefix cache and 512-
// token chunks, or for sglang its radix tree (always caching) in pages of 16 tokens.
std::string pool_and_policy(const std::string& scheduler, const std::string& scheduler_keys) {
  if (scheduler == "sglang")
    return "allocator: {kind: radix, block_size: 16}\n"
           "scheduler: {kind: sglang" + scheduler_keys + "}\n";
  return "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
         "scheduler: {kind: " + scheduler + scheduler_keys + ", chunk_tokens: 512}\n";
}

// The bundled conversation trace (hash ids per 512 tokens), Llama-2-7B standing in for a
// long-context model, block 16, prefix cache on.
std::string conversation(const std::string& scheduler, std::int64_t slots, const std::string& extra = "") {
  return "name: conversation\n"
         "seed: 1\n"
         "workload:\n"
         "  kind: trace\n"
         "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
         "  max_total_tokens: 16384\n" + extra +
         "model: llama-2-7b\n"
         "gpu: a100-80gb\n"
         "max_model_len: off\n"
         "kv: {slots: " + std::to_string(slots) + "}\n" +
         pool_and_policy(scheduler, ", max_num_batched_tokens: 16384") +
         "cost: {kind: roofline}\n";
}

std::int64_t column_sum(const std::vector<Row>& rows, const char* column) {
  std::int64_t s = 0;
  for (const Row& r : rows) s += std::stoll(r.at(column));
  return s;
}

// Bug 1 and the acceptance of issue 13. With a pool that holds every block of the trace (no
// eviction), the hit rate is a property of the trace, not of the scheduler: sarathi (chunked
// prefill) and vllm-v1 (chunked prefill, whole-block hits that leave the last token to
// compute) must agree with vllm (whole prompts). A block is reusable only once computed, so they may differ by what
// was still in flight when a request arrived; on this trace, whose turns arrive after the
// previous turn has finished, they agree within 0.5 pp. Before the fix sarathi looked up and
// cached only each prompt's first chunk and reported 95.6% against vllm's 37.3%. vllm-v1
// reports 105 hit tokens fewer than vllm (37.30477% against 37.30497%), not a matter of
// timing: 7 prompts hit in full at a block boundary, and v1 recomputes their whole last
// block (15 tokens more each) where vllm recomputes the last token only.
TEST_F(PrefixHitRateTest, SarathiVllmV1AndVllmAgreeOnTheConversationTraceWithAnUnboundedPool) {
  const std::int64_t slots = 40'000'000;  // 2.5M blocks of 16: more than the trace's distinct blocks
  const auto vllm = run_experiment_file(write("vllm.yaml", conversation("vllm", slots)), {}, dir_ / "vllm");
  const auto sarathi = run_experiment_file(write("sarathi.yaml", conversation("sarathi", slots)), {}, dir_ / "sarathi");
  const auto v1 = run_experiment_file(write("v1.yaml", conversation("vllm-v1", slots)), {}, dir_ / "v1");
  ASSERT_EQ(vllm.size(), 1u);
  ASSERT_EQ(sarathi.size(), 1u);
  ASSERT_EQ(v1.size(), 1u);
  for (const auto* r : {&vllm[0], &sarathi[0], &v1[0]}) {
    ASSERT_TRUE(r->summary.prefix_cache.has_value());
    EXPECT_EQ(r->summary.prefix_cache->evicted_blocks, 0);  // unbounded indeed
    EXPECT_EQ(r->summary.preemptions, 0);
  }
  const double v = vllm[0].summary.prefix_hit_rate, s = sarathi[0].summary.prefix_hit_rate;
  EXPECT_GT(v, 0.30);
  EXPECT_LT(v, 0.45);
  EXPECT_NEAR(s, v, 0.005) << "sarathi " << s << " vs vllm " << v;
  EXPECT_EQ(sarathi[0].summary.prefix_cache->prompt_tokens, vllm[0].summary.prefix_cache->prompt_tokens);
  const double w = v1[0].summary.prefix_hit_rate;
  EXPECT_NEAR(w, v, 0.005) << "vllm-v1 " << w << " vs vllm " << v;
  EXPECT_NEAR(w, s, 0.005) << "vllm-v1 " << w << " vs sarathi " << s;
  EXPECT_EQ(v1[0].summary.prefix_cache->prompt_tokens, vllm[0].summary.prefix_cache->prompt_tokens);

  // The rate is what requests were served: Σ cached_tokens / Σ prompt_tokens of requests.csv.
  const std::vector<Row> rows = parse_csv(read_file(dir_ / "sarathi/requests.csv"));
  const std::int64_t cached = column_sum(rows, "cached_tokens"), prompts = column_sum(rows, "prompt_tokens");
  EXPECT_EQ(cached, sarathi[0].summary.prefix_cache->hit_tokens);
  EXPECT_EQ(prompts, sarathi[0].summary.prefix_cache->prompt_tokens);
  EXPECT_NEAR(s, static_cast<double>(cached) / static_cast<double>(prompts), 1e-12);
}

// The same for sglang over its radix tree in pages of 16 tokens (SGLang's page size 1 would
// key pages by hash block and offset: the same prefixes at a finer grain). It agrees with
// vllm within 0.5 pp but not exactly; per request (requests.csv), it caches 1,129 tokens
// fewer, for two reasons. (1) Requests 0, 1 and 2 arrive at 0 s sharing their first 512
// tokens; vllm admits 1 in request 0's iteration and lets it hit the blocks request 0 is
// about to compute, while sglang's prefill batch (0, 1 and a chunk of 2) hits only pages
// inserted before it (SGLang inserts after the forward pass): 2 x 512 tokens. (2) 7
// prompts found whole have a multiple of 16 tokens: the radix pool caches all but their
// last page (SGLang matches whole pages of all but the last token), the paged pool all but
// their last token: 7 x 15 tokens. Measured: 37.3028% against vllm's 37.3050%.
TEST_F(PrefixHitRateTest, SglangAgreesWithVllmOnTheConversationTraceWithAnUnboundedPool) {
  const std::int64_t slots = 40'000'000;
  const auto vllm = run_experiment_file(write("vllm.yaml", conversation("vllm", slots)), {}, dir_ / "vllm");
  const auto sglang = run_experiment_file(write("sglang.yaml", conversation("sglang", slots)), {}, dir_ / "sglang");
  ASSERT_EQ(vllm.size(), 1u);
  ASSERT_EQ(sglang.size(), 1u);
  const Summary& g = sglang[0].summary;
  ASSERT_TRUE(g.prefix_cache.has_value());
  EXPECT_EQ(g.prefix_cache->evicted_blocks, 0);
  EXPECT_EQ(g.preemptions, 0);
  const double v = vllm[0].summary.prefix_hit_rate;
  EXPECT_NEAR(g.prefix_hit_rate, v, 0.005) << "sglang " << g.prefix_hit_rate << " vs vllm " << v;
  EXPECT_LE(g.prefix_cache->hit_tokens, vllm[0].summary.prefix_cache->hit_tokens);  // 1,129 fewer (above)
  EXPECT_EQ(g.prefix_cache->prompt_tokens, vllm[0].summary.prefix_cache->prompt_tokens);
  const std::vector<Row> rows = parse_csv(read_file(dir_ / "sglang/requests.csv"));
  EXPECT_EQ(column_sum(rows, "cached_tokens"), g.prefix_cache->hit_tokens);
  EXPECT_EQ(column_sum(rows, "prompt_tokens"), g.prefix_cache->prompt_tokens);
}

// A native trace in which no two requests share a prefix: every request's hash ids are its
// own. 160 requests arrive within 1.6 s into a 4096-slot pool, so requests are preempted
// (recompute) and come back to find their own blocks still cached. sglang admits only what
// fits beside the running requests' expected output (new_token_ratio), so it retracts 8
// times there; a 2048-slot pool gives it as heavy a preemption as the others (21).
std::string unique_prefix_trace() {
  std::string csv = "arrival_s,prompt_tokens,output_tokens,hash_ids\n";
  for (int i = 0; i < 160; ++i) {
    const int prompt = 200 + (i * 37) % 400, output = 150 + (i * 53) % 250;
    csv += std::to_string(i * 0.01) + "," + std::to_string(prompt) + "," + std::to_string(output) + ",";
    for (int b = 0; b < (prompt + 15) / 16; ++b) csv += (b ? " " : "") + std::to_string(i * 1000 + b);
    csv += "\n";
  }
  return csv;
}

std::string unique_prefix_experiment(const std::string& trace, const std::string& scheduler) {
  return "name: unique\n"
         "seed: 1\n"
         "workload:\n"
         "  kind: trace\n"
         "  trace: {path: '" + trace + "', format: native, hash_block_tokens: 16}\n"
         "model: opt-13b\n"
         "gpu: a100-40gb\n"
         "kv: {slots: " + std::string(scheduler == "sglang" ? "2048" : "4096") + "}\n" +
         pool_and_policy(scheduler, "") +
         "cost: {kind: roofline}\n";
}

// Bug 2. Under heavy preemption, re-admitted requests hit their own blocks; those hits are
// counted apart (readmission_hit_tokens), so the hit rate of a trace without shared prefixes
// is 0. Before the fix they counted as hits (the issue measured 22%). sglang's retracted
// requests come back the same way and find their prompt pages still in the radix tree.
TEST_F(PrefixHitRateTest, NoSharedPrefixesHitNothingUnderHeavyPreemption) {
  const std::string trace = write("unique.csv", unique_prefix_trace());
  for (const std::string scheduler : {"vllm", "sarathi", "sglang"}) {
    SCOPED_TRACE(scheduler);
    const fs::path out = dir_ / scheduler;
    const auto res = run_experiment_file(write(scheduler + ".yaml", unique_prefix_experiment(trace, scheduler)), {}, out);
    ASSERT_EQ(res.size(), 1u);
    const Summary& s = res[0].summary;
    ASSERT_TRUE(s.prefix_cache.has_value());
    // sglang reserves max_new_tokens + a page per admitted request: it retracts less.
    EXPECT_GE(s.recompute_preemptions, scheduler == "sglang" ? 5 : 20);
    EXPECT_GT(s.prefix_cache->readmission_hit_tokens, 0);  // the self-hits happened...
    EXPECT_EQ(s.prefix_cache->hit_tokens, 0);              // ...and are not hits
    EXPECT_EQ(s.prefix_cache->hit_blocks, 0);
    EXPECT_EQ(s.prefix_hit_rate, 0.0);
    const nlohmann::json j = nlohmann::json::parse(read_file(out / "summary.json"));
    EXPECT_EQ(j.at("prefix_hit_rate").get<double>(), 0.0);
    EXPECT_EQ(j.at("prefix_cache").at("readmission_hit_tokens").get<std::int64_t>(),
              s.prefix_cache->readmission_hit_tokens);
    // Per request: cached_tokens is the first admission's (0 here), never more than the
    // prompt; re-admission hits are their own column and add up to the summary's.
    const std::vector<Row> rows = parse_csv(read_file(out / "requests.csv"));
    ASSERT_EQ(rows.size(), 160u);
    for (const Row& r : rows) EXPECT_EQ(r.at("cached_tokens"), "0") << "request " << r.at("id");
    EXPECT_EQ(column_sum(rows, "readmission_cached_tokens"), s.prefix_cache->readmission_hit_tokens);
    EXPECT_EQ(column_sum(rows, "prompt_tokens"), s.prefix_cache->prompt_tokens);
  }
}

// Bug 3. iterations.csv's per-iteration counts add up to the run's totals, and those of
// iterations starting inside the measurement window to the window's; the window rate is
// their ratio. Evictions, hit and miss blocks are in summary.json.
TEST_F(PrefixHitRateTest, IterationCountsAddUpToTheRunAndTheWindow) {
  const double start = 200, end = 600;
  const std::string extra = "  max_requests: 400\n";
  const std::string file = write("c.yaml", conversation("sarathi", 65536, extra) +
                                               "measure: {window_start_s: 200, window_end_s: 600}\n"
                                               "output: {iterations_stride: 1}\n");
  const auto res = run_experiment_file(file, {}, dir_ / "c");
  ASSERT_EQ(res.size(), 1u);
  ASSERT_TRUE(res[0].summary.prefix_cache.has_value());
  const PrefixCacheSummary& p = *res[0].summary.prefix_cache;
  const std::vector<Row> rows = parse_csv(read_file(dir_ / "c/iterations.csv"));
  std::vector<Row> window;
  for (const Row& r : rows) {
    const double t = std::stod(r.at("start_s"));
    if (t >= start && t < end) window.push_back(r);
  }
  ASSERT_FALSE(window.empty());
  EXPECT_EQ(column_sum(rows, "prefix_prompt_tokens"), p.prompt_tokens);
  EXPECT_EQ(column_sum(rows, "prefix_hit_tokens"), p.hit_tokens);
  EXPECT_EQ(column_sum(rows, "readmission_hit_tokens"), p.readmission_hit_tokens);
  EXPECT_EQ(column_sum(rows, "evicted_blocks"), p.evicted_blocks);
  EXPECT_EQ(column_sum(window, "prefix_prompt_tokens"), p.window_prompt_tokens);
  EXPECT_EQ(column_sum(window, "prefix_hit_tokens"), p.window_hit_tokens);
  EXPECT_GT(p.window_prompt_tokens, 0);
  EXPECT_LT(p.window_prompt_tokens, p.prompt_tokens);
  EXPECT_DOUBLE_EQ(p.window_hit_rate,
                   static_cast<double>(p.window_hit_tokens) / static_cast<double>(p.window_prompt_tokens));
  EXPECT_DOUBLE_EQ(p.hit_rate, res[0].summary.prefix_hit_rate);
  EXPECT_GT(p.evicted_blocks, 0);  // 4096 blocks hold less than the trace
  EXPECT_GT(p.hit_blocks, 0);
  EXPECT_GT(p.miss_blocks, 0);
  const nlohmann::json j = nlohmann::json::parse(read_file(dir_ / "c/summary.json")).at("prefix_cache");
  for (const char* key : {"prompt_tokens", "hit_tokens", "hit_rate", "window_prompt_tokens", "window_hit_tokens",
                          "window_hit_rate", "readmission_hit_tokens", "hit_blocks", "miss_blocks", "evicted_blocks"})
    EXPECT_TRUE(j.contains(key)) << key;
}

// Runs without the prefix cache write none of its outputs: their files keep their bytes.
TEST_F(PrefixHitRateTest, RunsWithoutThePrefixCacheHaveNoPrefixColumns) {
  const std::string file = write("off.yaml", conversation("vllm", 65536, "  max_requests: 50\n") +
                                                 "output: {iterations_stride: 1}\n");
  const auto res = run_experiment_file(file, {"allocator.prefix_cache=false"}, dir_ / "off");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_FALSE(res[0].summary.prefix_cache.has_value());
  EXPECT_FALSE(nlohmann::json::parse(read_file(dir_ / "off/summary.json")).contains("prefix_cache"));
  const std::string it = read_file(dir_ / "off/iterations.csv");
  EXPECT_EQ(it.substr(0, it.find('\n')).find("prefix"), std::string::npos);
  const std::string rq = read_file(dir_ / "off/requests.csv");
  EXPECT_EQ(rq.substr(0, rq.find('\n')).find("readmission"), std::string::npos);
}

// A sweep that turns the prefix cache off and on: sweep.csv has the prefix_cache columns,
// empty for the point without the cache.
TEST_F(PrefixHitRateTest, SweepCsvKeepsItsColumnsWhenOnlySomePointsCachePrefixes) {
  const std::string file = write("sweep.yaml", conversation("vllm", 65536, "  max_requests: 50\n") +
                                                   "sweep:\n  allocator.prefix_cache: [false, true]\n");
  const auto res = run_experiment_file(file, {}, dir_ / "sweep");
  ASSERT_EQ(res.size(), 2u);
  const std::vector<Row> rows = parse_csv(read_file(dir_ / "sweep/sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_EQ(rows[0].count("prefix_cache.hit_rate"), 1u);
  EXPECT_EQ(rows[0].at("prefix_cache.hit_rate"), "");
  EXPECT_EQ(std::stod(rows[1].at("prefix_cache.hit_rate")), res[1].summary.prefix_hit_rate);
  EXPECT_EQ(std::stod(rows[1].at("prefix_hit_rate")), res[1].summary.prefix_hit_rate);
  EXPECT_GT(res[1].summary.prefix_hit_rate, 0.0);
}

}  // namespace
}  // namespace pagesim::sim
