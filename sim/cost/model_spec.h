// ModelSpec: the architecture numbers of a decoder-only transformer that the cost models and
// the KV-capacity derivation need, and the sizes derived from them.
//
// Two block flavours are covered: OPT (LayerNorm, biases, a two-matrix ReLU MLP, learned
// position embeddings, LM head tied to the token embedding) and Llama (RMSNorm, no biases, a
// gated three-matrix SwiGLU MLP, rotary positions, untied LM head, grouped-query attention).
// Named presets live in presets.h. A plain value type; derived sizes are computed on demand.
#pragma once

#include <cstdint>
#include <string>

namespace pagesim::sim {

struct ModelSpec {
  std::string name;                  // e.g. "opt-13b"; used in describe() and errors
  std::int64_t layers = 0;           // transformer blocks
  std::int64_t hidden = 0;           // model width (elements)
  std::int64_t heads = 0;            // query heads
  std::int64_t kv_heads = 0;         // key/value heads (== heads without GQA/MQA)
  std::int64_t head_dim = 0;         // elements per head
  std::int64_t ffn = 0;              // MLP intermediate width (elements)
  std::int64_t vocab = 0;            // vocabulary size (tokens)
  std::int64_t dtype_bytes = 2;      // bytes per weight and per KV element (fp16/bf16: 2)
  std::int64_t max_seq_len = 0;      // longest sequence the model accepts (tokens)
  bool gated_mlp = false;            // SwiGLU: gate, up and down matrices instead of up, down
  bool linear_bias = false;          // OPT-style biases on linear layers, LayerNorm (weight +
                                     // bias) instead of RMSNorm (weight only)
  bool tied_lm_head = false;         // LM head shares the token-embedding matrix
  std::int64_t learned_positions = 0;  // rows of a learned position embedding; 0 for rotary

  // Width of the concatenated query heads, and of the key (or value) heads (elements).
  std::int64_t q_width() const { return heads * head_dim; }
  std::int64_t kv_width() const { return kv_heads * head_dim; }

  // Parameters of one block's attention (q, k, v, o projections), MLP and norms.
  std::int64_t attention_params_per_layer() const;
  std::int64_t mlp_params_per_layer() const;
  std::int64_t norm_params_per_layer() const;
  std::int64_t params_per_layer() const;
  // Everything except token/position embeddings and the LM head: the blocks + the final norm.
  // These are the weights the linear layers read once per iteration.
  std::int64_t nonembedding_params() const;
  // Token embedding + learned position embedding.
  std::int64_t embedding_params() const;
  // The LM head matrix (hidden × vocab), counted here even when tied (it is still read).
  std::int64_t lm_head_params() const { return hidden * vocab; }
  // All distinct parameters (a tied LM head counts once, in the embedding).
  std::int64_t parameter_count() const;
  std::int64_t weight_bytes() const { return parameter_count() * dtype_bytes; }

  // KV of one token, all layers: 2 (K and V) · layers · kv_heads · head_dim · dtype_bytes.
  std::int64_t kv_bytes_per_token() const { return 2 * layers * kv_width() * dtype_bytes; }

  // Under tensor parallelism of degree tp: query heads per GPU (heads / tp) and KV heads per
  // GPU (kv_heads / tp, or 1 when tp > kv_heads: each GPU then holds a replica of one head).
  // REQUIRES: check_tensor_parallel(tp) passes.
  std::int64_t heads_per_gpu(int tp) const { return heads / tp; }
  std::int64_t kv_heads_per_gpu(int tp) const { return kv_heads >= tp ? kv_heads / tp : 1; }
  std::int64_t kv_bytes_per_token_per_gpu(int tp) const {
    return 2 * layers * kv_heads_per_gpu(tp) * head_dim * dtype_bytes;
  }

  // Throws CostModelError naming the first field that is not positive or not consistent
  // (heads % kv_heads, learned_positions < 0).
  void validate() const;
  // Throws CostModelError unless tp >= 1, tp divides heads, and tp divides kv_heads or
  // kv_heads divides tp.
  void check_tensor_parallel(int tp) const;
};

}  // namespace pagesim::sim
