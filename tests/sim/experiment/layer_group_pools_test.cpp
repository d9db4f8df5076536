// The layer-group pools (allocator.kind uniform, hybrid, jenga, vattention) through
// run_experiment_file(): each runs end to end under vllm-v1 on Gemma-2-9B, Llama-3.2-11B-Vision
// and Jamba; the memory classes say what the allocators are (uniform keeps out-of-window KV,
// hybrid frees it); summary.json has "layer_classes" only for these kinds; and the settings
// that mean nothing with them are refused naming the key; on a single-group model uniform,
// hybrid and jenga run exactly as paged.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/config/config_error.h"
#include "sim/experiment/experiment.h"
#include "sim_harness.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::read_file;

const fs::path kSource = PAGESIM_SOURCE_DIR;

class LayerGroupPoolsTest : public testing::TempDirTest {};

// Prompts of 6000 tokens (Gemma-2's sliding window is 4096) arriving faster than a pool of
// 65536 uniform-equivalent slots serves them: the pool bounds the batch, and every request
// outgrows the window.
std::string experiment(const std::string& model, const std::string& kind, const std::string& extra = "") {
  return "name: pools\n"
         "seed: 1\n"
         "workload:\n"
         "  kind: synthetic\n"
         "  arrival: {kind: poisson, rate: 20}\n"
         "  lengths: {prompt: {kind: fixed, value: 6000}, output: {kind: fixed, value: 64}}\n"
         "  max_requests: 60\n"
         "model: " + model + "\n"
         "gpu: h200\n"
         "kv: {slots: 65536}\n"
         "allocator: {kind: " + kind + ", block_size: 16}\n"
         "scheduler: {kind: vllm-v1, max_num_batched_tokens: 8192, max_num_seqs: 256}\n"
         "cost: {kind: roofline}\n"
         "output: {iterations_stride: 0}\n" + extra;
}

