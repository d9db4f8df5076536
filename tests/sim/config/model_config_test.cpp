// The `model` key as a custom model (sim/config/model_config.h): a Hugging Face config.json
// found like every input path, or the architecture inline, builds the same run as the preset
// it describes; config.resolved.yaml reads back to the same model; and bad custom models are
// errors on the key.
#include "sim/config/model_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/cost/presets.h"
#include "sim/experiment/experiment.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kConfigs = fs::path(PAGESIM_SOURCE_DIR) / "tests/sim/data/hf_configs";

ExperimentConfig parse(const std::string& yaml, const std::string& file = "exp.yaml") {
  return parse_experiment(YAML::Load(yaml), file);
}

// A small run: KV capacity derived from eight H200s' memory (so the model's weight and KV
// bytes matter; DeepSeek-V3 fits), few requests.
std::string experiment(const std::string& model, int tp = 8) {
  return "model: " + model + "\ngpu: h200\ntensor_parallel: " + std::to_string(tp) + "\nworkload: {max_requests: 8}\n";
}

// The model a run builds, named as the preset so the two compare whole.
ModelSpec built_model(const ExperimentConfig& c, const std::string& name) {
  Run run = build_run(c);
  run.model.name = name;
  return run.model;
}

// The key of the ConfigError that parsing and building `yaml` throws, its message holding `word`.
std::string error_key(const std::string& yaml, const std::string& word) {
  try {
    const ExperimentConfig c = parse(yaml);
    check_input_paths(c);
    build_run(c);
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    return e.key();
  }
  return "(no error)";
}

using CustomModel = testing::TempDirTest;

TEST_F(CustomModel, HfConfigBuildsThePresetsRun) {
  for (const char* name : {"llama-3-8b", "mixtral-8x7b", "deepseek-v3", "gpt-oss-120b"}) {
    const std::string path = (kConfigs / (std::string(name) + ".json")).string();
    const ExperimentConfig custom = parse(experiment("{hf_config: " + path + "}"));
    EXPECT_TRUE(custom.custom_model.given);
    EXPECT_EQ(custom.model, name);  // named after the file
    const ExperimentConfig preset = parse(experiment(name));
    EXPECT_EQ(built_model(custom, name), model_preset(name)) << name;
    EXPECT_EQ(build_run(custom).kv_slots, build_run(preset).kv_slots) << name;
  }
}

TEST_F(CustomModel, HfConfigIsFoundBesideTheExperimentAndNamedAfterItsFolder) {
  fs::create_directories(dir_ / "Meta-Llama-3-8B");
  fs::copy_file(kConfigs / "llama-3-8b.json", dir_ / "Meta-Llama-3-8B/config.json");
  const std::string file = write("exp.yaml", experiment("{hf_config: Meta-Llama-3-8B/config.json}"));
  const ExperimentConfig c = parse_experiment(load_yaml_file(file), file);
  EXPECT_EQ(c.model, "Meta-Llama-3-8B");
  EXPECT_EQ(c.custom_model.hf_config, (dir_ / "Meta-Llama-3-8B/config.json").generic_string());
  EXPECT_EQ(built_model(c, "llama-3-8b"), model_preset("llama-3-8b"));
  // config.resolved.yaml keeps the file, not its numbers, and reads back to the same model.
  const YAML::Node resolved = to_yaml(c);
  EXPECT_EQ(resolved["model"]["hf_config"].as<std::string>(), c.custom_model.hf_config);
  EXPECT_FALSE(resolved["model"]["layers"]);
  const ExperimentConfig again = parse_experiment(resolved, "config.resolved.yaml");
  EXPECT_EQ(again.model, c.model);
  EXPECT_EQ(again.custom_model, c.custom_model);
}

