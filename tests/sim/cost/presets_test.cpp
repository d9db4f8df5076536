#include "sim/cost/presets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "sim/cost/cost_error.h"
#include "sim/cost/kv_capacity.h"
#include "sim/cost/kv_dtype.h"

namespace pagesim::sim {
namespace {

TEST(CostPresets, KvBytesPerTokenOfEveryModel) {
  const struct {
    const char* name;
    std::int64_t kv_bytes;
  } expected[] = {
      {"opt-13b", 2 * 40 * 40 * 128 * 2},      // 819,200 B = 800 KB (DESIGN.md)
      {"opt-66b", 2 * 64 * 72 * 128 * 2},      // 2,359,296
      {"opt-175b", 2 * 96 * 96 * 128 * 2},     // 4,718,592
      {"llama-2-7b", 2 * 32 * 32 * 128 * 2},   // 524,288
      {"llama-2-13b", 2 * 40 * 40 * 128 * 2},  // 819,200
      {"llama-2-70b", 2 * 80 * 8 * 128 * 2},   // 327,680 (GQA, 8 KV heads)
      {"llama-3-8b", 2 * 32 * 8 * 128 * 2},    // 131,072
      {"llama-3-70b", 2 * 80 * 8 * 128 * 2},   // 327,680
      {"yi-6b", 2 * 32 * 4 * 128 * 2},        // 65,536
      {"yi-34b", 2 * 60 * 8 * 128 * 2},       // 245,760
      {"codellama-34b", 2 * 48 * 8 * 128 * 2},     // 196,608
      {"llama-3.1-8b", 2 * 32 * 8 * 128 * 2},      // 131,072
      {"llama-3.1-70b", 2 * 80 * 8 * 128 * 2},     // 327,680
      {"llama-3.1-405b", 2 * 126 * 8 * 128 * 2},   // 516,096
      {"mistral-nemo-12b", 2 * 40 * 8 * 128 * 2},  // 163,840 (head_dim 128, not 5120 / 32)
      {"qwen2.5-7b", 2 * 28 * 4 * 128 * 2},        // 57,344
      {"qwen3-14b", 2 * 40 * 8 * 128 * 2},         // 163,840
      {"mixtral-8x7b", 2 * 32 * 8 * 128 * 2},      // 131,072 (MoE, full attention)
      {"mixtral-8x22b", 2 * 56 * 8 * 128 * 2},     // 229,376
      {"llama-3.2-1b", 2 * 16 * 8 * 64 * 2},       // 32,768 (a draft model)
      {"qwen2.5-0.5b", 2 * 24 * 2 * 64 * 2},       // 12,288 (a draft model)
  };
  // The presets above have one full-attention group; 9 others (gemma-2-9b ... jamba-v0.1,
  // llama-4-scout-fp8) have layer groups (model_layer_groups_test.cpp) and 5 latent attention
  // (deepseek-v3 ... kimi-k2: latent_attention_test.cpp).
  ASSERT_EQ(model_preset_names().size(), std::size(expected) + 9 + 5);
  for (const auto& e : expected) {
    SCOPED_TRACE(e.name);
    const ModelSpec m = model_preset(e.name);
    EXPECT_EQ(m.name, e.name);
    EXPECT_NO_THROW(m.validate());
    EXPECT_EQ(m.kv_bytes_per_token(), e.kv_bytes);
    EXPECT_EQ(m.kv_bytes_per_token_per_gpu(1), e.kv_bytes);
  }
  EXPECT_EQ(model_preset("opt-13b").kv_bytes_per_token(), 819'200);
  EXPECT_EQ(model_preset("opt-13b").kv_bytes_per_token(), 800 * 1024);
}

TEST(CostPresets, ArchitectureNumbers) {
  const ModelSpec opt = model_preset("opt-175b");
  EXPECT_EQ(opt.hidden, 12288);
  EXPECT_EQ(opt.ffn, 4 * opt.hidden);
  EXPECT_EQ(opt.vocab, 50272);
  EXPECT_EQ(opt.max_seq_len, 2048);
  EXPECT_TRUE(opt.tied_lm_head && opt.linear_bias && !opt.gated_mlp);
  EXPECT_EQ(opt.learned_positions, 2050);
  const ModelSpec l3 = model_preset("llama-3-8b");
  EXPECT_EQ(l3.kv_heads, 8);
  EXPECT_EQ(l3.ffn, 14336);
  EXPECT_EQ(l3.vocab, 128256);
  EXPECT_EQ(l3.max_seq_len, 8192);
  EXPECT_TRUE(l3.gated_mlp && !l3.linear_bias && !l3.tied_lm_head);
  EXPECT_EQ(l3.learned_positions, 0);
  for (std::string_view name : model_preset_names()) {
    const ModelSpec m = model_preset(name);
    // Gemma, gpt-oss and Mistral-Nemo have heads · head_dim != hidden.
    // MLA's query heads are qk_nope + qk_rope wide, not hidden / heads.
    if (!m.groups.empty() || m.mla.enabled() || name == "mistral-nemo-12b") continue;
    EXPECT_EQ(m.heads * m.head_dim, m.hidden) << name;
  }
  const ModelSpec l31 = model_preset("llama-3.1-70b");
  EXPECT_EQ(l31.max_seq_len, 131072);
  EXPECT_EQ(l31.ffn, 28672);
  EXPECT_EQ(model_preset("codellama-34b").max_seq_len, 16384);
  EXPECT_EQ(model_preset("qwen3-14b").max_seq_len, 40960);
  const ModelSpec qwen = model_preset("qwen2.5-7b");
  EXPECT_EQ(qwen.vocab, 152064);
  EXPECT_TRUE(qwen.gated_mlp && !qwen.linear_bias && !qwen.tied_lm_head);
  // The draft models tie their LM head to the embedding: Llama-3.2-1B has 1.24B parameters
  // (its model card), Qwen2.5-0.5B 0.49B (0.49B in its model card, biases left out).
  const ModelSpec l1 = model_preset("llama-3.2-1b");
  EXPECT_TRUE(l1.tied_lm_head && l1.gated_mlp);
  EXPECT_NEAR(static_cast<double>(l1.parameter_count()), 1.236e9, 0.005e9);
  const ModelSpec q05 = model_preset("qwen2.5-0.5b");
  EXPECT_TRUE(q05.tied_lm_head);
  EXPECT_NEAR(static_cast<double>(q05.parameter_count()), 0.494e9, 0.005e9);
}

// Mistral-Nemo: head_dim 128 with hidden 5120 and 32 heads. The q and o projections are
// 5120 × 4096 (heads · head_dim), k and v 5120 × 1024; hidden / heads = 160 would give
// 65,536,000 per layer instead of 52,428,800 and 12.77B in all instead of 12.25B.
TEST(CostPresets, MistralNemoSizesItsHeadsByHeadDim) {
  const ModelSpec m = model_preset("mistral-nemo-12b");
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_NE(m.heads * m.head_dim, m.hidden);
  EXPECT_EQ(m.q_width(), 4096);
  EXPECT_EQ(m.kv_width(), 1024);
  EXPECT_EQ(m.attention_params_per_layer(), 5120 * 4096 + 2 * 5120 * 1024 + 4096 * 5120);
  // 40 · (52,428,800 attention + 3 · 5120 · 14336 MLP + 2 · 5120 norms) + 5120 final norm
  // + 2 · 131072 · 5120 (embedding, untied head).
  EXPECT_EQ(m.parameter_count(), std::int64_t{12'247'782'400});
  // The published size (model card and Hugging Face page: 12.2B parameters).
  EXPECT_NEAR(static_cast<double>(m.parameter_count()) / 12.2e9, 1.0, 0.005);
  EXPECT_EQ(m.kv_bytes_per_token_per_gpu(2), 2 * 40 * 4 * 128 * 2);
}

// Parameter counts against the published sizes (Hugging Face model cards), within 0.5%.
TEST(CostPresets, ParameterCountsMatchPublishedSizes) {
  const struct {
    const char* name;
    double params;
  } published[] = {
      {"opt-13b", 12.85e9},     {"opt-175b", 175e9},    {"llama-2-7b", 6.74e9},
      {"llama-2-13b", 13.02e9}, {"llama-2-70b", 68.98e9}, {"llama-3-8b", 8.03e9},
      {"llama-3-70b", 70.55e9},
      // With layer groups / MoE (published totals; text models only: Llama 4 Scout's 109B and
      // Gemma 3's 27B include their image encoders, ~1.3% and ~1.6%, so they sit at 2%).
      {"gemma-2-9b", 9.24e9},   {"gemma-2-27b", 27.2e9},  {"ministral-8b", 8.02e9},
      {"jamba-v0.1", 51.6e9},   {"gpt-oss-120b", 116.8e9}, {"yi-6b", 6.06e9},
      {"yi-34b", 34.39e9},
      // Published: CodeLlama 34B 33.7B; Llama 3.1 8.03B and 70.6B; Mistral-Nemo 12.2B; Qwen2.5-7B
      // 7.61B and Qwen3-14B 14.8B (their model cards).
      {"codellama-34b", 33.7e9},  {"llama-3.1-8b", 8.03e9}, {"llama-3.1-70b", 70.6e9},
      {"mistral-nemo-12b", 12.2e9}, {"qwen2.5-7b", 7.61e9}, {"qwen3-14b", 14.8e9},
  };
  for (const auto& p : published) {
    const ModelSpec m = model_preset(p.name);
    const double n = static_cast<double>(m.parameter_count());
    std::printf("%-17s params %.4g  weights %.4g GB  KV/token %lld B\n", p.name, n,
                static_cast<double>(m.weight_bytes()) / 1e9,
                static_cast<long long>(m.kv_bytes_per_token()));
    EXPECT_NEAR(n / p.params, 1.0, 0.005) << p.name << " has " << n;
    if (m.expert_weight_bytes == 0) {
      EXPECT_EQ(m.weight_bytes(), 2 * m.parameter_count());
    }
  }
  // OPT-13B weights: the paper's 26 GB.
  EXPECT_NEAR(static_cast<double>(model_preset("opt-13b").weight_bytes()) / 1e9, 25.7, 0.1);
}

// The tensor-parallel degrees each preset is served at validate: TP divides the query heads
// and divides or is divided by the KV heads.
TEST(CostPresets, TensorParallelDegreesThePresetsAreServedAt) {
  const struct {
    const char* name;
    std::initializer_list<int> tps;
  } served[] = {
      {"codellama-34b", {1, 2, 4, 8}}, {"llama-3.1-8b", {1, 2}},     {"llama-3.1-70b", {4, 8}},
      {"mistral-nemo-12b", {1, 2, 4}}, {"qwen2.5-7b", {1, 2, 4}},    {"qwen3-14b", {1, 2, 4, 8}},
  };
  for (const auto& s : served) {
    const ModelSpec m = model_preset(s.name);
    for (int tp : s.tps) {
      SCOPED_TRACE(std::string(s.name) + " tp " + std::to_string(tp));
      EXPECT_NO_THROW(m.check_tensor_parallel(tp));
      EXPECT_EQ(m.kv_bytes_per_token_per_gpu(tp) * std::min<std::int64_t>(tp, m.kv_heads), m.kv_bytes_per_token());
    }
  }
  // Qwen2.5-7B's 28 query heads do not split 8 ways.
  EXPECT_THROW(model_preset("qwen2.5-7b").check_tensor_parallel(8), CostModelError);
}

// Mixture of experts: total and active parameters (active = the blocks with active_experts
// + shared_experts experts, the embedding and the LM head) against the published sizes:
// Mixtral 8x7B 46.7B / 12.9B and 8x22B 141B / 39B (Mistral's announcements), Llama 4 Scout
// 109B / 17B (its model card; 109B includes the image encoder, ~1.2B, so 2%).
TEST(CostPresets, MixtureOfExpertsTotalAndActiveParameters) {
  const struct {
    const char* name;
    double total, active;
  } published[] = {
      {"mixtral-8x7b", 46.7e9, 12.9e9},
      {"mixtral-8x22b", 141e9, 39e9},
      {"llama-4-scout-fp8", 109e9, 17e9},
  };
  for (const auto& p : published) {
    SCOPED_TRACE(p.name);
    const ModelSpec m = model_preset(p.name);
    const double total = static_cast<double>(m.parameter_count());
    const double active =
        static_cast<double>(m.active_nonembedding_params() + m.embedding_params() + m.lm_head_params());
    std::printf("%-17s params %.4g  active %.4g  weights %.4g GB\n", p.name, total, active,
                static_cast<double>(m.weight_bytes()) / 1e9);
    EXPECT_NEAR(total / p.total, 1.0, 0.02) << total;
    EXPECT_NEAR(active / p.active, 1.0, 0.02) << active;
  }
}

// llama-4-scout-fp8: llama-4-scout's architecture with its experts at 1 byte per weight; the
// rest of the weights, the activations and the KV cache stay bf16.
TEST(CostPresets, ScoutFp8HalvesTheExpertBytesOnly) {
  const ModelSpec bf16 = model_preset("llama-4-scout");
  const ModelSpec fp8 = model_preset("llama-4-scout-fp8");
  EXPECT_EQ(fp8.parameter_count(), bf16.parameter_count());
  EXPECT_EQ(fp8.active_nonembedding_params(), bf16.active_nonembedding_params());
  EXPECT_EQ(fp8.groups.size(), bf16.groups.size());
  EXPECT_EQ(fp8.dtype_bytes, 2);
  EXPECT_EQ(fp8.kv_dtype, KvDtype::kAuto);
  EXPECT_DOUBLE_EQ(fp8.expert_weight_bytes, 1.0);
  // KV bytes unchanged: 48 attending layers · 2 · 8 · 128 · 2 as a uniform allocator charges.
  EXPECT_EQ(fp8.kv_bytes_per_token(), 48 * 2 * 8 * 128 * 2);
  EXPECT_EQ(fp8.kv_bytes_per_token(), bf16.kv_bytes_per_token());
  for (int tp : {1, 2, 4, 8}) EXPECT_EQ(layer_groups(fp8, tp), layer_groups(bf16, tp)) << tp;
  // 48 layers · 17 experts · 3 · 5120 · 8192 = 102.7B expert weights at 1 byte, the other
  // 5.05B (attention, router, norms, embedding, LM head) at 2.
  const std::int64_t experts = fp8.all_expert_params();
  EXPECT_EQ(experts, std::int64_t{48} * 17 * 3 * 5120 * 8192);
  EXPECT_EQ(fp8.weight_bytes(), experts + 2 * (fp8.parameter_count() - experts));
  EXPECT_NEAR(static_cast<double>(fp8.weight_bytes()) / 1e9, 112.86, 0.01);
  EXPECT_EQ(bf16.weight_bytes(), 2 * bf16.parameter_count());
  // Served at TP 2 on H100s (80 GB) the bf16 weights do not fit, the fp8 ones do.
  const GpuSpec h100 = gpu_preset("h100-sxm");
  for (int tp : {2, 4, 8}) EXPECT_NO_THROW(fp8.check_tensor_parallel(tp)) << tp;
  EXPECT_THROW(kv_capacity(bf16, h100, 2), CostModelError);
  EXPECT_GT(kv_capacity(fp8, h100, 2).slots, 100'000);
}

TEST(CostPresets, MixtralArchitecture) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  EXPECT_TRUE(m.groups.empty());  // sliding_window null: every layer full attention
  EXPECT_EQ(m.moe_layers, 32);
  EXPECT_EQ(m.experts, 8);
  EXPECT_EQ(m.active_experts, 2);
  EXPECT_EQ(m.shared_experts, 0);
  EXPECT_EQ(m.expert_ffn, 14336);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.max_seq_len, 32768);
  EXPECT_TRUE(m.gated_mlp && !m.linear_bias && !m.tied_lm_head);
  EXPECT_EQ(m.weight_bytes(), 2 * m.parameter_count());  // bf16 experts too
  EXPECT_NO_THROW(m.check_tensor_parallel(2));
  EXPECT_EQ(m.kv_bytes_per_token_per_gpu(2), 65'536);
  const ModelSpec big = model_preset("mixtral-8x22b");
  EXPECT_EQ(big.moe_layers, 56);
  EXPECT_EQ(big.expert_ffn, 16384);
  EXPECT_EQ(big.max_seq_len, 65536);
  for (int tp : {4, 8}) EXPECT_NO_THROW(big.check_tensor_parallel(tp)) << tp;
  EXPECT_EQ(big.kv_bytes_per_token_per_gpu(8), 2 * 56 * 1 * 128 * 2);
}

// The presets fit the GPUs at the degrees they are served at (H100 80GB, 0.9 of its memory):
// the weights per GPU leave room for KV.
TEST(CostPresets, ServedDegreesLeaveRoomForKv) {
  const GpuSpec h100 = gpu_preset("h100-sxm");
  const struct {
    const char* name;
    int tp;
  } served[] = {{"mixtral-8x7b", 2}, {"mixtral-8x22b", 4}, {"llama-3.1-70b", 4},
                {"codellama-34b", 2}, {"qwen3-14b", 1},     {"mistral-nemo-12b", 1}};
  for (const auto& s : served) {
    const KvCapacity c = kv_capacity(model_preset(s.name), h100, s.tp);
    EXPECT_GT(c.slots, 100'000) << s.name << " tp " << s.tp << ": " << c.slots;
  }
}

TEST(CostPresets, GpuDatasheetNumbers) {
  const GpuSpec a40 = gpu_preset("a100-40gb");
  EXPECT_DOUBLE_EQ(a40.peak_flops, 312e12);
  EXPECT_DOUBLE_EQ(a40.hbm_bytes_per_s, 1.555e12);
  EXPECT_DOUBLE_EQ(a40.pcie_bytes_per_s, 25e9);
  EXPECT_EQ(a40.hbm_bytes, std::int64_t{40536} << 20);
  EXPECT_DOUBLE_EQ(gpu_preset("a100-80gb").hbm_bytes_per_s, 2.039e12);
  EXPECT_DOUBLE_EQ(gpu_preset("h100-sxm").peak_flops, 989e12);
  EXPECT_DOUBLE_EQ(gpu_preset("h100-sxm").hbm_bytes_per_s, 3.35e12);
  EXPECT_DOUBLE_EQ(gpu_preset("h200").hbm_bytes_per_s, 4.8e12);
  EXPECT_DOUBLE_EQ(gpu_preset("h200").pcie_bytes_per_s, 50e9);
  // L40S: 48 GB GDDR6 as the driver reports it, dense bf16 (not the 733 TFLOP/s with
  // sparsity), PCIe gen4 for host copies and, without NVLink, for peer-to-peer.
  const GpuSpec l40s = gpu_preset("l40s");
  EXPECT_EQ(l40s.hbm_bytes, std::int64_t{46068} << 20);
  EXPECT_DOUBLE_EQ(l40s.peak_flops, 362.05e12);
  EXPECT_DOUBLE_EQ(l40s.hbm_bytes_per_s, 864e9);
  EXPECT_DOUBLE_EQ(l40s.pcie_bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(l40s.nvlink_bytes_per_s, l40s.pcie_bytes_per_s);
  // Llama-3.1-8B fits one L40S with room for KV.
  EXPECT_GT(kv_capacity(model_preset("llama-3.1-8b"), l40s, 1).slots, 100'000);
  for (std::string_view name : gpu_preset_names()) {
    const GpuSpec g = gpu_preset(name);
    EXPECT_EQ(g.name, name);
    EXPECT_NO_THROW(g.validate()) << name;
    EXPECT_DOUBLE_EQ(g.compute_efficiency, gpu_defaults::kComputeEfficiency);
    EXPECT_DOUBLE_EQ(g.memory_efficiency, gpu_defaults::kMemoryEfficiency);
  }
}

TEST(CostPresets, UnknownNameListsValidNames) {
  try {
    (void)model_preset("opt-14b");
    FAIL() << "expected CostModelError";
  } catch (const CostModelError& e) {
    // 35 names on one line helped no one (issue 41): the close ones, and where all are listed.
    const std::string what = e.what();
    EXPECT_NE(what.find("'opt-14b'"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean opt-13b, opt-66b or opt-175b? (`pagesim presets` lists them)"), std::string::npos)
        << what;
    EXPECT_EQ(what.find("llama-3-8b"), std::string::npos) << what;
  }
  try {
    (void)gpu_preset("v100");
    FAIL() << "expected CostModelError";
  } catch (const CostModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'v100'"), std::string::npos) << what;
    EXPECT_NE(what.find("a100-40gb, a100-80gb, h100-sxm, h200, l40s"), std::string::npos) << what;
  }
}

TEST(CostPresets, ValidateNamesTheBadField) {
  ModelSpec m = model_preset("llama-2-70b");
  m.kv_heads = 7;
  EXPECT_THROW(m.validate(), CostModelError);
  m = model_preset("llama-2-70b");
  m.vocab = 0;
  try {
    m.validate();
    FAIL();
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab"), std::string::npos) << e.what();
  }
  GpuSpec g = gpu_preset("h200");
  g.memory_efficiency = 1.5;
  try {
    g.validate();
    FAIL();
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("memory_efficiency"), std::string::npos) << e.what();
  }
  g = gpu_preset("h200");
  g.iteration_overhead_seconds = -1;
  EXPECT_THROW(g.validate(), CostModelError);
}

TEST(CostPresets, TensorParallelSplitsKvHeads) {
  const ModelSpec m = model_preset("llama-2-70b");  // 64 heads, 8 KV heads
  EXPECT_NO_THROW(m.check_tensor_parallel(8));
  EXPECT_EQ(m.kv_heads_per_gpu(2), 4);
  EXPECT_EQ(m.kv_heads_per_gpu(8), 1);
  EXPECT_EQ(m.kv_heads_per_gpu(16), 1);  // replicated KV head
  EXPECT_EQ(m.kv_bytes_per_token_per_gpu(4), m.kv_bytes_per_token() / 4);
  EXPECT_THROW(m.check_tensor_parallel(3), CostModelError);
  EXPECT_THROW(m.check_tensor_parallel(0), CostModelError);
  const ModelSpec opt = model_preset("opt-66b");  // 72 heads
  EXPECT_NO_THROW(opt.check_tensor_parallel(8));
  EXPECT_THROW(opt.check_tensor_parallel(16), CostModelError);
}

}  // namespace
}  // namespace pagesim::sim
