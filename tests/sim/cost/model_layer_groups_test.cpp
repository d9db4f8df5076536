// Layer groups of the heterogeneous presets: per-group KV bytes per token worked out by hand
// from each config (2 · layers · kv_heads · head_dim · bytes per element), the uniform
// charge, tensor parallelism, KV dtypes, MoE parameters, and validate() on bad groups.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "sim/cost/cost_error.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {
namespace {

using alloc::LayerGroup;
using alloc::LayerGroupKind;

TEST(ModelLayerGroups, UniformModelIsOneFullGroup) {
  const ModelSpec m = model_preset("llama-3-8b");
  const alloc::LayerGroups g = layer_groups(m, 1);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].kind, LayerGroupKind::kFull);
  EXPECT_EQ(g[0].layers, 32);
  EXPECT_EQ(g[0].kv_bytes_per_token, 131'072);  // 2 · 32 · 8 · 128 · 2
  EXPECT_EQ(g[0].window_tokens, 0);
  EXPECT_EQ(g[0].state_bytes, 0);
  EXPECT_EQ(g[0].kv_bytes_per_token, m.kv_bytes_per_token());
  EXPECT_EQ(layer_groups(m, 4)[0].kv_bytes_per_token, m.kv_bytes_per_token_per_gpu(4));
  EXPECT_EQ(layer_groups(m, 4)[0].kv_bytes_per_token, 131'072 / 4);
}

TEST(ModelLayerGroups, Gemma2SlidingAndFullByHand) {
  const ModelSpec m = model_preset("gemma-2-9b");
  ASSERT_NO_THROW(m.validate());
  // One layer, one token: 2 (K, V) · 8 heads · 256 dims · 2 bytes = 8192 B.
  const alloc::LayerGroups g = layer_groups(m, 1);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], (LayerGroup{LayerGroupKind::kSlidingWindow, 21, 21 * 8192, 4096, 0, 0}));
  EXPECT_EQ(g[1], (LayerGroup{LayerGroupKind::kFull, 21, 21 * 8192, 0, 0, 0}));
  EXPECT_EQ(m.kv_bytes_per_token(), 42 * 8192);  // uniform: all 42 layers hold every token
  // tp = 2: 4 KV heads per GPU.
  const alloc::LayerGroups g2 = layer_groups(m, 2);
  EXPECT_EQ(g2[0].kv_bytes_per_token, 21 * 4096);
  EXPECT_EQ(m.kv_bytes_per_token_per_gpu(2), 42 * 4096);
  // tp = 16 > 8 KV heads: each GPU keeps one head's replica.
  EXPECT_EQ(layer_groups(m, 16)[1].kv_bytes_per_token, 21 * 2 * 1 * 256 * 2);
}

TEST(ModelLayerGroups, MllamaCrossAttentionByHand) {
  const ModelSpec m = model_preset("llama-3.2-11b-vision");
  ASSERT_NO_THROW(m.validate());
  const alloc::LayerGroups g = layer_groups(m, 1);
  ASSERT_EQ(g.size(), 2u);
  // One layer, one token: 2 · 8 · 128 · 2 = 4096 B; 4 tiles of 1601 encoder tokens.
  EXPECT_EQ(g[0], (LayerGroup{LayerGroupKind::kFull, 32, 32 * 4096, 0, 0, 0}));
  EXPECT_EQ(g[1], (LayerGroup{LayerGroupKind::kCrossAttention, 8, 8 * 4096, 0, 6404, 0}));
  EXPECT_EQ(m.kv_bytes_per_token(), 40 * 4096);
}

