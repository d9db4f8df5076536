// Speculative decoding end to end (run_experiment_file): proposals that are always accepted
// make every step emit k + 1 tokens; a pool too small for the load preempts requests holding
// proposed slots and still finishes every request; prefix caching with chunked prefill runs
// beside it; a step that cannot fit a request's block table is refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "sim/config/config_error.h"
#include "sim/experiment/experiment.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class SpeculativeExperiment : public testing::TempDirTest {
 protected:
  std::string experiment(const std::string& extra) const {
    return "name: spec\n"
           "seed: 5\n"
           "workload:\n"
           "  kind: synthetic\n"
           "  arrival: {kind: poisson, rate: 20}\n"
           "  lengths: {kind: distributions, prompt: {kind: uniform, lo: 40, hi: 300}, output: {kind: uniform, lo: 20, hi: 200}}\n"
           "  max_requests: 60\n"
           "model: llama-2-7b\n"
           "gpu: a100-80gb\n"
           "kv: {slots: 16384}\n"
           "allocator: {kind: paged, block_size: 16}\n"
           "scheduler: {kind: vllm-v1, max_num_batched_tokens: 512}\n"
           "cost: {kind: roofline}\n" +
           extra;
  }
  nlohmann::json run(const std::string& name, const std::string& yaml) {
    const fs::path out = dir_ / name;
    run_experiment_file(write(name + ".yaml", yaml), {}, out);
    return nlohmann::json::parse(pagesim::sim::testing::read_file(out / "summary.json"));
  }
};

TEST_F(SpeculativeExperiment, AlwaysAcceptedProposalsEmitKPlusOneTokensPerStep) {
  const nlohmann::json base = run("base", experiment(""));
  const nlohmann::json s =
      run("spec", experiment("speculative: {method: ngram, num_speculative_tokens: 3, acceptance: 1.0}\n"));
  const nlohmann::json& sp = s.at("speculative");
  EXPECT_EQ(sp.at("acceptance_rate").get<double>(), 1.0);
  EXPECT_EQ(sp.at("mean_tokens_per_step").get<double>(), 4.0);
  EXPECT_EQ(s.at("requests_finished"), base.at("requests_finished"));
  // n-gram drafts cost nothing; verifying 3 more tokens in a memory-bound pass costs little.
  EXPECT_LT(s.at("tpot_s").at("mean").get<double>(), 0.5 * base.at("tpot_s").at("mean").get<double>());
  EXPECT_EQ(sp.at("memory_pct").at("proposed_rejected").get<double>(), 0.0);
  EXPECT_EQ(sp.at("memory_pct").at("draft_kv").get<double>(), 0.0);
}

TEST_F(SpeculativeExperiment, PreemptsRequestsAndFinishesThemAll) {
  // A pool of 96 blocks for 60 requests: preemptions while EAGLE reserves 2k slots per step.
  const nlohmann::json t = run("tiny", [&] {
    std::string y = experiment("speculative: {method: eagle, num_speculative_tokens: 4, acceptance: 0.6}\n");
    y.replace(y.find("slots: 16384"), 12, "slots: 1536");
    return y;
  }());
  EXPECT_GT(t.at("preemptions").get<std::int64_t>(), 0);
  EXPECT_EQ(t.at("requests_finished"), t.at("requests_arrived"));
  double sum = 0;
  for (const char* c : {"token_states", "reserved", "over_reserved", "rounding", "free"}) sum += t.at("memory_pct").at(c).get<double>();
  for (const auto& [k, v] : t.at("speculative").at("memory_pct").items()) sum += v.get<double>();
  EXPECT_NEAR(sum, 100.0, 1e-6);
  EXPECT_GT(t.at("speculative").at("memory_pct").at("lookahead").get<double>(), 0.0);
  EXPECT_GT(t.at("speculative").at("memory_pct").at("draft_kv").get<double>(), 0.0);  // EAGLE's layer, shared
}

TEST_F(SpeculativeExperiment, RunsWithPrefixCachingAndChunkedPrefill) {
  std::string y = "name: spec\nseed: 2\n"
                  "workload:\n"
                  "  kind: trace\n"
                  "  trace: {path: traces/data/mooncake_conversation_trace.jsonl, format: mooncake}\n"
                  "  max_requests: 60\n"
                  "  oversize: truncate\n"
                  "model: llama-3.1-70b\ngpu: h100-sxm\ntensor_parallel: 4\nmax_model_len: 8192\n"
                  "kv: {slots: 32768}\n"
                  "allocator: {kind: paged, block_size: 16}\n"
                  "scheduler: {kind: vllm-v1, max_num_batched_tokens: 256}\n"
                  "speculative: {method: draft_model, draft_model: llama-3.1-8b, num_speculative_tokens: 5, acceptance: 0.7}\n";
  const nlohmann::json s = run("prefix", y);
  EXPECT_EQ(s.at("requests_finished"), s.at("requests_arrived"));
  EXPECT_GT(s.at("prefix_hit_rate").get<double>(), 0.0);
  EXPECT_GT(s.at("speculative").at("steps").get<std::int64_t>(), 0);
}

TEST_F(SpeculativeExperiment, AStepLargerThanTheBlockTableIsRefused) {
  try {
    run("big", experiment("max_model_len: 40\nspeculative: {method: eagle, num_speculative_tokens: 30}\n"));
    FAIL() << "ran";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "speculative.num_speculative_tokens") << e.what();
    EXPECT_NE(std::string(e.what()).find("block table"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim
