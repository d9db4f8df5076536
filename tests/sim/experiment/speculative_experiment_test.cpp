// Speculative decoding end to end (run_experiment_file): proposals that are always accepted
// make every step emit k + 1 tokens (a request's last, what it has left); a pool too small for the load preempts requests holding
// proposed slots and still finishes every request; prefix caching with chunked prefill runs
// beside it; a step that cannot fit a request's block table is refused naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

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
  // k + 1 = 4 per step, but a request's last step emits only what it has left.
  EXPECT_LT(sp.at("mean_tokens_per_step").get<double>(), 4.0);
  EXPECT_GT(sp.at("mean_tokens_per_step").get<double>(), 3.9);
  EXPECT_EQ(s.at("requests_finished"), base.at("requests_finished"));
  // n-gram drafts cost nothing; verifying 3 more tokens in a memory-bound pass costs little.
  EXPECT_LT(s.at("tpot_s").at("mean").get<double>(), 0.5 * base.at("tpot_s").at("mean").get<double>());
  EXPECT_EQ(s.at("speculative_classes").at("memory_pct").at("proposed_rejected").get<double>(), 0.0);
  EXPECT_EQ(s.at("speculative_classes").at("memory_pct").at("draft_kv").get<double>(), 0.0);
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
  for (const auto& [k, v] : t.at("speculative_classes").at("memory_pct").items()) sum += v.get<double>();
  EXPECT_NEAR(sum, 100.0, 1e-6);
  EXPECT_GT(t.at("speculative_classes").at("memory_pct").at("lookahead").get<double>(), 0.0);
  EXPECT_GT(t.at("speculative_classes").at("memory_pct").at("draft_kv").get<double>(), 0.0);  // EAGLE's layer, shared
}

// Every memory-class set sums to the pool: each iterations.csv row (the five classes and the
// four speculative ones, in slots), and, with two replicas, every replica's classes and the
// cluster's time-weighted ones; sweep.csv carries the speculative measurements.
TEST_F(SpeculativeExperiment, EveryClassSetSumsToThePool) {
  std::string y = experiment("speculative: {method: eagle, num_speculative_tokens: 4, acceptance: 0.6}\n"
                             "replicas: 2\noutput: {iterations_stride: 1}\n");
  y.replace(y.find("slots: 16384"), 12, "slots: 1536");
  const fs::path out = dir_ / "classes";
  run_experiment_file(write("classes.yaml", y), {}, out);
  const std::string csv = pagesim::sim::testing::read_file(out / "iterations.csv");
  std::istringstream lines(csv);
  std::string header, line;
  std::getline(lines, header);
  std::vector<std::string> names;
  for (std::string_view h = header; !h.empty();) {
    const std::size_t comma = h.find(',');
    names.emplace_back(h.substr(0, comma));
    h = comma == std::string_view::npos ? std::string_view() : h.substr(comma + 1);
  }
  const auto column = [&](const std::string& n) {
    const auto it = std::find(names.begin(), names.end(), n);
    EXPECT_NE(it, names.end()) << n << " in " << header;
    return static_cast<std::size_t>(it - names.begin());
  };
  const std::vector<std::size_t> parts = {column("token_states"), column("reserved"), column("over_reserved"),
                                          column("rounding"), column("free"), column("proposed_accepted"),
                                          column("proposed_rejected"), column("lookahead"), column("draft_kv")};
  int rows = 0;
  bool speculated = false;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::istringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) cells.push_back(cell);
    std::int64_t sum = 0;
    for (std::size_t p : parts) sum += std::stoll(cells[p]);
    EXPECT_EQ(sum, 1536) << line;
    speculated = speculated || std::stoll(cells[column("lookahead")]) > 0;
    ++rows;
  }
  EXPECT_GT(rows, 0);
  EXPECT_TRUE(speculated);
  const nlohmann::json j = nlohmann::json::parse(pagesim::sim::testing::read_file(out / "summary.json"));
  const auto sum_of = [](const nlohmann::json& pct) {
    double s = 0;
    for (const auto& [k, v] : pct.items())
      if (k != "cached_free") s += v.get<double>();
    return s;
  };
  for (const nlohmann::json& r : j.at("replicas")) {
    EXPECT_NEAR(sum_of(r.at("memory_pct")) + sum_of(r.at("speculative_classes").at("memory_pct")), 100.0, 1e-6);
    EXPECT_NEAR(sum_of(r.at("memory_pct_time_weighted")) +
                    sum_of(r.at("speculative_classes").at("memory_pct_time_weighted")),
                100.0, 1e-6);
  }
  EXPECT_NEAR(sum_of(j.at("cluster").at("memory_pct_time_weighted")), 100.0, 1e-6);
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

// Proposals accepted past a request's last token are dropped, so a step never counts more
// tokens than the request had left: 2-token outputs emit at most 2 per step, whatever k.
TEST_F(SpeculativeExperiment, TokensPerStepNeverExceedTheTokensLeft) {
  std::string y = experiment("speculative: {method: ngram, num_speculative_tokens: 4, acceptance: 1.0}\n");
  y.replace(y.find("output: {kind: uniform, lo: 20, hi: 200}"), 40, "output: {kind: fixed, value: 2}");
  const nlohmann::json s = run("short", y);
  const nlohmann::json& sp = s.at("speculative");
  EXPECT_EQ(sp.at("acceptance_rate").get<double>(), 1.0);  // the sampler's, as vLLM counts it
  EXPECT_GT(sp.at("steps").get<std::int64_t>(), 0);
  EXPECT_LE(sp.at("mean_tokens_per_step").get<double>(), 1.0 + 1e-12);  // the second token is the step's own
}

