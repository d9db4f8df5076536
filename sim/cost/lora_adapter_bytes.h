// Bytes of one LoRA adapter's weights on one GPU.
//
// LoRA (Hu et al., "LoRA: Low-Rank Adaptation of Large Language Models", ICLR 2022,
// Section 4.1) adds to a frozen matrix W (d_in × d_out) the product of A (d_in × r) and
// B (r × d_out): r · (d_in + d_out) weights per targeted matrix and layer, stored in the
// model's dtype (vLLM's lora_dtype "auto"; S-LoRA keeps them in fp16). The matrices by their
// Hugging Face names, for a model of hidden size h, q width q = heads · head_dim, kv width
// k = kv_heads · head_dim and MLP width f: q_proj h→q, k_proj h→k, v_proj h→k, o_proj q→h,
// gate_proj h→f (gated MLPs only), up_proj h→f, down_proj f→h. Under tensor parallelism vLLM
// shards each adapter like its layer (column-parallel: B split; row-parallel: A split), so
// one GPU holds about 1/tp of it; this counts 1/tp of the total, rounded up.
// Expected failures are std::invalid_argument naming the module (gate_proj of an ungated
// MLP, an MLP-less or latent-attention model).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/cost/model_spec.h"

namespace pagesim::sim {

// d_in + d_out of `module` in `model`. Throws std::invalid_argument for a module the model
// does not have in that form.
inline std::int64_t lora_module_width(const ModelSpec& model, const std::string& module) {
  const std::int64_t h = model.hidden, q = model.q_width(), k = model.kv_width(), f = model.ffn;
  if (model.mla.enabled())
    throw std::invalid_argument(model.name + " uses latent attention (MLA), whose LoRA-capable projections are "
                                             "not modelled; choose a model with standard attention");
  if (module == "q_proj") return h + q;
  if (module == "k_proj" || module == "v_proj") return h + k;
  if (module == "o_proj") return q + h;
  if (module == "gate_proj" || module == "up_proj" || module == "down_proj") {
    if (f <= 0) throw std::invalid_argument(model.name + " has no dense MLP for LoRA's " + module);
    if (module == "gate_proj" && !model.gated_mlp)
      throw std::invalid_argument(model.name + "'s MLP is not gated: it has no gate_proj (use up_proj, down_proj)");
    return h + f;
  }
  throw std::invalid_argument("unknown LoRA target module '" + module + "'");
}

// Bytes one GPU holds for an adapter of rank `rank` over `modules` in every layer.
inline std::int64_t lora_adapter_bytes(const ModelSpec& model, const std::vector<std::string>& modules,
                                       std::int64_t rank, int tp) {
  std::int64_t per_layer = 0;
  for (const std::string& m : modules) per_layer += rank * lora_module_width(model, m);
  const std::int64_t total = per_layer * model.layers * model.dtype_bytes;
  return (total + tp - 1) / tp;
}

// Every module of `model` that LoRA can target (vLLM wraps each LoRA-capable linear layer
// and sizes its max_loras slots for all of them).
inline std::vector<std::string> lora_all_modules(const ModelSpec& model) {
  std::vector<std::string> all = {"q_proj", "k_proj", "v_proj", "o_proj"};
  if (model.ffn > 0) {
    if (model.gated_mlp) all.push_back("gate_proj");
    all.push_back("up_proj");
    all.push_back("down_proj");
  }
  return all;
}

}  // namespace pagesim::sim
