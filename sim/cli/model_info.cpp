#include "sim/cli/model_info.h"

#include <nlohmann/json.hpp>

#include "sim/config/enum_names.h"

namespace pagesim::sim::cli {

std::string model_info_json(const ModelSpec& m, int tp) {
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
  return j.dump(2) + "\n";
}

}  // namespace pagesim::sim::cli
