// ModelSpec: the architecture numbers of a decoder-only transformer that the cost models and
// the KV-capacity derivation need, and the sizes derived from them.
//
// Two block flavours are covered: OPT (LayerNorm, biases, a two-matrix ReLU MLP, learned
// position embeddings, LM head tied to the token embedding) and Llama (RMSNorm, no biases, a
// gated three-matrix SwiGLU MLP, rotary positions, untied LM head, grouped-query attention).
// Gemma, Mistral, gpt-oss and Jamba are described in the Llama flavour (their extra norms,
// attention sinks and biases are a fraction of a percent of the parameters).
//
// Layer groups. A model whose layers all do full attention with kv_heads × head_dim leaves
// `groups` empty (every preset before heterogeneous KV). A model that mixes kinds (sliding
// window, chunked local, cross-attention, recurrent state; see allocator/layer_group.h)
// lists one ModelLayerGroup per kind, layers summing to `layers`; layer_groups(model, tp)
// turns them into the allocators' per-GPU alloc::LayerGroups.
//
// Mixture of experts: moe_layers of the blocks replace the dense MLP by `experts` routed
// experts of width expert_ffn (each token goes through active_experts of them and through
// shared_experts always-on ones). Compute counts active parameters, weight bytes count all
// (active_nonembedding_params vs nonembedding_params / weight_bytes).
//
// Latent attention (mla.enabled(): DeepSeek-V2/V3/R1/V3.2, Kimi-K2): every layer caches one
// latent vector and one rope key per token instead of K and V per head, the same on every
// tensor-parallel rank (latent_attention.h); with an indexer (DeepSeek-V3.2) a second per-token
// cache of index keys besides. `groups` stays empty; layer_groups() gives the allocators one
// kFull group for the latent cache and, with an indexer, a second kFull group for its keys (a
// companion cache of the same layers, not more layers). heads, kv_heads (= heads) and head_dim
// (= qk_nope_head_dim + qk_rope_head_dim) describe the queries; the attention parameters are
// MLA's projections (q_a/q_b or q, kv_a, kv_b, o, and the indexer's).
//
// KV precision: kv_dtype (kv_dtype.h) sets the bytes of each head's K and V vector.
// Named presets live in presets.h. A plain value type; derived sizes are computed on demand.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "allocator/layer_group.h"
#include "sim/cost/kv_dtype.h"
#include "sim/cost/latent_attention.h"

namespace pagesim::sim {

// One kind of layer of a model as its configuration describes it: per layer, before tensor
// parallelism. alloc::LayerGroup (layer_groups) is the same group per GPU, in bytes.
struct ModelLayerGroup {
  alloc::LayerGroupKind kind = alloc::LayerGroupKind::kFull;
  std::int64_t layers = 0;          // layers of this kind (>= 1)
  std::int64_t kv_heads = 0;        // key/value heads of each layer; 0 for kRecurrent
  std::int64_t head_dim = 0;        // elements per head; 0 for kRecurrent
  std::int64_t window_tokens = 0;   // W (kSlidingWindow) or C (kChunkedLocal) tokens; else 0
  std::int64_t encoder_tokens = 0;  // kCrossAttention: encoder keys per request; else 0
  std::int64_t state_elements = 0;  // kRecurrent: state of one layer for one sequence
                                    // (elements of dtype_bytes, split over tensor parallelism;
                                    // Mamba: d_inner·(d_conv − 1) conv + d_inner·d_state SSM)
  std::int64_t mixer_params = 0;    // kRecurrent: parameters of one layer's mixer (it replaces
                                    // the q, k, v, o projections); else 0

