// The profile's grid and GEMM shapes: pure functions of the model preset and the options.
#include "sim/profile/profile_grid.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {
namespace {

template <class T>
bool strictly_increasing(const std::vector<T>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (!(v[i - 1] < v[i])) return false;
  }
  return true;
}

TEST(ProfileGrid, PowersOfTwo) {
  EXPECT_EQ(powers_of_two(1, 8), (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(powers_of_two(1, 10), (std::vector<std::int64_t>{1, 2, 4, 8, 10}));
  EXPECT_EQ(powers_of_two(16, 16), (std::vector<std::int64_t>{16}));
  EXPECT_EQ(powers_of_two(1, 1), (std::vector<std::int64_t>{1}));
}

TEST(ProfileGrid, Opt13bDefaults) {
  const ProfileGrid g = make_profile_grid(model_preset("opt-13b"), {});
  EXPECT_EQ(g.linear_tokens.front(), 1);
  EXPECT_EQ(g.linear_tokens.back(), 8192);
  EXPECT_EQ(g.linear_tokens.size(), 14u);
  EXPECT_EQ(g.decode_seqs, powers_of_two(1, 256));
  EXPECT_EQ(g.decode_contexts, (std::vector<std::int64_t>{16, 32, 64, 128, 256, 512, 1024, 2048}));  // max_seq_len
  EXPECT_EQ(g.lm_head_seqs, powers_of_two(1, 256));
  EXPECT_EQ(g.swap_blocks, powers_of_two(1, 256));
  EXPECT_EQ(g.swap_block_sizes, (std::vector<std::int64_t>{8, 16, 32}));
  EXPECT_EQ(g.num_points(), 14u + g.prefill.size() + 9u * 8u + 9u + 9u * 3u);
}

TEST(ProfileGrid, PrefillCompositionsHaveIncreasingPairs) {
  const ProfileGrid g = make_profile_grid(model_preset("opt-13b"), {});
  ASSERT_FALSE(g.prefill.empty());
  std::vector<double> pairs;
  for (const PrefillComposition& c : g.prefill) {
    pairs.push_back(c.pairs());
    EXPECT_GE(c.seqs, 1);
    EXPECT_LE(c.tokens(), 2048);
    EXPECT_LE(c.query_len, 2048);
  }
  EXPECT_TRUE(strictly_increasing(pairs));
  // Single short prompts first, then full 2048-token batches, the last one a single prompt.
  EXPECT_EQ(g.prefill.front().seqs, 1);
  EXPECT_EQ(g.prefill.front().query_len, 16);
  EXPECT_DOUBLE_EQ(g.prefill.front().pairs(), 136);
  bool saw_full = false;
  for (const PrefillComposition& c : g.prefill) saw_full = saw_full || (c.seqs == 128 && c.query_len == 16);
  EXPECT_TRUE(saw_full);
  EXPECT_EQ(g.prefill.back().seqs, 1);
  EXPECT_EQ(g.prefill.back().query_len, 2048);
}

TEST(ProfileGrid, LongContextModelAddsLongPrompts) {
  ProfileGridOptions o;
  o.prefill_tokens = 2560;  // not a power of two: n = floor(2560 / L)
  const ProfileGrid g = make_profile_grid(model_preset("llama-3-8b"), o);  // max_seq_len 8192
  EXPECT_EQ(g.decode_contexts.back(), 8192);
  std::vector<double> pairs;
  for (const PrefillComposition& c : g.prefill) pairs.push_back(c.pairs());
  EXPECT_TRUE(strictly_increasing(pairs));
  EXPECT_EQ(g.prefill.back().query_len, 8192);
  EXPECT_EQ(g.prefill.back().seqs, 1);
  o.max_context = 3000;  // not a power of two: the longest prompt is max_context itself
  const ProfileGrid h = make_profile_grid(model_preset("llama-3-8b"), o);
  EXPECT_EQ(h.decode_contexts.back(), 3000);
  EXPECT_EQ(h.prefill.back().query_len, 3000);
}

TEST(ProfileGrid, MixtureOfExpertsGetsMoePointsAtTheLinearTokens) {
  const ProfileGrid dense = make_profile_grid(model_preset("llama-3-8b"), {});
  EXPECT_TRUE(dense.moe_tokens.empty());
  ProfileGridOptions o;
  o.max_tokens = 1000;
  const ProfileGrid g = make_profile_grid(model_preset("mixtral-8x7b"), o);
  EXPECT_EQ(g.moe_tokens, g.linear_tokens);
  EXPECT_EQ(g.moe_tokens.back(), 1000);
  ProfileGrid without_moe = g;
  without_moe.moe_tokens.clear();
  EXPECT_EQ(g.num_points(), without_moe.num_points() + g.moe_tokens.size());
}

TEST(ProfileGrid, MoeLayerShapeIsTheFusedMoEBlock) {
  const MoeLayerShape mixtral = moe_layer_shape(model_preset("mixtral-8x7b"));
  EXPECT_EQ(mixtral.router.k, 4096);
  EXPECT_EQ(mixtral.router.n, 8);
  EXPECT_EQ(mixtral.expert_gate_up.k, 4096);
  EXPECT_EQ(mixtral.expert_gate_up.n, 2 * 14336);  // gate and up fused (w13)
  EXPECT_EQ(mixtral.expert_down.k, 14336);
  EXPECT_EQ(mixtral.expert_down.n, 4096);
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.top_k, 2);
  EXPECT_TRUE(mixtral.gated);
  EXPECT_TRUE(mixtral.shared.empty());
  const MoeLayerShape scout = moe_layer_shape(model_preset("llama-4-scout"));
  ASSERT_EQ(scout.shared.size(), 2u);  // one shared expert of width 8192
  EXPECT_EQ(scout.shared[0].k, 5120);
  EXPECT_EQ(scout.shared[0].n, 2 * 8192);
  EXPECT_EQ(scout.shared[1].k, 8192);
  EXPECT_EQ(scout.shared[1].n, 5120);
  EXPECT_EQ(scout.top_k, 1);
  const std::vector<GemmShape> attn = attention_gemms(model_preset("mixtral-8x7b"));
  ASSERT_EQ(attn.size(), 2u);
  EXPECT_EQ(attn[0].name, "qkv");
  EXPECT_EQ(attn[0].n, 4096 + 2 * 1024);
  EXPECT_EQ(attn[1].name, "o_proj");
}

TEST(ProfileGrid, MoeExpertTokensSpreadAssignmentsEvenly) {
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(moe_expert_tokens(0, 2, 8), V(8, 0));
  EXPECT_EQ(moe_expert_tokens(1, 2, 8), (V{1, 1, 0, 0, 0, 0, 0, 0}));  // two distinct experts
  EXPECT_EQ(moe_expert_tokens(5, 2, 8), (V{2, 2, 1, 1, 1, 1, 1, 1}));  // 10 = 8 + 2
  EXPECT_EQ(moe_expert_tokens(8192, 2, 8), V(8, 2048));
  EXPECT_EQ(moe_expert_tokens(3, 1, 16)[2], 1);
  for (const std::int64_t n : {1, 7, 100, 4097}) {
    const V per = moe_expert_tokens(n, 2, 8);
    std::int64_t sum = 0;
    for (const std::int64_t t : per) {
      sum += t;
      EXPECT_LE(t, (n * 2 + 7) / 8);  // ceil(N · top_k / E) at most
    }
    EXPECT_EQ(sum, n * 2);
  }
}

TEST(ProfileGrid, RefusesExpertsOrBlocksOfOtherWeightBytes) {
  // gpt-oss ships its experts in MXFP4; the profile times fp16 GEMMs.
  try {
    make_profile_grid(model_preset("gpt-oss-120b"), {});
    FAIL() << "expected a CostModelError";
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("gpt-oss-120b"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0.53125"), std::string::npos) << e.what();
  }
}

TEST(ProfileGrid, RejectsBadOptions) {
  const ModelSpec m = model_preset("opt-13b");
  ProfileGridOptions o;
  o.block_size = 12;
  EXPECT_THROW(make_profile_grid(m, o), CostModelError);
  o = {};
  o.max_tokens = 0;
  EXPECT_THROW(make_profile_grid(m, o), CostModelError);
  o = {};
  o.prefill_tokens = 8;
  EXPECT_THROW(make_profile_grid(m, o), CostModelError);
  o = {};
  o.swap_block_sizes = {};
  EXPECT_THROW(make_profile_grid(m, o), CostModelError);
  o.swap_block_sizes = {0, 16};
  EXPECT_THROW(make_profile_grid(m, o), CostModelError);
  o = {};
  o.swap_block_sizes = {32, 16, 16};
  EXPECT_EQ(make_profile_grid(m, o).swap_block_sizes, (std::vector<std::int64_t>{16, 32}));
}

TEST(ProfileGrid, GemmShapes) {
  const std::vector<GemmShape> opt = layer_gemms(model_preset("opt-13b"));
  ASSERT_EQ(opt.size(), 4u);
  EXPECT_EQ(opt[0].name, "qkv");
  EXPECT_EQ(opt[0].k, 5120);
  EXPECT_EQ(opt[0].n, 3 * 5120);
  EXPECT_EQ(opt[1].k, 5120);
  EXPECT_EQ(opt[1].n, 5120);
  EXPECT_EQ(opt[2].n, 20480);  // ReLU MLP: up only
  EXPECT_EQ(opt[3].k, 20480);
  const std::vector<GemmShape> llama = layer_gemms(model_preset("llama-2-70b"));
  EXPECT_EQ(llama[0].n, 8192 + 2 * 8 * 128);  // GQA: 8 KV heads
  EXPECT_EQ(llama[2].n, 2 * 28672);           // gated: gate and up fused
  EXPECT_EQ(llama[3].k, 28672);
  EXPECT_EQ(lm_head_gemm(model_preset("llama-3-8b")).n, 128256);
  EXPECT_EQ(lm_head_gemm(model_preset("llama-3-8b")).k, 4096);
}

}  // namespace
}  // namespace pagesim::sim
