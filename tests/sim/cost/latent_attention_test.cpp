// Latent attention (MLA) and DeepSeek-V3.2's indexer: the presets' KV bytes per token beside
// the figures their sources give, the identities the cache keeps (whole on every tensor-
// parallel rank; latent + index keys = the uniform charge), refusals that name the field, and
// the roofline's and operators model's MLA terms (sanity, not measured times).
#include "sim/cost/latent_attention.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/cost/cost_error.h"
#include "sim/cost/kv_capacity.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/operators_cost_model.h"
#include "sim/cost/presets.h"
#include "sim/cost/roofline_cost_model.h"

namespace pagesim::sim {
namespace {

using alloc::LayerGroupKind;

ModelSpec with_dtype(std::string_view name, KvDtype dtype) {
  ModelSpec m = model_preset(name);
  m.kv_dtype = dtype;
  return m;
}

// Per layer and token, the sources' figures:
//   DeepSeek-V2 (arXiv 2405.04434, Table 1): MLA caches (d_c + d_h^R) = 512 + 64 = 576
//   elements per layer, 1152 bytes in bf16;
//   vLLM FlashMLA (flashmla_sparse.py): fp8_ds_mla is 656 bytes = 512 + 16 + 128;
//   vLLM's DeepseekV32IndexerCache: 128 + 128 / 128 · 4 = 132 bytes of index key;
//   dense MLA in fp8 (FlashMLA / vLLM kv_cache_dtype fp8): 576 bytes, per-tensor scale.
TEST(LatentAttention, BytesPerLayerAsTheEnginesStoreThem) {
  const LatentAttention v3 = model_preset("deepseek-v3").mla;
  const LatentAttention v32 = model_preset("deepseek-v3.2-exp").mla;
  EXPECT_EQ(latent_bytes_per_token_per_layer(v3, KvDtype::kAuto, 2), 1152);
  EXPECT_EQ(latent_bytes_per_token_per_layer(v3, KvDtype::kBf16, 2), 1152);
  EXPECT_EQ(latent_bytes_per_token_per_layer(v3, KvDtype::kFp8, 2), 576);
  EXPECT_EQ(latent_bytes_per_token_per_layer(v32, KvDtype::kFp8, 2), 656);
  EXPECT_EQ(latent_bytes_per_token_per_layer(v32, KvDtype::kFp8, 2), 512 + 4 * 4 + 64 * 2);
  EXPECT_EQ(index_key_bytes_per_token_per_layer(v32), 132);
  EXPECT_EQ(index_key_bytes_per_token_per_layer(v3), 0);
  EXPECT_EQ(kFlashMlaPageTokens, 64);
}

// Every new preset's KV per token (all layers), beside the figure its source gives.
TEST(LatentAttention, PresetKvBytesPerTokenMatchTheSources) {
  const struct {
    const char* name;
    KvDtype dtype;
    std::int64_t bytes;
  } expected[] = {
      {"deepseek-v3", KvDtype::kAuto, 61 * 1152},                // 70,272
      {"deepseek-r1", KvDtype::kAuto, 61 * 1152},                // 70,272
      {"deepseek-v3", KvDtype::kFp8, 61 * 576},                  // 35,136
      {"kimi-k2", KvDtype::kAuto, 61 * 1152},                    // 70,272
      {"deepseek-v2-lite", KvDtype::kAuto, 27 * 1152},           // 31,104
      {"deepseek-v3.2-exp", KvDtype::kAuto, 61 * (1152 + 132)},  // 78,324
      {"deepseek-v3.2-exp", KvDtype::kFp8, 61 * (656 + 132)},    // 48,068
  };
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const ModelSpec m = with_dtype(e.name, e.dtype);
    ASSERT_NO_THROW(m.validate());
    EXPECT_EQ(m.kv_bytes_per_token(), e.bytes);
  }
  // DeepSeek-V2's paper: MLA's cache is 4% of the same model's MHA cache (2 · 128 heads ·
  // 128 head_dim per layer and token against 576).
  const ModelSpec v3 = model_preset("deepseek-v3");
  EXPECT_LT(static_cast<double>(v3.kv_bytes_per_token()) / (2.0 * 61 * 128 * 128 * 2), 0.036);
}

// Tensor parallelism splits heads and weights, never the latent cache or the index keys
// (vLLM: one KV head for MLA on every rank). The groups are the latent's and the index keys'.
TEST(LatentAttention, TensorParallelismDoesNotSplitTheCache) {
  for (const char* name : {"deepseek-v3", "deepseek-v3.2-exp", "kimi-k2", "deepseek-v2-lite"}) {
    SCOPED_TRACE(name);
    const ModelSpec m = model_preset(name);
    for (int tp : {1, 2, 4, 8, 16}) {
      if (m.heads % tp != 0) continue;
      EXPECT_EQ(m.kv_bytes_per_token_per_gpu(tp), m.kv_bytes_per_token());
      std::int64_t sum = 0;
      for (const alloc::LayerGroup& g : layer_groups(m, tp)) {
        EXPECT_EQ(g.kind, LayerGroupKind::kFull);
        EXPECT_EQ(g.layers, m.layers);
        sum += g.kv_bytes_per_token;
      }
      EXPECT_EQ(sum, m.kv_bytes_per_token());  // latent + index keys = what one table holds
    }
  }
  const alloc::LayerGroups g = layer_groups(with_dtype("deepseek-v3.2-exp", KvDtype::kFp8), 8);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].kv_bytes_per_token, 61 * 656);
  EXPECT_EQ(g[1].kv_bytes_per_token, 61 * 132);
  // A GQA model's per-GPU KV shrinks with tp; DeepSeek-V3's stays: at tp 8 its latent costs
  // a GPU more per token than Llama-3.1-405B's 8-way split K and V.
  const ModelSpec llama = model_preset("llama-3.1-405b");
  EXPECT_EQ(llama.kv_bytes_per_token_per_gpu(8), llama.kv_bytes_per_token() / 8);
  EXPECT_GT(model_preset("deepseek-v3").kv_bytes_per_token_per_gpu(8), llama.kv_bytes_per_token_per_gpu(8));
}

