// Hugging Face config.json → ModelSpec: a custom model described by the configuration file its
// checkpoint ships (read offline; nothing is downloaded).
//
// The keys read, with Transformers' names (PretrainedConfig and the model types' configs):
//   num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads (absent: the
//   heads, as Transformers defaults it), head_dim (absent: hidden_size / heads),
//   intermediate_size (OPT: ffn_dim), vocab_size, max_position_embeddings, torch_dtype (or
//   dtype; float16/bfloat16: 2 bytes, float32: 4; absent: 2), tie_word_embeddings (absent:
//   false, except OPT's true).
//   Flavour: model_type "opt" is the OPT block (ReLU MLP, LayerNorm and biases, learned
//   positions of max_position_embeddings + 2 rows); every other type the Llama block (gated
//   MLP, RMSNorm, rotary), as model_spec.h describes Mistral, Gemma and gpt-oss.
//   Multimodal configs (Llama 4, Gemma 3, mllama) hold the decoder in text_config: read there.
//   Layer kinds: layer_types ("full_attention", "sliding_attention" with sliding_window;
//   gpt-oss, Gemma 3 in recent Transformers) gives the groups. A sliding_window without
//   layer_types is refused (which layers use the window is not in the file: describe the
//   model inline with `groups`), unless use_sliding_window is false (Qwen2).
//   MoE: num_local_experts (Mixtral, gpt-oss), n_routed_experts (DeepSeek) or num_experts
//   (Qwen-MoE) routed experts, num_experts_per_tok per token, n_shared_experts,
//   moe_intermediate_size (absent: intermediate_size, Mixtral), first_k_dense_replace dense
//   layers first (DeepSeek).
//   MLA: kv_lora_rank (present and not null) with q_lora_rank (null: 0), qk_nope_head_dim,
//   qk_rope_head_dim, v_head_dim and the indexer's index_n_heads, index_head_dim, index_topk;
//   head_dim is then qk_nope + qk_rope and kv_heads the heads (latent_attention.h).
//   Weights: quantization_config.quant_method "fp8" stores the blocks and experts in 1 byte
//   (DeepSeek-V3), "mxfp4" the experts in 17/32 bytes (gpt-oss); other methods are refused.
// Keys pagesim does not model (rope scaling, norms' epsilon, token ids) are ignored.
//
// Errors are HfConfigError naming the file and the key ("config.json: num_key_value_heads: 3
// does not divide num_attention_heads 32"); the returned spec has passed ModelSpec::validate().
// Stateless functions; safe from any thread.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "sim/cost/cost_error.h"
#include "sim/cost/model_spec.h"

namespace pagesim::sim {

// A config.json that cannot be read as a model: its message names the file and the key.
class HfConfigError : public CostModelError {
 public:
  HfConfigError(const std::string& file, const std::string& key, const std::string& message);
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// The ModelSpec of the config.json text `json`, named `name`. `file` names it in errors.
ModelSpec model_from_hf_config(std::string_view json, const std::string& file, std::string name);

// The same for the file at `path`. Throws HfConfigError when it cannot be opened.
ModelSpec read_hf_config(const std::filesystem::path& path, std::string name);

}  // namespace pagesim::sim
