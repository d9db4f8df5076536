// ProfileGrid: the points `pagesim profile` measures, one list per part of the profile CSV
// (sim/cost/profile_cost_model.h), and the GEMM shapes of a model's linear layers.
//
// Parts and what is run at each point (tensor parallel 1, fp16, the model's head counts):
//   linear        x = tokens N: one layer's GEMMs (qkv, o_proj, mlp_up, mlp_down) on N rows;
//                 in an MoE layer qkv and o_proj only (its MLP is the moe part)
//   moe           x = tokens N (MoE models only, the linear points): one fused-MoE layer,
//                 routing and experts (moe_layer_shape), N · top-k assignments spread evenly
//                 over the experts (moe_expert_tokens)
//   attn_prefill  x = query-key pairs of a composition: n fresh prompts of L tokens each
//                 (no history), pairs = n · L(L+1)/2 (BatchShape::prefill_attention_pairs)
//   attn_decode   x = sequences s, y = context c: s sequences of c tokens, one query each
//   lm_head       x = sampled sequences S: the LM-head GEMM on S rows
//   swap          x = blocks, y = block size: every layer's K and V of that many blocks
// Prefill compositions: first single prompts (n = 1) of L = 16, 32, ... while their pairs
// stay below the first full batch; then full batches of prefill_tokens tokens (n =
// prefill_tokens / L, L = 16 ... prefill_tokens); then single prompts longer than
// prefill_tokens, up to max_context. Their pairs are strictly increasing, as the CSV needs.
//
// Pure functions of (model, options); no CUDA. Plain value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost/model_spec.h"

namespace pagesim::sim {

struct ProfileGridOptions {
  std::int64_t max_tokens = 8192;      // largest `linear` point (tokens in one iteration)
  std::int64_t prefill_tokens = 2048;  // tokens of one full prefill batch (vLLM paper: 2560
                                       // batched tokens at most); power of two recommended
  std::int64_t max_decode_seqs = 256;  // largest decode batch and `lm_head` point (sequences)
  std::int64_t max_context = 0;        // longest decode context and prompt (tokens);
                                       // 0: the model's max_seq_len
  std::int32_t block_size = 16;        // KV block size of the attention timings (tokens)
  std::int64_t max_swap_blocks = 256;  // largest `swap` point (blocks)
  std::vector<std::int64_t> swap_block_sizes = {8, 16, 32};  // `swap` y values (tokens)
};

struct PrefillComposition {
  std::int64_t seqs = 0;       // n prompts
  std::int64_t query_len = 0;  // L tokens each, no cached history
  // Causal query-key pairs: n · L(L+1)/2.
  double pairs() const {
    return static_cast<double>(seqs) * static_cast<double>(query_len) * static_cast<double>(query_len + 1) / 2;
  }
  std::int64_t tokens() const { return seqs * query_len; }
};

struct ProfileGrid {
  std::vector<std::int64_t> linear_tokens;        // strictly increasing
  std::vector<std::int64_t> moe_tokens;           // strictly increasing; empty for a dense model
  std::vector<PrefillComposition> prefill;        // pairs strictly increasing
  std::vector<std::int64_t> decode_seqs;          // strictly increasing
  std::vector<std::int64_t> decode_contexts;      // strictly increasing
  std::vector<std::int64_t> lm_head_seqs;         // strictly increasing
  std::vector<std::int64_t> swap_blocks;          // strictly increasing
  std::vector<std::int64_t> swap_block_sizes;     // strictly increasing

  std::size_t num_points() const;
};

// 1, 2, 4, ... up to `hi` (and `hi` itself when it is not a power of two), from `lo` (a
// power of two). REQUIRES: 1 <= lo <= hi.
std::vector<std::int64_t> powers_of_two(std::int64_t lo, std::int64_t hi);

// Throws CostModelError naming the option when a setting is out of range (non-positive
// sizes, prefill_tokens < 16, a block size that is not a power of two in [1, 1024], swap
// block sizes not positive), the model is invalid, or its experts or blocks are stored at
// other than dtype_bytes per weight (the profile times fp16 GEMMs: gpt-oss's MXFP4 experts,
// fp8 presets).
ProfileGrid make_profile_grid(const ModelSpec& model, const ProfileGridOptions& options);

// One GEMM of a linear layer: out[rows, n] = in[rows, k] · W^T with W [n, k] (PyTorch's
// nn.Linear layout).
struct GemmShape {
  std::string name;
  std::int64_t k = 0;  // input features
  std::int64_t n = 0;  // output features
};

// One transformer layer's GEMMs at tensor parallel 1: qkv (hidden -> q + 2 kv widths),
// o_proj (q width -> hidden), mlp_up (hidden -> ffn, or 2 ffn for a gated MLP: gate and up
// fused), mlp_down (ffn -> hidden).
std::vector<GemmShape> layer_gemms(const ModelSpec& model);
// The first two of layer_gemms: qkv and o_proj, what an MoE layer runs outside its MoE block.
std::vector<GemmShape> attention_gemms(const ModelSpec& model);

// One MoE block at tensor parallel 1, as vLLM's FusedMoE runs it (moe_layer_shape):
//   router      hidden -> experts, on every token (vLLM mixtral.py MixtralMoE.gate)
//   top-k       softmax over the experts' logits, the top_k largest, renormalised
//   per expert  gate_up hidden -> 2 expert_ffn (expert_ffn without a gated MLP), the
//               activation (SiLU(gate) x up), down expert_ffn -> hidden, on its tokens
//   combine     each token's top_k outputs summed, weighted by their router weights
//   shared      with shared experts, one dense MLP of shared_experts x expert_ffn on every
//               token (vLLM llama4.py Llama4MoE.shared_expert; DeepSeek's likewise)
struct MoeLayerShape {
  GemmShape router;                // hidden -> experts
  GemmShape expert_gate_up;        // one expert's hidden -> (2) expert_ffn
  GemmShape expert_down;           // one expert's expert_ffn -> hidden
  std::int64_t experts = 0;        // routed experts
  std::int64_t top_k = 0;          // routed experts per token
  bool gated = true;               // SiLU(gate) x up; else the activation alone
  std::vector<GemmShape> shared;   // shared_gate_up, shared_down; empty without shared experts
};
// REQUIRES: model.moe_layers > 0.
MoeLayerShape moe_layer_shape(const ModelSpec& model);

// Tokens of each of `experts` experts when `tokens` tokens each pick `top_k` of them and the
// tokens · top_k assignments spread evenly: assignment a (token a / top_k) goes to expert
// a mod experts, so every expert gets floor or ceil(tokens · top_k / experts) and a token's
// top_k experts are distinct. Experts with no token (tokens · top_k < experts) get 0.
// REQUIRES: tokens >= 0, 1 <= top_k <= experts.
std::vector<std::int64_t> moe_expert_tokens(std::int64_t tokens, std::int64_t top_k, std::int64_t experts);
// The LM head: hidden -> vocab.
GemmShape lm_head_gemm(const ModelSpec& model);

}  // namespace pagesim::sim
