#include "sim/config/model_config.h"

#include <filesystem>

#include <fmt/format.h>

#include "sim/config/input_path.h"
#include "sim/config/key_schema.h"
#include "sim/cost/hf_model_config.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {

void complete_custom_model(std::string& name, CustomModelConfig& m, const ConfigOrigin& origin) {
  if (!m.hf_config.empty()) {
    KeySchemaBuilder keys;
    std::string unused_name;
    CustomModelConfig unused;
    visit_custom_model(keys, unused_name, unused);
    for (const KeyInfo& k : keys.keys()) {
      if (k.key == "name" || k.key == "hf_config") continue;
      if (const std::string path = "model." + k.key; origin.has(path))
        throw origin.error(path, "given beside model.hf_config, expected either hf_config (the architecture read from "
                                 "config.json) or the architecture inline, not both");
    }
  }
  if (!origin.has("model.name")) {
    const std::filesystem::path file(m.hf_config);
    name = m.hf_config.empty()                         ? "custom"
           : file.stem() == "config" && file.has_parent_path() ? file.parent_path().filename().string()
                                                       : file.stem().string();
  }
  if (!m.hf_config.empty()) return;
  ModelSpec& s = m.spec;
  if (s.kv_heads == 0) s.kv_heads = s.heads;
  if (s.head_dim == 0) {
    if (s.mla.enabled()) s.head_dim = s.mla.qk_nope_head_dim + s.mla.qk_rope_head_dim;
    else if (s.heads > 0 && s.hidden % s.heads == 0) s.head_dim = s.hidden / s.heads;
  }
}

ModelSpec model_of(const std::string& name, const CustomModelConfig& m) {
  if (!m.given) return model_preset(name);
  if (!m.hf_config.empty()) return read_hf_config(input_file(m.hf_config), name);
  ModelSpec s = m.spec;
  s.name = name;
  s.validate();
  return s;
}

const char* model_error_key(const CustomModelConfig& m) {
  return m.given && !m.hf_config.empty() ? "model.hf_config" : "model";
}

}  // namespace pagesim::sim