TEST_F(CustomModel, InlineArchitectureBuildsThePresetsRun) {
  const ExperimentConfig c = parse(experiment(
      "{name: my-llama, layers: 32, hidden: 4096, heads: 32, kv_heads: 8, ffn: 14336, vocab: 128256, "
      "max_seq_len: 8192}"));
  EXPECT_EQ(c.model, "my-llama");
  EXPECT_EQ(c.custom_model.spec.head_dim, 128);  // hidden / heads
  EXPECT_EQ(built_model(c, "llama-3-8b"), model_preset("llama-3-8b"));
  const ExperimentConfig again = parse_experiment(to_yaml(c), "config.resolved.yaml");
  EXPECT_EQ(again.custom_model, c.custom_model);
  EXPECT_EQ(again.model, "my-llama");

  // MoE + MLA inline: DeepSeek-V2-Lite.
  const ExperimentConfig mla = parse(experiment(
      "{layers: 27, hidden: 2048, heads: 16, ffn: 10944, vocab: 102400, max_seq_len: 163840, moe_layers: 26, "
      "experts: 64, active_experts: 6, shared_experts: 2, expert_ffn: 1408, "
      "mla: {kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128}}"));
  EXPECT_EQ(mla.model, "custom");
  EXPECT_EQ(built_model(mla, "deepseek-v2-lite"), model_preset("deepseek-v2-lite"));

  // Layer groups inline: Gemma 2 9B.
  const ExperimentConfig groups = parse(experiment(
      "{layers: 42, hidden: 3584, heads: 16, kv_heads: 8, head_dim: 256, ffn: 14336, vocab: 256000, "
      "max_seq_len: 8192, tied_lm_head: true, groups: [{kind: sliding_window, layers: 21, kv_heads: 8, "
      "head_dim: 256, window_tokens: 4096}, {kind: full, layers: 21, kv_heads: 8, head_dim: 256}]}"));
  EXPECT_EQ(built_model(groups, "gemma-2-9b"), model_preset("gemma-2-9b"));
}

TEST_F(CustomModel, BadCustomModelsAreErrorsOnTheKey) {
  const std::string llama = "layers: 32, hidden: 4096, heads: 32, ffn: 14336, vocab: 128256, max_seq_len: 8192";
  EXPECT_EQ(error_key(experiment("{" + llama + ", kv_heads: 3}"), "kv_heads 3 does not divide heads 32"), "model");
  EXPECT_EQ(error_key(experiment("{hidden: 4096, heads: 32}"), "layers is 0"), "model");
  EXPECT_EQ(error_key(experiment("{" + llama + ", moe_layers: 32, experts: 8, active_experts: 9, expert_ffn: 1}"),
                      "active_experts"),
            "model");
  EXPECT_EQ(error_key(experiment("{" + llama + ", head_dim: 192, mla: {kv_lora_rank: 512}}"), "mla.qk_nope_head_dim"), "model");
  EXPECT_EQ(error_key(experiment("{" + llama + ", layer: 3}"), "unknown key"), "model.layer");
  EXPECT_EQ(error_key(experiment("{" + llama + ", learned_positions: many}"), "expected an integer"),
            "model.learned_positions");
  EXPECT_EQ(error_key(experiment("{" + llama + ", groups: [{kind: windowed, layers: 32}]}"), "sliding_window"),
            "model.groups[0].kind");
  // hf_config: the architecture comes from the file only.
  const std::string hf = (kConfigs / "llama-3-8b.json").string();
  EXPECT_EQ(error_key(experiment("{hf_config: " + hf + ", layers: 2}"), "beside model.hf_config"), "model.layers");
  EXPECT_EQ(error_key(experiment("{hf_config: no-such/config.json}"), "expected an existing file"), "model.hf_config");
  write("bad.json", R"({"num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 5, "intermediate_size": 1, "vocab_size": 1, "max_position_embeddings": 1})");
  EXPECT_EQ(error_key(experiment("{hf_config: " + (dir_ / "bad.json").string() + "}"), "num_key_value_heads: 5"),
            "model.hf_config");
  // Sizes that would overflow are refused before any is derived (they ran with a negative
  // TTFT, or printed "weights -9223372036789239808 B").
  EXPECT_EQ(error_key(experiment("{layers: 32, hidden: 1000000000000, heads: 32, ffn: 14336, vocab: 128256, "
                                 "max_seq_len: 8192}"),
                      "expected sizes below 2^52 B"),
            "model");
  EXPECT_EQ(error_key(experiment("{layers: 30000000000, hidden: 4096, heads: 32, ffn: 14336, vocab: 128256, "
                                 "max_seq_len: 8192}"),
                      "expected sizes below 2^52 B"),
            "model");
  EXPECT_EQ(error_key(experiment("{" + llama + ", block_weight_bytes: 1e300}"), "expected bytes per weight in [0, 8]"),
            "model");
  write("huge.json", R"({"num_hidden_layers": 32, "hidden_size": 1e12, "num_attention_heads": 32,
    "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192})");
  EXPECT_NE(error_key(experiment("{hf_config: " + (dir_ / "huge.json").string() + "}"), "hidden"), "(no error)");
  // A custom model is checked against tensor parallelism as a preset is.
  EXPECT_EQ(error_key(experiment("{" + llama + ", kv_heads: 8}", 3), "does not divide heads"), "tensor_parallel");
}

}  // namespace
}  // namespace pagesim::sim