// n > 1 and beam search are not speculated (vLLM v1 serves n as separate requests): a sampling
// mix that asks for them beside a speculative section is refused on its key.
TEST_F(SpeculativeExperiment, ParallelSamplingOrBeamsBesideSpeculationAreRefused) {
  for (const std::string& choice : {std::string("{n: 2}"), std::string("{beam_width: 3}")}) {
    std::string y = experiment("speculative: {method: ngram, num_speculative_tokens: 3}\n");
    y.replace(y.find("  max_requests: 60\n"), 18, "  max_requests: 60\n  sampling: [{weight: 1}, " + choice + "]\n");
    try {
      run("sampling", y);
      FAIL() << choice << ": ran";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "workload.sampling[1]") << e.what();
      EXPECT_NE(std::string(e.what()).find("speculates requests of one sequence only"), std::string::npos) << e.what();
    }
  }
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

// With the pool derived from GPU memory, a drafter's weights come out of it (vLLM loads the
// drafter inside load_model's memory profile), and so does a pool of its own for the draft's
// KV; a drafter that leaves no room, or cannot fit beside the target, is refused by its key.
TEST_F(SpeculativeExperiment, ADraftModelsWeightsAndItsOwnPoolTakeGpuMemory) {
  auto derived = [&](const std::string& spec) {
    std::string y = experiment(spec);
    y.replace(y.find("kv: {slots: 16384}"), 18, "kv: {slots: 0}");
    return y;
  };
  const nlohmann::json base = run("base", derived(""));
  const nlohmann::json own = run(
      "own", derived("speculative: {method: draft_model, draft_model: llama-2-13b, num_speculative_tokens: 3, "
                     "draft_kv: own_pool}\n"));
  const nlohmann::json shared = run(
      "shared", derived("speculative: {method: draft_model, draft_model: llama-2-13b, num_speculative_tokens: 3, "
                        "draft_kv: shared}\n"));
  const nlohmann::json none = run(
      "none", derived("speculative: {method: draft_model, draft_model: llama-2-13b, num_speculative_tokens: 3, "
                      "draft_kv: none}\n"));
  const auto slots = [](const nlohmann::json& j) { return j.at("kv_slots").get<std::int64_t>(); };
  const auto budget = [](const nlohmann::json& j, const char* k) { return j.at("kv_budget").at(k).get<double>(); };
  // llama-2-13b's ~24.2 GiB of weights leave the target that much less KV memory.
  EXPECT_NEAR(budget(none, "draft_weights_gib"), 24.24, 0.05);
  EXPECT_NEAR(budget(none, "weights_gib") - budget(base, "weights_gib"), budget(none, "draft_weights_gib"), 0.011);
  EXPECT_NEAR(budget(base, "kv_cache_gib") - budget(none, "kv_cache_gib"), budget(none, "draft_weights_gib"), 0.011);
  EXPECT_LT(slots(none), slots(base));
  // The draft's KV (13B: 800 KiB per token against the 7B's 512 KiB) is 1.5625 target slots
  // per slot: a pool of its own and a shared one leave the target the same slots.
  EXPECT_NEAR(static_cast<double>(slots(own)), static_cast<double>(slots(none)) / 2.5625, 16.0);
  EXPECT_EQ(slots(own), slots(shared));
  EXPECT_NEAR(own.at("speculative").at("own_pool_gib").get<double>(),
              static_cast<double>(slots(none) - slots(own)) * 512 * 1024 / (1 << 30), 0.01);
  // The own pool is not the target's: its memory classes carry no draft KV there.
  EXPECT_EQ(own.at("speculative_classes").at("memory_pct").at("draft_kv").get<double>(), 0.0);
  EXPECT_GT(shared.at("speculative_classes").at("memory_pct").at("draft_kv").get<double>(), 0.0);

  // A 405B drafter (~756 GiB) leaves nothing on one 80 GB GPU: derived, or beside a given pool.
  for (const std::string& kv : {std::string("kv: {slots: 0}"), std::string("kv: {slots: 16384}")}) {
    std::string y = experiment("speculative: {method: draft_model, draft_model: llama-3.1-405b, num_speculative_tokens: 3}\n");
    y.replace(y.find("kv: {slots: 16384}"), 18, kv);
    try {
      run("huge", y);
      FAIL() << kv << ": ran";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), "speculative.draft_model") << e.what();
      EXPECT_NE(std::string(e.what()).find("the drafter's weights"), std::string::npos) << e.what();
    }
  }
}

// A request the pool cannot hold says where the pool's memory went: the draft's shared KV.
TEST_F(SpeculativeExperiment, ACapacityErrorNamesTheDraftsShare) {
  std::string y = experiment("speculative: {method: draft_model, draft_model: llama-2-13b, num_speculative_tokens: 2, "
                             "draft_kv: shared}\n");
  y.replace(y.find("slots: 16384"), 12, "slots: 512");
  try {
    run("share", y);
    FAIL() << "ran";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "kv.slots") << e.what();
    EXPECT_NE(std::string(e.what()).find("speculative decoding's draft KV took 320 slots of the same memory"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(SpeculativeExperiment, AnEagleHeadsLayersTakeGpuMemoryButNotTheSharedEmbedding) {
  std::string y = experiment("speculative: {method: eagle, num_speculative_tokens: 3, draft_kv: none}\n");
  y.replace(y.find("kv: {slots: 16384}"), 18, "kv: {slots: 0}");
  const nlohmann::json e = run("eagle", y);
  // One Llama-2-7B decoder layer (202 M weights) and fc (2·4096 → 4096, 33.6 M), bf16.
  const double layer = (4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096) * 2;
  EXPECT_NEAR(e.at("kv_budget").at("draft_weights_gib").get<double>(), (layer + 2.0 * 4096 * 4096 * 2) / (1 << 30), 0.01);
}

}  // namespace
}  // namespace pagesim::sim