TEST(ModelLayerGroups, JambaRecurrentStateByHand) {
  const ModelSpec m = model_preset("jamba-v0.1");
  ASSERT_NO_THROW(m.validate());
  const alloc::LayerGroups g = layer_groups(m, 1);
  ASSERT_EQ(g.size(), 2u);
  // Per Mamba layer: d_inner 8192 · (d_conv − 1 = 3 + d_state 16) = 155,648 elements · 2 B.
  EXPECT_EQ(g[0], (LayerGroup{LayerGroupKind::kRecurrent, 28, 0, 0, 0, 28 * 155'648 * 2}));
  EXPECT_EQ(g[1], (LayerGroup{LayerGroupKind::kFull, 4, 4 * 4096, 0, 0, 0}));
  EXPECT_EQ(m.kv_bytes_per_token(), 4 * 4096);  // recurrent layers hold no per-token KV
  EXPECT_EQ(layer_groups(m, 2)[0].state_bytes, 28 * 77'824 * 2);
  // 12B active of 52B (Jamba paper, Table 1 / model card).
  EXPECT_NEAR(static_cast<double>(m.active_nonembedding_params() + m.embedding_params() + m.lm_head_params()) / 12.1e9,
              1.0, 0.02);
}

TEST(ModelLayerGroups, EveryHeterogeneousPresetValidatesAndSumsItsLayers) {
  for (std::string_view name : model_preset_names()) {
    SCOPED_TRACE(name);
    const ModelSpec m = model_preset(name);
    ASSERT_NO_THROW(m.validate());
    std::int64_t layers = 0;
    for (const LayerGroup& g : layer_groups(m, 1)) layers += g.layers;
    // An MLA model's indexer keys are a companion cache of the same layers (latent_attention.h).
    EXPECT_EQ(layers, m.layers * (m.mla.sparse() ? 2 : 1));
  }
  const ModelSpec scout = model_preset("llama-4-scout");
  const alloc::LayerGroups g = layer_groups(scout, 1);
  EXPECT_EQ(g[0], (LayerGroup{LayerGroupKind::kChunkedLocal, 36, 36 * 4096, 8192, 0, 0}));
  EXPECT_EQ(g[1].layers, 12);
  const ModelSpec oss = model_preset("gpt-oss-120b");
  EXPECT_EQ(layer_groups(oss, 1)[0], (LayerGroup{LayerGroupKind::kSlidingWindow, 18, 18 * 2 * 8 * 64 * 2, 128, 0, 0}));
  const ModelSpec g3 = model_preset("gemma-3-27b");
  EXPECT_EQ(layer_groups(g3, 1)[0].layers, 52);
  EXPECT_EQ(layer_groups(g3, 1)[0].window_tokens, 1024);
}

TEST(ModelLayerGroups, MoeActiveAndTotalParameters) {
  // Published: Llama 4 Scout 17B active (109B total with its image encoder); gpt-oss-120b
  // 5.13B active of 116.83B (its model card counts the unembedding but not the embedding in
  // the active parameters), checkpoint ~ 61 GiB with MXFP4 experts.
  const ModelSpec scout = model_preset("llama-4-scout");
  const double scout_active = static_cast<double>(scout.active_nonembedding_params() + scout.embedding_params() +
                                                  scout.lm_head_params());
  EXPECT_NEAR(scout_active / 17e9, 1.0, 0.03);
  EXPECT_NEAR(static_cast<double>(scout.parameter_count()) / 107.8e9, 1.0, 0.01);
  const ModelSpec oss = model_preset("gpt-oss-120b");
  const double oss_active =
      static_cast<double>(oss.active_nonembedding_params() + oss.lm_head_params());
  EXPECT_NEAR(oss_active / 5.13e9, 1.0, 0.03);
  EXPECT_NEAR(static_cast<double>(oss.weight_bytes()) / 65.3e9, 1.0, 0.03);
  // Dense models: active == total.
  const ModelSpec l3 = model_preset("llama-3-8b");
  EXPECT_EQ(l3.active_nonembedding_params(), l3.nonembedding_params());
  EXPECT_EQ(l3.nonembedding_weight_bytes(), 2 * l3.nonembedding_params());
}

TEST(ModelLayerGroups, KvDtypeSetsBytesPerTokenPerGroup) {
  ModelSpec m = model_preset("gemma-2-9b");
  m.kv_dtype = KvDtype::kFp8;  // 1 byte per element, per-tensor scales: 2 · 8 · 256 = 4096
  EXPECT_EQ(layer_groups(m, 1)[0].kv_bytes_per_token, 21 * 4096);
  EXPECT_EQ(m.kv_bytes_per_token(), 42 * 4096);
  m.kv_dtype = KvDtype::kInt4;  // 256 dims: 128 B of nibbles + 8 groups · 4 B = 160 per head
  EXPECT_EQ(layer_groups(m, 1)[0].kv_bytes_per_token, 21 * 2 * 8 * 160);
  m.kv_dtype = KvDtype::kBf16;
  EXPECT_EQ(m.kv_bytes_per_token(), 42 * 8192);
  ModelSpec l3 = model_preset("llama-3-8b");
  l3.kv_dtype = KvDtype::kInt4;  // 128 dims: 64 + 4 · 4 = 80 B per head
  EXPECT_EQ(l3.kv_bytes_per_token(), 2 * 32 * 8 * 80);
  EXPECT_EQ(kv_head_vector_bytes(KvDtype::kInt4, 128, 2), 80);
  EXPECT_EQ(kv_head_vector_bytes(KvDtype::kFp8, 128, 2), 128);
  EXPECT_EQ(kv_head_vector_bytes(KvDtype::kAuto, 128, 2), 256);
  // The recurrent state keeps the model dtype whatever the KV dtype.
  ModelSpec j = model_preset("jamba-v0.1");
  j.kv_dtype = KvDtype::kFp8;
  EXPECT_EQ(layer_groups(j, 1)[0].state_bytes, 28 * 155'648 * 2);
  EXPECT_EQ(layer_groups(j, 1)[1].kv_bytes_per_token, 4 * 2048);
}

void expect_invalid(const ModelSpec& m, const std::string& needle) {
  try {
    m.validate();
    ADD_FAILURE() << "expected CostModelError mentioning " << needle;
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(ModelLayerGroups, ValidateChecksGroups) {
  ModelSpec m = model_preset("gemma-2-9b");
  m.groups[0].window_tokens = 0;
  expect_invalid(m, "groups[0] (sliding_window, 21 layers): window_tokens is 0");
  m = model_preset("gemma-2-9b");
  m.groups[1].window_tokens = 5;
  expect_invalid(m, "groups[1] (full");
  m = model_preset("gemma-2-9b");
  m.groups[1].layers = 20;
  expect_invalid(m, "groups hold 41 layers, expected layers = 42");
  m = model_preset("gemma-2-9b");
  m.groups[0].kv_heads = 3;
  expect_invalid(m, "kv_heads 3 does not divide heads 16");
  m = model_preset("llama-3.2-11b-vision");
  m.groups[1].encoder_tokens = 0;
  expect_invalid(m, "encoder_tokens is 0, expected >= 1");
  m = model_preset("jamba-v0.1");
  m.groups[0].state_elements = 0;
  expect_invalid(m, "state_elements 0");
  m = model_preset("jamba-v0.1");
  m.groups[1].kind = LayerGroupKind::kRecurrent;
  m.groups[1].state_elements = 1;
  m.groups[1].mixer_params = 1;
  m.groups[1].kv_heads = 0;
  m.groups[1].head_dim = 0;
  expect_invalid(m, "no group attends");
  m = model_preset("gpt-oss-120b");
  m.active_experts = 200;
  expect_invalid(m, "active_experts 200");
  // Tensor parallelism checks every attending group's KV heads.
  m = model_preset("gemma-2-9b");
  m.groups[0].kv_heads = 4;  // divides 16 heads; tp 8 vs 4 heads: 8 % 4 == 0, fine
  EXPECT_NO_THROW(m.check_tensor_parallel(8));
  m.groups[0].kv_heads = 16;
  m.kv_heads = 16;
  EXPECT_THROW(m.check_tensor_parallel(3), CostModelError);
}

}  // namespace
}  // namespace pagesim::sim
