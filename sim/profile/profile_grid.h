// ProfileGrid: the points `pagesim profile` measures, one list per part of the profile CSV
// (sim/cost/profile_cost_model.h), and the GEMM shapes of a model's linear layers.
//
// Parts and what is run at each point (tensor parallel 1, fp16, the model's head counts):
//   linear        x = tokens N: one layer's GEMMs (qkv, o_proj, mlp_up, mlp_down) on N rows
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
// block sizes not positive) or the model is invalid.
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
// The LM head: hidden -> vocab.
GemmShape lm_head_gemm(const ModelSpec& model);

}  // namespace pagesim::sim