// Parameter counts against the model cards: DeepSeek-V3 671B (without its 14B MTP module),
// 37B activated; DeepSeek-V2-Lite 15.7B; Kimi-K2 1.04T total, 32B activated.
TEST(LatentAttention, ParameterCountsMatchPublishedSizes) {
  const ModelSpec v3 = model_preset("deepseek-v3");
  EXPECT_NEAR(static_cast<double>(v3.parameter_count()) / 671e9, 1.0, 0.005);
  EXPECT_NEAR(static_cast<double>(v3.active_nonembedding_params() + v3.embedding_params() + v3.lm_head_params()) / 37e9,
              1.0, 0.03);
  EXPECT_NEAR(static_cast<double>(model_preset("deepseek-v2-lite").parameter_count()) / 15.7e9, 1.0, 0.005);
  EXPECT_NEAR(static_cast<double>(model_preset("kimi-k2").parameter_count()) / 1.04e12, 1.0, 0.02);
  // fp8 blocks and experts, bf16 embedding and LM head: 671B weights ≈ 673 GB.
  EXPECT_EQ(v3.weight_bytes(), v3.nonembedding_params() + (v3.parameter_count() - v3.nonembedding_params()) * 2);
  // It fits 8 H200s with room for KV, not 8 H100s.
  EXPECT_GT(kv_capacity(v3, gpu_preset("h200"), 8, {.block_size = 64}).slots, 500'000);
  EXPECT_THROW((void)kv_capacity(v3, gpu_preset("h100-sxm"), 8, {.block_size = 64}), CostModelError);
}

TEST(LatentAttention, ValidateNamesTheField) {
  auto message = [](const ModelSpec& m) {
    try {
      m.validate();
    } catch (const CostModelError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ModelSpec m = with_dtype("deepseek-v3", KvDtype::kInt4);
  EXPECT_NE(message(m).find("kv_dtype int4"), std::string::npos) << message(m);
  m = model_preset("deepseek-v3");
  m.mla.qk_rope_head_dim = 0;
  EXPECT_NE(message(m).find("mla.qk_rope_head_dim is 0"), std::string::npos) << message(m);
  m = model_preset("deepseek-v3.2-exp");
  m.mla.index_topk = 0;
  EXPECT_NE(message(m).find("index_topk 0"), std::string::npos) << message(m);
  m = model_preset("deepseek-v3");
  m.groups = model_preset("gemma-2-9b").groups;
  EXPECT_NE(message(m).find("expected none"), std::string::npos) << message(m);
}

// The roofline's MLA terms. Decode is absorbed MQA over the latent: its memory term reads
// every latent byte on every GPU, so tp 8 leaves it as it is while it divides a GQA model's.
TEST(LatentAttention, RooflineReadsTheWholeLatentOnEveryGpu) {
  BatchShape decode;
  for (int i = 0; i < 64; ++i) decode.add_decode_seq(8192);
  const ModelSpec v3 = model_preset("deepseek-v3");
  const RooflineBreakdown one = RooflineCostModel(v3, gpu_preset("h200"), 1).breakdown(decode);
  const RooflineBreakdown eight = RooflineCostModel(v3, gpu_preset("h200"), 8).breakdown(decode);
  const double bw = gpu_preset("h200").achieved_hbm_bytes_per_s();
  const double latent_read = (64.0 * 8192 + 64) * static_cast<double>(v3.kv_bytes_per_token()) / bw;
  EXPECT_GT(eight.decode_attention.memory_seconds, latent_read);
  EXPECT_LT(eight.decode_attention.memory_seconds, 1.01 * latent_read);  // + 64 queries, small
  EXPECT_GT(one.decode_attention.memory_seconds, eight.decode_attention.memory_seconds);
  // Absorbed: 2 · 128 heads · (576 + 512) FLOPs per latent key of 1152 bytes, per layer.
  EXPECT_NEAR(one.decode_attention.compute_seconds,
              64.0 * 8192 * 2 * 61 * 128 * (576 + 512) / gpu_preset("h200").achieved_flops(), 1e-12);
  EXPECT_NEAR(eight.decode_attention.compute_seconds, one.decode_attention.compute_seconds / 8, 1e-12);

  const ModelSpec llama = model_preset("llama-3.1-405b");
  const double l1 = RooflineCostModel(llama, gpu_preset("h200"), 1).breakdown(decode).decode_attention.memory_seconds;
  const double l8 = RooflineCostModel(llama, gpu_preset("h200"), 8).breakdown(decode).decode_attention.memory_seconds;
  EXPECT_NEAR(l8 / l1, 1.0 / 8, 0.01);
}

// Prefill is naive (per-head K and V up-projected from the latent): more FLOPs per pair than
// absorbed decode's per key, 2·Hq·(192 + 128) against 2·Hq·(576 + 512)... per layer; and a
// cached prefix costs its up-projection.
TEST(LatentAttention, RooflinePricesNaivePrefillAndTheCachedPrefix) {
  const RooflineCostModel r(model_preset("deepseek-v3"), gpu_preset("h200"), 8);
  BatchShape fresh, after_hit;
  fresh.add_prefill_chunk(2048, 0, true);
  after_hit.add_prefill_chunk(2048, 4096, true);
  const RooflineBreakdown a = r.breakdown(fresh), b = r.breakdown(after_hit);
  const double flops = gpu_preset("h200").achieved_flops();
  EXPECT_NEAR(a.prefill_attention.compute_seconds, fresh.prefill_attention_pairs * 2 * 61 * 16 * (192 + 128) / flops,
              1e-12);
  EXPECT_NEAR(b.prefill_attention.compute_seconds,
              (after_hit.prefill_attention_pairs * 2 * 61 * 16 * (192 + 128) + 4096.0 * 2 * 61 * 512 * 16 * 256) / flops,
              1e-12);
  EXPECT_GT(b.total_seconds(), a.total_seconds());
}

// DeepSeek-V3.2's sparse attention reads at most index_topk latent keys per query; its indexer
// scores every key. At a long context it costs less than V3's dense attention, at a short one
// (below topk) the indexer makes it cost more.
TEST(LatentAttention, SparseAttentionCapsTheKeysAtTopk) {
  const RooflineCostModel v3(model_preset("deepseek-v3"), gpu_preset("h200"), 8);
  const RooflineCostModel v32(model_preset("deepseek-v3.2-exp"), gpu_preset("h200"), 8);
  BatchShape long_ctx, short_ctx;
  for (int i = 0; i < 32; ++i) long_ctx.add_decode_seq(65536);
  for (int i = 0; i < 32; ++i) short_ctx.add_decode_seq(1024);
  EXPECT_LT(v32.breakdown(long_ctx).decode_attention.seconds(), 0.5 * v3.breakdown(long_ctx).decode_attention.seconds());
  EXPECT_GT(v32.breakdown(short_ctx).decode_attention.seconds(), v3.breakdown(short_ctx).decode_attention.seconds());
}

// cost.kind operators: MLA's projections from the GEMM table, the MoE layers from the fused-MoE
// table (DeepSeek-V3's shape is measured), the attention from the roofline, said in describe().
TEST(LatentAttention, OperatorsModelPricesMlaAttentionFromItsTables) {
  OperatorsCostParams s;
  s.tables = default_operator_tables();
  s.gpu = "h200_sxm";
  const ModelSpec v3 = model_preset("deepseek-v3");
  const OperatorsCostModel ops(v3, gpu_preset("h200"), 8, s);
  EXPECT_NE(ops.describe().find("mla attention from the tables"), std::string::npos) << ops.describe();
  EXPECT_EQ(ops.describe().find("moe from the measured shape"), std::string::npos);  // measured, not transferred
  BatchShape b;
  b.add_prefill_chunk(1024, 0, true);
  for (int i = 0; i < 16; ++i) b.add_decode_seq(4096);
  const OperatorsBreakdown o = ops.breakdown(b);
  // Grid points of h200_sxm/vllm-0.14.0 (bf16 latents, 128 heads / tp 8 = 16 per GPU), 61 layers:
  // context_mla 1 x 1024 tokens 154.4160 us; generation_mla 16 sequences x 4096 latents 128.4053 us.
  EXPECT_NEAR(o.context_attention_seconds, 61 * 154.4160e-6, 1e-9);
  EXPECT_NEAR(o.generation_attention_seconds, 61 * 128.4053e-6, 1e-9);
  EXPECT_GT(o.gemm_seconds, 0);
  EXPECT_GT(o.moe_seconds, 0);
  EXPECT_GT(o.allreduce_seconds, 0);
}

TEST(LatentAttention, OperatorsModelPricesSparseMlaByTheRoofline) {
  OperatorsCostParams s;
  s.tables = default_operator_tables();
  s.gpu = "h200_sxm";
  const ModelSpec v32 = model_preset("deepseek-v3.2-exp");
  const OperatorsCostModel ops(v32, gpu_preset("h200"), 8, s);
  EXPECT_NE(ops.describe().find("mla attention priced by the roofline (DeepSeek-V3.2's sparse attention"),
            std::string::npos)
      << ops.describe();
  BatchShape b;
  b.add_prefill_chunk(1024, 0, true);
  for (int i = 0; i < 16; ++i) b.add_decode_seq(4096);
  const OperatorsBreakdown o = ops.breakdown(b);
  const RooflineBreakdown r = RooflineCostModel(v32, gpu_preset("h200"), 8).breakdown(b);
  EXPECT_DOUBLE_EQ(o.context_attention_seconds, r.prefill_attention.seconds());
  EXPECT_DOUBLE_EQ(o.generation_attention_seconds, r.decode_attention.seconds());
  // Without the tables' operator, kv_b is a GEMM of its own: more GEMM time than V3's at the
  // same batch (same projections otherwise, plus the indexer's).
  const OperatorsCostModel v3(model_preset("deepseek-v3"), gpu_preset("h200"), 8, s);
  EXPECT_GT(o.gemm_seconds, v3.breakdown(b).gemm_seconds);
}

}  // namespace
}  // namespace pagesim::sim