  bool attends() const { return kind != alloc::LayerGroupKind::kRecurrent; }
  bool operator==(const ModelLayerGroup&) const = default;
};

// MXFP4 (OCP microscaling): 32 4-bit values share one 8-bit scale, 17 bytes per 32 weights.
inline constexpr double kMxfp4WeightBytes = 17.0 / 32.0;

struct ModelSpec {
  std::string name;                  // e.g. "opt-13b"; used in describe() and errors
  std::int64_t layers = 0;           // transformer blocks
  std::int64_t hidden = 0;           // model width (elements)
  std::int64_t heads = 0;            // query heads
  std::int64_t kv_heads = 0;         // key/value heads (== heads without GQA/MQA)
  std::int64_t head_dim = 0;         // elements per head
  std::int64_t ffn = 0;              // dense MLP intermediate width (elements)
  std::int64_t vocab = 0;            // vocabulary size (tokens)
  std::int64_t dtype_bytes = 2;      // bytes per weight and per KV element (fp16/bf16: 2)
  std::int64_t max_seq_len = 0;      // longest sequence the model accepts (tokens)
  bool gated_mlp = false;            // SwiGLU: gate, up and down matrices instead of up, down
  bool linear_bias = false;          // OPT-style biases on linear layers, LayerNorm (weight +
                                     // bias) instead of RMSNorm (weight only)
  bool tied_lm_head = false;         // LM head shares the token-embedding matrix
  std::int64_t learned_positions = 0;  // rows of a learned position embedding; 0 for rotary

  // Heterogeneous layers: empty = all `layers` full attention with kv_heads × head_dim.
  std::vector<ModelLayerGroup> groups;
  // KV cache number format (kAuto: dtype_bytes per element, as before kv_dtype existed).
  KvDtype kv_dtype = KvDtype::kAuto;
  // Multi-head latent attention and the sparse indexer (kv_lora_rank 0: none).
  LatentAttention mla;

  // Mixture of experts (all 0 for a dense model).
  std::int64_t moe_layers = 0;       // blocks whose MLP is a mixture of experts
  std::int64_t experts = 0;          // routed experts per MoE block
  std::int64_t active_experts = 0;   // routed experts each token goes through (top-k)
  std::int64_t shared_experts = 0;   // experts every token goes through besides (Llama 4: 1)
  std::int64_t expert_ffn = 0;       // intermediate width of one expert (elements)
  double expert_weight_bytes = 0;    // bytes per expert weight; 0 = dtype_bytes (gpt-oss
                                     // ships its experts in MXFP4: kMxfp4WeightBytes)
  bool expert_biases = false;        // each expert's gate/up and down projections carry biases
                                     // (gpt-oss); left out of the parameter counts (~0.1%),
                                     // priced where an engine stores them (vllm_kv_budget.h)
  double block_weight_bytes = 0;     // bytes per weight of the blocks outside the experts
                                     // (attention, dense MLPs, routers, norms); 0 = dtype_bytes
                                     // (DeepSeek-V3 ships them in fp8: 1). Embedding and LM
                                     // head stay at dtype_bytes.

  // Every field equal (a custom model read from config.json against a preset, replicas).
  bool operator==(const ModelSpec&) const = default;

  // Width of the concatenated query heads, and of the key (or value) heads (elements).
  std::int64_t q_width() const { return heads * head_dim; }
  std::int64_t kv_width() const { return kv_heads * head_dim; }

  // The groups as listed, or the one kFull group of a uniform model (empty `groups`).
  std::vector<ModelLayerGroup> layer_groups_or_uniform() const;
  // Layers that attend (every group but kRecurrent).
  std::int64_t attention_layers() const;

  // Parameters of one block's attention (q, k, v, o projections, with the model-level
  // kv_heads and head_dim), dense MLP and norms.
  std::int64_t attention_params_per_layer() const;
  std::int64_t mlp_params_per_layer() const;
  std::int64_t norm_params_per_layer() const;
  std::int64_t params_per_layer() const;
  // One expert's MLP, and one MoE block's router (hidden × experts).
  std::int64_t expert_params() const;
  std::int64_t router_params() const { return hidden * experts; }
  // Everything except token/position embeddings and the LM head: the blocks + the final norm,
  // every expert counted. These are the weights the linear layers read once per iteration.
  std::int64_t nonembedding_params() const;
  // The same with only active_experts + shared_experts experts per MoE block: the weights one
  // token's forward pass multiplies (== nonembedding_params for a dense model).
  std::int64_t active_nonembedding_params() const;
  // Parameters of all experts together (0 for a dense model).
  std::int64_t all_expert_params() const;
  // Token embedding + learned position embedding.
  std::int64_t embedding_params() const;
  // The LM head matrix (hidden × vocab), counted here even when tied (it is still read).
  std::int64_t lm_head_params() const { return hidden * vocab; }
  // All distinct parameters (a tied LM head counts once, in the embedding).
  std::int64_t parameter_count() const;
  // Bytes of all weights: dtype_bytes each, experts at expert_weight_bytes when set.
  std::int64_t weight_bytes() const;
  // The non-embedding weights' bytes (what the linear layers read per iteration).
  std::int64_t nonembedding_weight_bytes() const;

