// Hugging Face config.json → ModelSpec (sim/cost/hf_model_config.h): each published config in
// tests/sim/data/hf_configs derives exactly the preset of the same name (dense GQA, OPT, MoE,
// MLA with and without query compression, fp8 weights, layer_types with MXFP4 experts), and a
// config the reader cannot take is an error naming the key.
#include "sim/cost/hf_model_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/cost/presets.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
const fs::path kConfigs = fs::path(PAGESIM_SOURCE_DIR) / "tests/sim/data/hf_configs";

class HfConfigEqualsPreset : public testing::TestWithParam<const char*> {};

TEST_P(HfConfigEqualsPreset, DerivedSpecIsThePresets) {
  const std::string name = GetParam();
  const ModelSpec read = read_hf_config(kConfigs / (name + ".json"), name);
  const ModelSpec preset = model_preset(name);
  EXPECT_EQ(read, preset);
  // Spelled out, so a mismatch says which field.
  EXPECT_EQ(read.layers, preset.layers);
  EXPECT_EQ(read.kv_heads, preset.kv_heads);
  EXPECT_EQ(read.head_dim, preset.head_dim);
  EXPECT_EQ(read.groups, preset.groups);
  EXPECT_EQ(read.mla, preset.mla);
  EXPECT_EQ(read.experts, preset.experts);
  EXPECT_EQ(read.moe_layers, preset.moe_layers);
  EXPECT_EQ(read.expert_ffn, preset.expert_ffn);
  EXPECT_EQ(read.block_weight_bytes, preset.block_weight_bytes);
  EXPECT_EQ(read.expert_weight_bytes, preset.expert_weight_bytes);
  EXPECT_EQ(read.tied_lm_head, preset.tied_lm_head);
  EXPECT_EQ(read.learned_positions, preset.learned_positions);
  EXPECT_EQ(read.kv_bytes_per_token(), preset.kv_bytes_per_token());
  EXPECT_EQ(read.weight_bytes(), preset.weight_bytes());
}

INSTANTIATE_TEST_SUITE_P(Published, HfConfigEqualsPreset,
                         testing::Values("llama-3-8b", "opt-13b", "mixtral-8x7b", "deepseek-v3", "deepseek-v2-lite",
                                         "gpt-oss-120b"));

// The key an error names, or "" when the config is accepted.
std::string error_key(const std::string& json) {
  try {
    model_from_hf_config(json, "config.json", "custom");
  } catch (const HfConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: " + e.key() + ": "), std::string::npos) << e.what();
    return e.key();
  }
  return "";
}

// A Llama-style config text with these layers and KV heads and `extra` keys appended.
std::string llama(const std::string& layers = "32", const std::string& kv = "8", const std::string& extra = "") {
  return R"({"model_type": "llama", "num_hidden_layers": )" + layers +
         R"(, "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": )" + kv +
         R"(, "intermediate_size": 14336, "vocab_size": 128256, "max_position_embeddings": 8192)" + extra + "}";
}

TEST(HfModelConfig, AcceptsAMinimalLlamaConfig) {
  EXPECT_EQ(error_key(llama()), "");
  const ModelSpec m = model_from_hf_config(llama(), "config.json", "mine");
  EXPECT_EQ(m.name, "mine");
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_FALSE(m.tied_lm_head);  // absent: untied (OPT: tied)
  // Absent num_key_value_heads: every head has its KV (Transformers' default).
  const std::string mha = R"({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
    "intermediate_size": 128, "vocab_size": 100, "max_position_embeddings": 512})";
  EXPECT_EQ(model_from_hf_config(mha, "c.json", "m").kv_heads, 4);
}

TEST(HfModelConfig, BadConfigsNameTheKey) {
  EXPECT_EQ(error_key("{"), "(file)");
  EXPECT_EQ(error_key("[1, 2]"), "(file)");
  EXPECT_EQ(error_key(llama("0")), "num_hidden_layers");
  EXPECT_EQ(error_key(llama("\"32\"")), "num_hidden_layers");
  EXPECT_EQ(error_key(llama("32.5")), "num_hidden_layers");
  EXPECT_EQ(error_key(llama("32", "3")), "num_key_value_heads");
  EXPECT_EQ(error_key(R"({"num_hidden_layers": 2})"), "hidden_size");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "torch_dtype": "int8")")), "torch_dtype");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "tie_word_embeddings": 1)")), "tie_word_embeddings");
  // Which layers use the window is not in the file.
  EXPECT_EQ(error_key(llama("32", "8", R"(, "sliding_window": 4096)")), "sliding_window");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "sliding_window": 4096, "use_sliding_window": false)")), "");
  EXPECT_EQ(error_key(llama("2", "8", R"(, "sliding_window": 4, "layer_types": ["full_attention"])")), "layer_types");
  EXPECT_EQ(error_key(llama("2", "8", R"(, "layer_types": ["full_attention", "linear_attention"])")), "layer_types");
  EXPECT_EQ(error_key(llama("2", "8", R"(, "layer_types": ["full_attention", "sliding_attention"])")),
            "sliding_window");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "attention_chunk_size": 8192)")), "attention_chunk_size");
  // MoE.
  EXPECT_EQ(error_key(llama("32", "8", R"(, "num_local_experts": 8)")), "num_experts_per_tok");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "num_local_experts": 8, "num_experts_per_tok": 9)")),
            "num_experts_per_tok");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "num_experts": 16, "num_experts_per_tok": 2, "expert_layer_period": 2)")),
            "expert_layer_period");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "n_routed_experts": 8, "num_experts_per_tok": 2,
                                          "first_k_dense_replace": 33)")),
            "first_k_dense_replace");
  // MLA.
  EXPECT_EQ(error_key(llama("32", "32", R"(, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "v_head_dim": 128)")),
            "qk_rope_head_dim");
  EXPECT_EQ(error_key(llama("32", "8", R"(, "quantization_config": {"quant_method": "awq"})")),
            "quantization_config.quant_method");
}

TEST(HfModelConfig, MultimodalConfigsAreReadInTextConfig) {
  const std::string nested = R"({"model_type": "mm", "text_config": {"num_hidden_layers": 4, "hidden_size": 64,
    "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 100,
    "max_position_embeddings": 512}})";
  EXPECT_EQ(error_key(nested), "text_config.num_key_value_heads");
}

TEST(HfModelConfig, AMissingFileIsAnError) {
  EXPECT_THROW(read_hf_config(kConfigs / "nope.json", "x"), HfConfigError);
}

}  // namespace
}  // namespace pagesim::sim
