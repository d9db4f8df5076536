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
  v.field("name", "the custom model's name (default: custom, or config.json's folder)", name);
  v.field_omitted_at_default("hf_config", "a Hugging Face config.json to read the architecture from (offline)",
                             m.hf_config, std::string());
  if (!architecture) return;
  ModelSpec& s = m.spec;
  v.field("layers", "transformer blocks", s.layers);
  v.field("hidden", "model width, elements", s.hidden);
  v.field("heads", "query heads", s.heads);
  v.field("kv_heads", "key/value heads (== heads without GQA/MQA)", s.kv_heads);
  v.field("head_dim", "elements per head", s.head_dim);
  v.field("ffn", "dense MLP intermediate width, elements", s.ffn);
  v.field("vocab", "vocabulary size, tokens", s.vocab);
  v.field("max_seq_len", "longest sequence the model accepts, tokens", s.max_seq_len);
  v.field("dtype_bytes", "bytes per weight and per KV element (fp16/bf16: 2)", s.dtype_bytes);
  v.field("gated_mlp", "SwiGLU: gate, up and down matrices", s.gated_mlp);
  v.field("linear_bias", "OPT-style biases on linear layers and LayerNorm", s.linear_bias);
  v.field("tied_lm_head", "the LM head shares the token embedding", s.tied_lm_head);
  v.field("learned_positions", "rows of a learned position embedding (0: rotary)", s.learned_positions);
  v.list("groups", "layer groups of a heterogeneous model (empty: all full attention)",
         s.groups, [](auto& e, ModelLayerGroup& g) {
    e.choice("kind", "the group's attention kind", g.kind, alloc::kLayerGroupKindNames);
    e.field("layers", "layers of the group", g.layers);
    e.field("kv_heads", "KV heads of the group's layers", g.kv_heads);
    e.field("head_dim", "head size of the group's layers, elements", g.head_dim);
    e.field("window_tokens", "sliding_window / chunked_local: tokens attended", g.window_tokens);
    e.field("encoder_tokens", "cross_attention: encoder keys per request", g.encoder_tokens);
    e.field("state_elements", "recurrent: state elements of one layer per sequence", g.state_elements);
    e.field("mixer_params", "recurrent: parameters of one layer's mixer", g.mixer_params);
  });
  v.field("moe_layers", "blocks whose MLP is a mixture of experts", s.moe_layers);
  v.field("experts", "routed experts per MoE block", s.experts);
  v.field("active_experts", "routed experts each token goes through (top-k)", s.active_experts);
  v.field("shared_experts", "experts every token goes through besides", s.shared_experts);
  v.field("expert_ffn", "intermediate width of one expert, elements", s.expert_ffn);
  v.field("expert_weight_bytes", "bytes per expert weight (0: dtype_bytes)", s.expert_weight_bytes);
  v.field("block_weight_bytes", "bytes per weight outside the experts (0: dtype_bytes)", s.block_weight_bytes);
  v.section_omitted_at_default("mla", !s.mla.enabled(), [&](auto& q) {
    q.field("q_lora_rank", "MLA: query low-rank dimension (0: none)", s.mla.q_lora_rank);
    q.field("kv_lora_rank", "MLA: latent KV dimension (0: no MLA)", s.mla.kv_lora_rank);
    q.field("qk_nope_head_dim", "MLA: query/key head size without rotary", s.mla.qk_nope_head_dim);
    q.field("qk_rope_head_dim", "MLA: query/key rotary head size", s.mla.qk_rope_head_dim);
    q.field("v_head_dim", "MLA: value head size", s.mla.v_head_dim);
    q.field("index_n_heads", "sparse indexer: heads (0: none)", s.mla.index_n_heads);
    q.field("index_head_dim", "sparse indexer: head size", s.mla.index_head_dim);
    q.field("index_topk", "sparse indexer: tokens each query attends", s.mla.index_topk);
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
