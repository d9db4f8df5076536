#include "sim/cli/model_info.h"

#include <nlohmann/json.hpp>

#include "sim/config/enum_names.h"

namespace pagesim::sim::cli {

std::string model_info_json(const ModelSpec& m, int tp, const nlohmann::ordered_json& kv_budget) {
  m.validate();
  m.check_tensor_parallel(tp);
  nlohmann::ordered_json j;
  j["model"] = m.name;
  j["tensor_parallel"] = tp;
  j["kv_dtype"] = std::string(enum_name(kKvDtypeNames, m.kv_dtype));
  j["layers"] = m.layers;
  j["hidden"] = m.hidden;
  j["heads"] = m.heads;
  j["kv_heads"] = m.kv_heads;
  j["head_dim"] = m.head_dim;
  j["max_seq_len"] = m.max_seq_len;
  j["parameters"] = m.parameter_count();
  j["active_parameters"] = m.active_nonembedding_params() + m.embedding_params() +
                           (m.tied_lm_head ? 0 : m.lm_head_params());
  j["weight_bytes"] = m.weight_bytes();
  j["kv_bytes_per_token"] = m.kv_bytes_per_token();  // the uniform charge, whole model
  j["kv_bytes_per_token_per_gpu"] = m.kv_bytes_per_token_per_gpu(tp);
  const std::vector<ModelLayerGroup> specs = m.layer_groups_or_uniform();
  const alloc::LayerGroups groups = layer_groups(m, tp);
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const alloc::LayerGroup& g = groups[i];
    nlohmann::ordered_json e;
    if (m.mla.enabled()) {  // groups: the latent cache, then the indexer's keys
      const bool latent = i == 0;
      e["kind"] = std::string(alloc::to_string(g.kind));
      e["cache"] = latent ? "latent" : "index_keys";
      e["layers"] = g.layers;
      e["kv_heads_per_gpu"] = 1;  // one record per token, shared by every head, on every GPU
      e["head_dim"] = latent ? m.mla.cached_dim() : m.mla.index_head_dim;
      e["bytes_per_token_per_layer"] = g.kv_bytes_per_token / g.layers;
      e["kv_bytes_per_token"] = g.kv_bytes_per_token;
      list.push_back(e);
      continue;
    }
    e["kind"] = std::string(alloc::to_string(g.kind));
    e["layers"] = g.layers;
    e["kv_heads_per_gpu"] = specs[i].attends() ? ModelSpec::kv_heads_per_gpu(specs[i].kv_heads, tp) : 0;
    e["head_dim"] = specs[i].head_dim;
    e["kv_bytes_per_token"] = g.kv_bytes_per_token;  // per GPU, the group's layers together
    e["window_tokens"] = g.window_tokens;
    e["encoder_tokens"] = g.encoder_tokens;
    e["state_bytes"] = g.state_bytes;
    list.push_back(e);
  }
  j["groups_per_gpu"] = list;
  if (m.mla.enabled()) {
    const LatentAttention& a = m.mla;
    nlohmann::ordered_json l;
    l["kv_lora_rank"] = a.kv_lora_rank;
    l["qk_rope_head_dim"] = a.qk_rope_head_dim;
    l["qk_nope_head_dim"] = a.qk_nope_head_dim;
    l["v_head_dim"] = a.v_head_dim;
    l["q_lora_rank"] = a.q_lora_rank;
    l["index_n_heads"] = a.index_n_heads;
    l["index_head_dim"] = a.index_head_dim;
    l["index_topk"] = a.index_topk;
    l["latent_bytes_per_token_per_layer"] = latent_bytes_per_token_per_layer(a, m.kv_dtype, m.dtype_bytes);
    l["index_key_bytes_per_token_per_layer"] = index_key_bytes_per_token_per_layer(a);
    l["split_by_tensor_parallel"] = false;  // vLLM: MLA has one KV head on every rank
    // FlashMLA's 64-token pages (vLLM forces block_size 64): a sequence's last page is on
    // average half empty, (64 - 1) / 2 token slots of rounding per sequence.
    l["engine_block_size"] = kFlashMlaPageTokens;
    l["page_bytes_per_gpu"] = kFlashMlaPageTokens * m.kv_bytes_per_token_per_gpu(tp);
    l["mean_rounding_bytes_per_sequence"] =
        static_cast<double>(kFlashMlaPageTokens - 1) / 2 * static_cast<double>(m.kv_bytes_per_token_per_gpu(tp));
    j["latent_attention"] = l;
  }
  if (!kv_budget.is_null()) j["kv_budget"] = kv_budget;
  return j.dump(2) + "\n";
}

}  // namespace pagesim::sim::cli