class PoolKindTest : public LayerGroupPoolsTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(PoolKindTest, RunsGemma2VisionAndJambaToTheEnd) {
  for (const std::string model : {"gemma-2-9b", "llama-3.2-11b-vision", "jamba-v0.1"}) {
    SCOPED_TRACE(model);
    const fs::path file = write(model + ".yaml", experiment(model, GetParam()));
    const fs::path out = dir_ / model;
    const auto res = run_experiment_file(file, {}, out);
    ASSERT_EQ(res.size(), 1u);
    const Summary& s = res[0].summary;
    EXPECT_EQ(s.requests_finished, 60);
    ASSERT_TRUE(s.layer_classes.has_value());
    const auto j = nlohmann::json::parse(read_file(out / "summary.json"));
    ASSERT_TRUE(j.contains("layer_classes"));
    // Every class, the layer classes included, sums to the whole pool.
    const MemoryPct& m = s.memory_pct;
    const LayerClassPct& l = s.layer_classes->memory_pct;
    EXPECT_NEAR(m.token_states + m.reserved + m.over_reserved + m.rounding + m.free + l.out_of_window +
                    l.recurrent_state + l.unused_layers,
                100.0, 1e-6);
    if (model == "jamba-v0.1") {
      EXPECT_GT(l.recurrent_state, 0.0);  // its Mamba layers' state, per sequence
    } else {
      EXPECT_EQ(l.recurrent_state, 0.0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, PoolKindTest, ::testing::Values("uniform", "hybrid", "jenga", "vattention"));

// Gemma-2-9B: 21 of its 42 layers slide over 4096 tokens. uniform keeps a 6000-token prompt's
// every key in every layer, so part of its pool is out-of-window KV; hybrid frees the pages
// that left the window, so more of its pool holds attended tokens and more requests fit.
TEST_F(LayerGroupPoolsTest, HybridHoldsMoreAttendedTokensThanUniformOnGemma2) {
  const auto uniform = run_experiment_file(write("u.yaml", experiment("gemma-2-9b", "uniform")), {}, dir_ / "u");
  const auto hybrid = run_experiment_file(write("h.yaml", experiment("gemma-2-9b", "hybrid")), {}, dir_ / "h");
  const Summary& u = uniform.at(0).summary;
  const Summary& h = hybrid.at(0).summary;
  ASSERT_TRUE(u.layer_classes && h.layer_classes);
  EXPECT_GT(u.layer_classes->memory_pct.out_of_window, 0.0);
  EXPECT_GT(h.memory_pct.token_states, u.memory_pct.token_states);
  EXPECT_GT(h.mean_batched_requests, u.mean_batched_requests);
}

// A paged run's outputs keep their fields: no layer classes.
TEST_F(LayerGroupPoolsTest, PagedRunHasNoLayerClasses) {
  const fs::path out = dir_ / "paged";
  const auto res = run_experiment_file(write("p.yaml", experiment("gemma-2-9b", "paged")), {}, out);
  EXPECT_FALSE(res.at(0).summary.layer_classes.has_value());
  EXPECT_FALSE(nlohmann::json::parse(read_file(out / "summary.json")).contains("layer_classes"));
  EXPECT_EQ(read_file(out / "config.resolved.yaml").find("vattention"), std::string::npos);
}

// A single-group model on uniform is the paged pool under another name: same pool, same run.
TEST_F(LayerGroupPoolsTest, UniformOnASingleGroupModelRunsAsPaged) {
  const auto paged = run_experiment_file(write("p.yaml", experiment("llama-3-8b", "paged")), {}, dir_ / "p");
  const auto uniform = run_experiment_file(write("u.yaml", experiment("llama-3-8b", "uniform")), {}, dir_ / "u");
  const Summary& p = paged.at(0).summary;
  const Summary& u = uniform.at(0).summary;
  EXPECT_EQ(p.preemptions, u.preemptions);
  EXPECT_DOUBLE_EQ(p.mean_batched_requests, u.mean_batched_requests);
  EXPECT_DOUBLE_EQ(p.throughput_tokens_per_s, u.throughput_tokens_per_s);
}

// Llama-3-8B has one layer group: uniform, hybrid and jenga all lay it out as one table of
// one page size, a block pool; under vllm-v1 each uses v1's one free-block queue, as paged does
// (vLLM's hybrid manager keeps one BlockPool for all its groups). Mooncake conversations with
// the prefix cache on, in a pool that evicts thousands of cached blocks: the same run. Its
// files differ only where the pools' units or names do: requests.csv byte for byte;
// summary.json but for the allocator's name, the layer classes (all 0) and host timings;
// iterations.csv but for the memory columns, in bytes for the layer-group pools (131,072 per
// token slot: 32 layers x 8 KV heads x 128 x K and V x 2 bytes), and the layer-class columns.
TEST_F(LayerGroupPoolsTest, SingleGroupPoolsRunAsPagedUnderVllmV1) {
  const std::string yaml =
      "name: one-group\n"
      "seed: 1\n"
      "workload:\n"
      "  kind: trace\n"
      "  trace: {path: " + (kSource / "traces/data/mooncake_conversation_trace.jsonl").string() + ", format: mooncake}\n"
      "  max_total_tokens: 16384\n"
      "  max_requests: 100\n"
      "model: llama-3-8b\n"
      "max_model_len: off\n"
      "gpu: h200\n"
      "kv: {slots: 40000}\n"
      "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
      "scheduler: {kind: vllm-v1, max_num_batched_tokens: 8192}\n"
      "cost: {kind: roofline}\n"
      "output: {iterations_stride: 1, requests_csv: true}\n";
  const fs::path file = write("one-group.yaml", yaml);
  const fs::path paged = dir_ / "paged";
  const auto p = run_experiment_file(file, {}, paged);
  ASSERT_GT(p.at(0).summary.prefix_cache->evicted_blocks, 1000);
  auto facts = [](const fs::path& out) {
    auto j = nlohmann::json::parse(read_file(out / "summary.json"));
    for (const char* key : {"allocator", "layer_classes", "wall_s", "sim_seconds_per_wall_second",
                            "iterations_per_wall_second"})
      j.erase(key);
    return j.dump(1);
  };
  constexpr std::int64_t kBytesPerSlot = 131072;
  const std::vector<testing::Row> paged_rows = testing::parse_csv(read_file(paged / "iterations.csv"));
  ASSERT_GT(paged_rows.size(), 1000u);
  for (const std::string kind : {"uniform", "hybrid", "jenga"}) {
    SCOPED_TRACE(kind);
    const fs::path out = dir_ / kind;
    run_experiment_file(file, {"allocator.kind=" + kind}, out);
    EXPECT_EQ(read_file(out / "requests.csv"), read_file(paged / "requests.csv"));
    EXPECT_EQ(facts(out), facts(paged));
    const std::vector<testing::Row> rows = testing::parse_csv(read_file(out / "iterations.csv"));
    ASSERT_EQ(rows.size(), paged_rows.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      testing::Row expect = paged_rows[i];
      for (const char* slots : {"token_states", "reserved", "over_reserved", "rounding", "free", "cached_free",
                                "unusable_free"})
        expect[slots] = std::to_string(std::stoll(expect.at(slots)) * kBytesPerSlot);
      for (const char* layer : {"out_of_window", "recurrent_state", "unused_layers"}) expect[layer] = "0";
      if (rows[i] != expect && differing++ == 0) ADD_FAILURE() << "iterations.csv differs first at row " << i;
    }
    EXPECT_EQ(differing, 0u);
  }
}

// allocator.vattention is written to config.resolved.yaml when it differs from the defaults.
TEST_F(LayerGroupPoolsTest, VattentionSettingsAreResolved) {
  const fs::path out = dir_ / "v";
  run_experiment_file(write("v.yaml", experiment("gemma-2-9b", "vattention")),
                      {"allocator.vattention.page_kib=64", "allocator.vattention.max_batch_size=32"}, out);
  const std::string resolved = read_file(out / "config.resolved.yaml");
  EXPECT_NE(resolved.find("page_kib: 64"), std::string::npos) << resolved;
  EXPECT_NE(resolved.find("max_batch_size: 32"), std::string::npos) << resolved;
}

void expect_config_error(const fs::path& file, const std::vector<std::string>& sets, const fs::path& out,
                         const std::string& key) {
  try {
    run_experiment_file(file, sets, out);
    ADD_FAILURE() << "no error; expected one on " << key;
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
  }
}

TEST_F(LayerGroupPoolsTest, MeaninglessCombinationsNameTheirKey) {
  const fs::path f = write("e.yaml", experiment("gemma-2-9b", "hybrid"));
  expect_config_error(f, {"scheduler.kind=vllm"}, dir_ / "a", "allocator.kind");
  expect_config_error(f, {"scheduler.kind=sarathi"}, dir_ / "b", "allocator.kind");
  expect_config_error(f, {"scheduler.kind=orca", "scheduler.preemption=swap"}, dir_ / "c", "scheduler.preemption");
  expect_config_error(f, {"allocator.vattention.page_kib=64"}, dir_ / "d", "allocator.vattention");
  expect_config_error(f, {"allocator.kind=vattention", "allocator.vattention.page_kib=100"}, dir_ / "e",
                      "allocator.vattention.page_kib");
  expect_config_error(f, {"allocator.kind=vattention", "allocator.prefix_cache=true"}, dir_ / "f",
                      "allocator.prefix_cache");
  expect_config_error(f, {"allocator.offload.tiers=[{kind: cpu, capacity_gib: 1}]"}, dir_ / "g",
                      "allocator.offload");
}

// A latent-attention model with settings that cannot hold it: errors naming the key; hybrid
// and paged hold DeepSeek-V3.2's latent and index keys, uniform pads them.
TEST_F(LayerGroupPoolsTest, LatentAttentionRefusesWhatCannotHoldItByKey) {
  auto error_of = [&](const std::string& name, const std::string& text) {
    try {
      (void)run_experiment_file(write(name, text), {}, dir_ / name);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string vat = error_of("v.yaml", experiment("deepseek-v2-lite", "vattention"));
  EXPECT_NE(vat.find("allocator.kind"), std::string::npos) << vat;
  EXPECT_NE(vat.find("latent (MLA)"), std::string::npos) << vat;
  const std::string int4 = error_of("i.yaml", experiment("deepseek-v2-lite", "paged", "kv_dtype: int4\n"));
  EXPECT_NE(int4.find("kv_dtype"), std::string::npos) << int4;
  EXPECT_NE(int4.find("int4"), std::string::npos) << int4;
}

TEST_F(LayerGroupPoolsTest, DeepSeekV32RunsUnderPagedHybridAndUniform) {
  std::vector<double> token_states;
  for (const std::string kind : {"paged", "hybrid", "uniform"}) {
    SCOPED_TRACE(kind);
    std::string text = experiment("deepseek-v3.2-exp", kind, "tensor_parallel: 8\n");
    text.replace(text.find("block_size: 16"), 14, "block_size: 64");
    const auto res = run_experiment_file(write(kind + ".yaml", text), {}, dir_ / kind);
    ASSERT_EQ(res.size(), 1u);
    EXPECT_EQ(res[0].summary.requests_finished, 60);
    token_states.push_back(res[0].summary.memory_pct.token_states);
  }
  EXPECT_NEAR(token_states[0], token_states[1], 1e-9);  // one table either way
  EXPECT_LT(token_states[2], token_states[1]);           // uniform pads the index keys
}

}  // namespace
}  // namespace pagesim::sim
