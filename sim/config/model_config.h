// The `model` key of an experiment: a preset name (`model: llama-3-8b`, presets.h) or a map
// describing a custom model, in one of two ways:
//
//   model:                             model:
//     hf_config: my-model/config.json    name: tiny-llama
//     name: my-model   # optional        layers: 4
//                                        hidden: 512
//                                        heads: 8
//                                        kv_heads: 2      # absent: heads
//                                        head_dim: 64     # absent: hidden / heads (MLA:
//                                        ffn: 1408        #   qk_nope + qk_rope head dims)
//                                        vocab: 32000
//                                        max_seq_len: 4096
//
// hf_config names a Hugging Face config.json, read offline (hf_model_config.h), its path
// resolved as every input path (input_path.h: the experiment's folder, then the bundled data).
// The inline keys are ModelSpec's fields under their own names (model_spec.h: groups, MoE
// fields, an `mla` section of latent_attention.h's); the inline defaults are the Llama
// flavour's (gated_mlp true, linear_bias and tied_lm_head false, dtype_bytes 2). The two are
// exclusive. Either way the model passes the checks every preset passes (ModelSpec::validate,
// the tensor-parallel check) before a run starts. Without `name` a custom model is named after
// its config file (its folder for a file called config.json) or "custom".
// Plain values and pure functions (model_of reads the config.json file).
#pragma once

#include <string>

#include "sim/config/config_origin.h"
#include "sim/cost/model_spec.h"

namespace pagesim::sim {

struct CustomModelConfig {
  bool given = false;     // `model` is a map (false: a preset name)
  std::string hf_config;  // config.json path, portable form once resolved; "": inline
  ModelSpec spec = inline_defaults();  // the inline architecture (its name: the config's model)

  static ModelSpec inline_defaults() {
    ModelSpec m;
    m.gated_mlp = true;  // the Llama flavour: SwiGLU, RMSNorm, no biases, untied, rotary
    return m;
  }
  bool operator==(const CustomModelConfig&) const = default;
};

// The field list of a custom model's map (the reader, the writer, the key schema). `name` is
// the experiment's model name. `architecture`: visit the inline keys (the writer leaves them
// out for a model read from hf_config).
template <class V>
void visit_custom_model(V& v, std::string& name, CustomModelConfig& m, bool architecture = true) {
  v.field("name", name);
  v.field_omitted_at_default("hf_config", m.hf_config, std::string());
  if (!architecture) return;
  ModelSpec& s = m.spec;
  v.field("layers", s.layers);
  v.field("hidden", s.hidden);
  v.field("heads", s.heads);
  v.field("kv_heads", s.kv_heads);
  v.field("head_dim", s.head_dim);
  v.field("ffn", s.ffn);
  v.field("vocab", s.vocab);
  v.field("max_seq_len", s.max_seq_len);
  v.field("dtype_bytes", s.dtype_bytes);
  v.field("gated_mlp", s.gated_mlp);
  v.field("linear_bias", s.linear_bias);
  v.field("tied_lm_head", s.tied_lm_head);
  v.field("learned_positions", s.learned_positions);
  v.list("groups", s.groups, [](auto& e, ModelLayerGroup& g) {
    e.choice("kind", g.kind, alloc::kLayerGroupKindNames);
    e.field("layers", g.layers);
    e.field("kv_heads", g.kv_heads);
    e.field("head_dim", g.head_dim);
    e.field("window_tokens", g.window_tokens);
    e.field("encoder_tokens", g.encoder_tokens);
    e.field("state_elements", g.state_elements);
    e.field("mixer_params", g.mixer_params);
  });
  v.field("moe_layers", s.moe_layers);
  v.field("experts", s.experts);
  v.field("active_experts", s.active_experts);
  v.field("shared_experts", s.shared_experts);
  v.field("expert_ffn", s.expert_ffn);
  v.field("expert_weight_bytes", s.expert_weight_bytes);
  v.field("block_weight_bytes", s.block_weight_bytes);
  v.section_omitted_at_default("mla", !s.mla.enabled(), [&](auto& q) {
    q.field("q_lora_rank", s.mla.q_lora_rank);
    q.field("kv_lora_rank", s.mla.kv_lora_rank);
    q.field("qk_nope_head_dim", s.mla.qk_nope_head_dim);
    q.field("qk_rope_head_dim", s.mla.qk_rope_head_dim);
    q.field("v_head_dim", s.mla.v_head_dim);
    q.field("index_n_heads", s.mla.index_n_heads);
    q.field("index_head_dim", s.mla.index_head_dim);
    q.field("index_topk", s.mla.index_topk);
  });
}

// After parsing a map: refuses inline keys beside hf_config (ConfigError on the first),
// names an unnamed model, and fills kv_heads and head_dim left out. `name` is the
// experiment's model name. REQUIRES: m.given; origin holds the keys the file gave.
void complete_custom_model(std::string& name, CustomModelConfig& m, const ConfigOrigin& origin);

// The experiment's model: the preset `name`, or the custom model (read from hf_config,
// resolved by input_file(), or inline), validated. Throws CostModelError (HfConfigError for
// a config.json) naming what is wrong; the caller puts it on the key.
ModelSpec model_of(const std::string& name, const CustomModelConfig& m);

// The key an error of model_of() belongs on: "model.hf_config", or "model".
const char* model_error_key(const CustomModelConfig& m);

}  // namespace pagesim::sim
