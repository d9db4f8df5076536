// Every prefix-cache eviction policy end to end through run_experiment_file(): each runs the
// Mooncake trace in a bounded pool, and on a workload built for it lru_protect_waiting keeps
// the prefix a waiting request will hit where lru, fifo and lfu evict it.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "allocator/pool/eviction_policy.h"
#include "sim/experiment/experiment.h"
#include "sim_harness.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::parse_csv;
using testing::read_file;
using testing::Row;

const std::string kMooncake = (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/mooncake_conversation_trace.jsonl").string();

class EvictionPoliciesTest : public testing::TempDirTest {};

// The Mooncake trace in a pool of 24,576 slots (prompts up to 16,384 tokens are cut off by
// max_total_tokens 8,192): every policy finishes every request and serves some prompt
// tokens from the cache, and the pool is small enough for the policy to matter: fifo evicts
// other blocks than lru (more of them), and lfu's first-admission hit rate is not lru's.
TEST_F(EvictionPoliciesTest, EveryPolicyRunsTheMooncakeTrace) {
  const std::string file = write("mooncake.yaml",
                                 "name: mooncake\n"
                                 "seed: 1\n"
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
                                 "  max_total_tokens: 8192\n"
                                 "  max_requests: 200\n"
                                 "model: llama-2-7b\nmax_model_len: off\n"
                                 "gpu: a100-80gb\n"
                                 "kv: {slots: 24576}\n"
                                 "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
                                 "scheduler: {kind: vllm, max_num_batched_tokens: 8192}\n"
                                 "cost: {kind: roofline}\n");
  std::map<std::string, double> rate;
  std::map<std::string, std::int64_t> evicted;
  for (const auto& [kind, name] : alloc::kEvictionKindNames) {
    SCOPED_TRACE(std::string(name));
    const fs::path out = dir_ / std::string(name);
    const auto r = run_experiment_file(file, {"allocator.eviction=" + std::string(name)}, out);
    ASSERT_EQ(r.size(), 1u);
    rate[std::string(name)] = r[0].summary.prefix_hit_rate;
    ASSERT_TRUE(r[0].summary.prefix_cache.has_value());
    evicted[std::string(name)] = r[0].summary.prefix_cache->evicted_blocks;
    EXPECT_EQ(r[0].summary.requests_finished, 200);
    EXPECT_GT(r[0].summary.prefix_hit_rate, 0.0);
    EXPECT_LT(r[0].summary.prefix_hit_rate, 1.0);
    EXPECT_NE(read_file(out / "config.resolved.yaml").find("eviction: " + std::string(name)), std::string::npos);
  }
  EXPECT_GT(evicted.at("fifo"), evicted.at("lru"));
  EXPECT_NE(rate.at("lfu"), rate.at("lru"));
}

// Eight requests of 64 prompt tokens (4 blocks of 16) and 4 output tokens, one running at
// a time (max_num_seqs 1), 0.1 s per iteration, in a pool of 20 blocks. A (hash ids 1-4)
// arrives at 0, six unique prompts U1..U6 at 1-6 ms, and A' with A's prompt at 10 ms, so
// A' waits in the queue from 10 ms until it runs last, at 2.8 s.
// A request takes 4 blocks at admission and a fifth for its first output token; when it
// finishes, its 4 prompt blocks stay cached (evictable) and the fifth is freed. After A
// and U1-U3, 4 blocks are free and 16 cached; U4 takes the 4 free ones and its fifth block
// is the first eviction, U5's admission the next three. lru (A was released first), fifo
// (A was cached first) and lfu (no block was ever hit; the tie goes to A, released first)
// all evict A's 4 blocks there, and A' hits nothing. lru_protect_waiting protects them (A'
// is waiting) and evicts U1's instead: A' finds its whole prompt cached and computes only
// its last token (63 cached tokens), the run's only hit: a hit rate of 63 / (8 x 64).
TEST_F(EvictionPoliciesTest, ProtectWaitingKeepsWhatTheQueueWillHit) {
  std::string trace = "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,64,4,1 2 3 4\n";
  for (int i = 1; i <= 6; ++i) {
    trace += "0.00" + std::to_string(i) + ",64,4,";
    for (int k = 1; k <= 4; ++k) trace += std::to_string(100 * i + k) + (k < 4 ? " " : "\n");
  }
  trace += "0.010,64,4,1 2 3 4\n";
  const std::string trace_path = write("trace.csv", trace);
  const std::string file = write("protect.yaml",
                                 "name: protect\n"
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + trace_path + "', format: native, hash_block_tokens: 16}\n"
                                 "kv: {slots: 320}\n"
                                 "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
                                 "scheduler: {kind: vllm, max_num_seqs: 1}\n"
                                 "cost: {kind: constant, constant: {seconds_per_iteration: 0.1}}\n");
  std::map<std::string, double> rate;
  std::map<std::string, std::int64_t> evicted;
  for (const auto& [kind, name] : alloc::kEvictionKindNames) {
    SCOPED_TRACE(std::string(name));
    const fs::path out = dir_ / std::string(name);
    const auto r = run_experiment_file(file, {"allocator.eviction=" + std::string(name)}, out);
    ASSERT_EQ(r.size(), 1u);
    ASSERT_EQ(r[0].summary.requests_finished, 8);
    rate[std::string(name)] = r[0].summary.prefix_hit_rate;
    ASSERT_TRUE(r[0].summary.prefix_cache.has_value());
    evicted[std::string(name)] = r[0].summary.prefix_cache->evicted_blocks;
    const bool protects = kind == alloc::EvictionKind::kLruProtectWaiting;
    for (const Row& row : parse_csv(read_file(out / "requests.csv"))) {
      const std::int64_t expected = row.at("id") == "7" && protects ? 63 : 0;
      EXPECT_EQ(std::stoll(row.at("cached_tokens")), expected) << "request " << row.at("id");
      if (row.at("id") == "7") {
        EXPECT_NEAR(std::stod(row.at("first_scheduled_s")), 2.8, 1e-9);
      }
    }
  }
  EXPECT_DOUBLE_EQ(rate.at("lru_protect_waiting"), 63.0 / (8 * 64));
  EXPECT_GE(rate.at("lru_protect_waiting"), rate.at("lru"));
  EXPECT_EQ(rate.at("lru"), 0.0);
}

}  // namespace
}  // namespace pagesim::sim