  // K + V of one token in one layer of a group with `kv_heads_per_layer` heads (bytes, in
  // kv_dtype with its scales).
  std::int64_t kv_bytes_per_token_per_layer(std::int64_t kv_heads_per_layer,
                                            std::int64_t group_head_dim) const {
    return 2 * kv_heads_per_layer * kv_head_vector_bytes(kv_dtype, group_head_dim, dtype_bytes);
  }

  // Latent attention: the latent cache and the index keys of one token, over all layers.
  std::int64_t latent_kv_bytes_per_token() const;
  std::int64_t index_kv_bytes_per_token() const;

  // KV of one token as a uniform paged allocator charges it: every attending layer stores
  // the token as a full-attention layer, at the widest per-layer KV of any attending group;
  // recurrent layers store none (their state is per sequence). This is how vLLM sized pages
  // before its hybrid allocator (vllm-project/vllm#11382: one page size for all layers, every
  // layer holding every token). A uniform model: 2 · layers · kv_heads · head_dim ·
  // dtype_bytes, as it always was. Latent attention: latent + index keys over the layers
  // (one block table holds both, as vLLM's single KV cache group of DeepSeek-V3.2 does).
  std::int64_t kv_bytes_per_token() const;

  // Under tensor parallelism of degree tp: query heads per GPU (heads / tp) and KV heads per
  // GPU (kv_heads / tp, or 1 when tp > kv_heads: each GPU then holds a replica of one head).
  // REQUIRES: check_tensor_parallel(tp) passes.
  std::int64_t heads_per_gpu(int tp) const { return heads / tp; }
  std::int64_t kv_heads_per_gpu(int tp) const { return kv_heads_per_gpu(kv_heads, tp); }
  static std::int64_t kv_heads_per_gpu(std::int64_t group_kv_heads, int tp) {
    return group_kv_heads >= tp ? group_kv_heads / tp : 1;
  }
  // kv_bytes_per_token on one GPU (a latent cache is whole on every GPU).
  std::int64_t kv_bytes_per_token_per_gpu(int tp) const;

  // Throws CostModelError naming the first field that is not positive or not consistent
  // (heads % kv_heads, learned_positions < 0, a group's fields for its kind, group layers
  // not summing to layers, MoE fields, MLA dimensions, a kv_dtype MLA is not stored in), or
  // sizes so large that a size derived from them could overflow (check_sizes_fit).
  void validate() const;
  // Throws CostModelError unless tp >= 1, tp divides heads, and tp divides kv_heads (of every
  // attending group) or kv_heads divides tp.
  void check_tensor_parallel(int tp) const;

 private:
  void validate_latent() const;
  void check_sizes_fit() const;
};

// The model's layer groups per GPU under tensor parallelism tp, in the allocators' terms
// (latent attention: the latent cache's kFull group, then the index keys' when there is an
// indexer, neither split by tp):
// kv_bytes_per_token over the group's layers in kv_dtype, state_bytes over its layers in
// dtype_bytes (each GPU holds 1/tp of the state, rounded up). A uniform model gives one kFull
// group whose kv_bytes_per_token == kv_bytes_per_token_per_gpu(tp).
// REQUIRES: model.validate() and model.check_tensor_parallel(tp) pass.
alloc::LayerGroups layer_groups(const ModelSpec& model, int tp);

}  // namespace pagesim::sim
