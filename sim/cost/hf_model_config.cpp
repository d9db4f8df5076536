#include "sim/cost/hf_model_config.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pagesim::sim {

HfConfigError::HfConfigError(const std::string& file, const std::string& key, const std::string& message)
    : CostModelError(fmt::format("{}: {}: {}", file, key, message)), key_(key) {}

namespace {

using alloc::LayerGroupKind;
using nlohmann::json;

// The config's keys, read with the file and the key path in every error.
class ConfigReader {
 public:
  ConfigReader(const json& root, const json& arch, std::string file, std::string arch_prefix)
      : root_(root), arch_(arch), file_(std::move(file)), prefix_(std::move(arch_prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw HfConfigError(file_, prefix_ + key, message);
  }
  // A key of the file's top level (outside text_config).
  [[noreturn]] void fail_top(const std::string& key, const std::string& message) const {
    throw HfConfigError(file_, key, message);
  }

  // The architecture object (the file, or its text_config).
  const json& arch() const { return arch_; }
  const json& root() const { return root_; }

  // The value of `key`, nullopt when absent or null.
  const json* find(const std::string& key) const {
    const auto it = arch_.find(key);
    return it == arch_.end() || it->is_null() ? nullptr : &*it;
  }

  std::optional<std::int64_t> optional_int(const std::string& key, std::int64_t min_value) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer())
      fail(key, fmt::format("expected an integer >= {}, found {}", min_value, v->dump()));
    const std::int64_t n = v->get<std::int64_t>();
    if (n < min_value) fail(key, fmt::format("expected an integer >= {}, found {}", min_value, n));
    return n;
  }

  std::int64_t required_int(const std::string& key, std::int64_t min_value = 1) const {
    if (const auto n = optional_int(key, min_value)) return *n;
    fail(key, fmt::format("missing, expected an integer >= {}", min_value));
  }

  std::optional<bool> optional_bool(const std::string& key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) fail(key, fmt::format("expected true or false, found {}", v->dump()));
    return v->get<bool>();
  }

  std::optional<std::string> optional_string(const std::string& key) const {
    const json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_string()) fail(key, fmt::format("expected a string, found {}", v->dump()));
    return v->get<std::string>();
  }

 private:
  const json& root_;
  const json& arch_;
  std::string file_;
  std::string prefix_;
};

std::int64_t dtype_bytes_of(const ConfigReader& r) {
  const std::string key = r.find("torch_dtype") ? "torch_dtype" : "dtype";
  const std::optional<std::string> dtype = r.optional_string(key);
  if (!dtype || *dtype == "bfloat16" || *dtype == "float16") return 2;
  if (*dtype == "float32") return 4;
  r.fail(key, fmt::format("expected bfloat16, float16 or float32, found '{}'", *dtype));
}

// Transformers' layer_types: one name per layer; the groups in order of first appearance.
std::vector<ModelLayerGroup> groups_of(const ConfigReader& r, const ModelSpec& m) {
  const json* types = r.find("layer_types");
  if (!types) {
    const bool windowed = r.find("sliding_window") != nullptr && r.optional_bool("use_sliding_window") != false;
    if (windowed)
      r.fail("sliding_window", "given without layer_types: which layers use the window is not in this file; "
                               "describe the model inline (model.groups) instead of model.hf_config");
    return {};
  }
  if (!types->is_array() || static_cast<std::int64_t>(types->size()) != m.layers)
    r.fail("layer_types", fmt::format("expected a list of num_hidden_layers = {} names, found {}", m.layers,
                                      types->is_array() ? std::to_string(types->size()) + " entries" : types->dump()));
  std::vector<ModelLayerGroup> groups;
  for (const json& t : *types) {
    const std::string name = t.is_string() ? t.get<std::string>() : t.dump();
    LayerGroupKind kind;
    if (name == "full_attention") kind = LayerGroupKind::kFull;
    else if (name == "sliding_attention") kind = LayerGroupKind::kSlidingWindow;
    else r.fail("layer_types", fmt::format("expected full_attention or sliding_attention, found '{}' (describe the "
                                           "model inline with model.groups)", name));
    auto it = std::find_if(groups.begin(), groups.end(), [&](const ModelLayerGroup& g) { return g.kind == kind; });
    if (it == groups.end()) {
      ModelLayerGroup g;
      g.kind = kind;
      g.kv_heads = m.kv_heads;
      g.head_dim = m.head_dim;
      if (kind == LayerGroupKind::kSlidingWindow) g.window_tokens = r.required_int("sliding_window");
      groups.push_back(g);
      it = groups.end() - 1;
    }
    ++it->layers;
  }
  if (groups.size() == 1 && groups[0].kind == LayerGroupKind::kFull) return {};  // uniform
  return groups;
}

void read_moe(const ConfigReader& r, ModelSpec& m) {
  std::string experts_key;
  for (const char* k : {"num_local_experts", "n_routed_experts", "num_experts"})
    if (r.find(k)) experts_key = k;
  if (experts_key.empty()) return;
  m.experts = r.required_int(experts_key);
  m.active_experts = r.required_int("num_experts_per_tok");
  if (m.active_experts > m.experts)
    r.fail("num_experts_per_tok", fmt::format("{} experts per token, expected at most {} = {}", m.active_experts,
                                              experts_key, m.experts));
  m.expert_ffn = r.optional_int("moe_intermediate_size", 1).value_or(m.ffn);
  m.shared_experts = r.optional_int("n_shared_experts", 0).value_or(0);
  if (const auto shared = r.optional_int("shared_expert_intermediate_size", 0); shared && *shared > 0) {
    if (*shared % m.expert_ffn != 0)
      r.fail("shared_expert_intermediate_size",
             fmt::format("{} is not a whole number of experts of width {}, expected a multiple", *shared, m.expert_ffn));
    m.shared_experts = *shared / m.expert_ffn;
  }
  // Every layer is MoE but the first first_k_dense_replace; a period between MoE layers is
  // not modelled.
  for (const char* k : {"moe_layer_freq", "decoder_sparse_step", "expert_layer_period", "interleave_moe_layer_step"})
    if (const auto period = r.optional_int(k, 1); period && *period != 1)
      r.fail(k, fmt::format("{}: MoE every {} layers, expected 1 (every layer; describe the model inline otherwise)",
                            *period, *period));
  const std::int64_t dense = r.optional_int("first_k_dense_replace", 0).value_or(0);
  if (dense > m.layers)
    r.fail("first_k_dense_replace", fmt::format("{} dense layers, expected at most num_hidden_layers = {}", dense, m.layers));
  m.moe_layers = m.layers - dense;
}

void read_mla(const ConfigReader& r, ModelSpec& m) {
  LatentAttention& a = m.mla;
  a.kv_lora_rank = r.required_int("kv_lora_rank");
  a.q_lora_rank = r.optional_int("q_lora_rank", 1).value_or(0);
  a.qk_nope_head_dim = r.required_int("qk_nope_head_dim");
  a.qk_rope_head_dim = r.required_int("qk_rope_head_dim");
  a.v_head_dim = r.required_int("v_head_dim");
  a.index_n_heads = r.optional_int("index_n_heads", 1).value_or(0);
  a.index_head_dim = r.optional_int("index_head_dim", 1).value_or(0);
  a.index_topk = r.optional_int("index_topk", 1).value_or(0);
  // MLA has no KV heads: one latent per token (latent_attention.h).
  m.kv_heads = m.heads;
  m.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
}

void read_quantization(const ConfigReader& r, ModelSpec& m) {
  const auto it = r.root().find("quantization_config");
  if (it == r.root().end() || it->is_null()) return;
  const auto method = it->find("quant_method");
  const std::string name = method != it->end() && method->is_string() ? method->get<std::string>() : "";
  if (name == "fp8") {
    m.block_weight_bytes = 1;
    m.expert_weight_bytes = 1;
  } else if (name == "mxfp4") {
    m.expert_weight_bytes = kMxfp4WeightBytes;
  } else {
    r.fail_top("quantization_config.quant_method",
               fmt::format("expected fp8 or mxfp4 (or no quantization_config), found {}",
                                    method != it->end() ? method->dump() : "none"));
  }
}

}  // namespace

ModelSpec model_from_hf_config(std::string_view text, const std::string& file, std::string name) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    throw HfConfigError(file, "(file)", fmt::format("not valid JSON: {}", e.what()));
  }
  if (!root.is_object()) throw HfConfigError(file, "(file)", "expected a JSON object of settings");
  const auto text_config = root.find("text_config");
  const bool nested = text_config != root.end() && text_config->is_object();
  const ConfigReader r(root, nested ? *text_config : root, file, nested ? "text_config." : "");
  // Kinds of layers this reader does not derive: refused rather than guessed.
  for (const char* k : {"attention_chunk_size", "cross_attention_layers", "attn_layer_period"})
    if (r.find(k)) r.fail(k, "layers of another kind than full or sliding-window attention: describe the model "
                             "inline (model.groups) instead of model.hf_config");

  const std::string model_type = r.optional_string("model_type").value_or("");
  const bool opt = model_type == "opt";
  ModelSpec m;
  m.name = std::move(name);
  m.layers = r.required_int("num_hidden_layers");
  m.hidden = r.required_int("hidden_size");
  m.heads = r.required_int("num_attention_heads");
  m.kv_heads = r.optional_int("num_key_value_heads", 1).value_or(m.heads);
  if (m.heads % m.kv_heads != 0)
    r.fail("num_key_value_heads", fmt::format("{} does not divide num_attention_heads {}, expected a divisor",
                                              m.kv_heads, m.heads));
  if (const auto hd = r.optional_int("head_dim", 1)) {
    m.head_dim = *hd;
  } else {
    if (m.hidden % m.heads != 0)
      r.fail("head_dim", fmt::format("missing, and hidden_size {} is not a multiple of num_attention_heads {}: "
                                     "expected head_dim", m.hidden, m.heads));
    m.head_dim = m.hidden / m.heads;
  }
  m.ffn = r.required_int(opt ? "ffn_dim" : "intermediate_size");
  m.vocab = r.required_int("vocab_size");
  m.max_seq_len = r.required_int("max_position_embeddings");
  m.dtype_bytes = dtype_bytes_of(r);
  m.gated_mlp = !opt;
  m.linear_bias = opt;
  m.tied_lm_head = r.optional_bool("tie_word_embeddings").value_or(opt);
  // OPT's learned position embedding has max_position_embeddings + 2 rows (an offset of 2).
  m.learned_positions = opt ? m.max_seq_len + 2 : 0;
  if (r.find("kv_lora_rank")) read_mla(r, m);
  m.groups = groups_of(r, m);
  read_moe(r, m);
  // gpt-oss's experts carry biases (Transformers' GptOssExperts; vLLM's gpt_oss.py builds its
  // FusedMoE with has_bias=True); no config key says so.
  m.expert_biases = model_type == "gpt_oss" && m.experts > 0;
  read_quantization(r, m);
  try {
    m.validate();
  } catch (const CostModelError& e) {
    throw HfConfigError(file, "(model)", e.what());
  }
  return m;
}

ModelSpec read_hf_config(const std::filesystem::path& path, std::string name) {
  std::ifstream in(path);
  if (!in) throw HfConfigError(path.string(), "(file)", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return model_from_hf_config(text.str(), path.string(), std::move(name));
}

}  // namespace pagesim::sim
