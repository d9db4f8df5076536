#include "sim/cost/model_spec.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

namespace {

using alloc::LayerGroupKind;

// One MLA layer's projections (DeepSeek-V2/V3 modeling code; vLLM DeepseekV2MLAAttention):
// q_a (hidden → q_lora_rank) + its norm + q_b (→ heads × (nope + rope)), or q (hidden →
// heads × (nope + rope)) without query compression; kv_a (hidden → rank + rope) + its norm;
// kv_b (rank → heads × (nope + v)); o (heads × v → hidden); with an indexer, its wq_b
// (q_lora_rank → index heads × index_head_dim), wk (hidden → index_head_dim), k_norm
// (LayerNorm weight and bias) and weights_proj (hidden → index heads).
std::int64_t mla_attention_params(const ModelSpec& m) {
  const LatentAttention& a = m.mla;
  const std::int64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const std::int64_t q = a.q_lora_rank > 0 ? m.hidden * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * m.heads * qk
                                           : m.hidden * m.heads * qk;
  const std::int64_t kv_a = m.hidden * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
  const std::int64_t kv_b = a.kv_lora_rank * m.heads * (a.qk_nope_head_dim + a.v_head_dim);
  const std::int64_t o = m.heads * a.v_head_dim * m.hidden;
  const std::int64_t indexer = a.sparse() ? a.q_lora_rank * a.index_n_heads * a.index_head_dim +
                                                m.hidden * a.index_head_dim + 2 * a.index_head_dim +
                                                m.hidden * a.index_n_heads
                                          : 0;
  return q + kv_a + kv_b + o + indexer;
}

// q, k, v, o of one layer whose KV heads are kv × hd (q and o keep the model's query heads);
// MLA's projections for a latent-attention model.
std::int64_t attention_params(const ModelSpec& m, std::int64_t kv, std::int64_t hd) {
  if (m.mla.enabled()) return mla_attention_params(m);
  const std::int64_t q = m.heads * hd;
  const std::int64_t weights = m.hidden * q + 2 * m.hidden * kv * hd + q * m.hidden;
  const std::int64_t biases = m.linear_bias ? q + 2 * kv * hd + m.hidden : 0;
  return weights + biases;
}

// The blocks + final norm with `experts_per_moe_block` experts in each MoE block.
std::int64_t block_params(const ModelSpec& m, std::int64_t experts_per_moe_block) {
  std::int64_t mixers = 0;
  for (const ModelLayerGroup& g : m.layer_groups_or_uniform())
    mixers += g.layers * (g.attends() ? attention_params(m, g.kv_heads, g.head_dim) : g.mixer_params);
  const std::int64_t dense_mlps = (m.layers - m.moe_layers) * m.mlp_params_per_layer();
  const std::int64_t moe_mlps = m.moe_layers * (experts_per_moe_block * m.expert_params() + m.router_params());
  const std::int64_t final_norm = m.linear_bias ? 2 * m.hidden : m.hidden;
  return mixers + dense_mlps + moe_mlps + m.layers * m.norm_params_per_layer() + final_norm;
}

[[noreturn]] void throw_group(const ModelSpec& m, std::size_t i, const ModelLayerGroup& g, std::string_view what) {
  throw CostModelError(fmt::format("model '{}': groups[{}] ({}, {} layers): {}", m.name, i,
                                   alloc::to_string(g.kind), g.layers, what));
}

void validate_group(const ModelSpec& m, std::size_t i, const ModelLayerGroup& g) {
  if (g.layers <= 0) throw_group(m, i, g, fmt::format("layers is {}, expected >= 1", g.layers));
  const bool windowed = g.kind == LayerGroupKind::kSlidingWindow || g.kind == LayerGroupKind::kChunkedLocal;
  const bool cross = g.kind == LayerGroupKind::kCrossAttention;
  if (g.attends()) {
    if (g.kv_heads <= 0 || g.head_dim <= 0)
      throw_group(m, i, g, fmt::format("kv_heads {} and head_dim {}, expected both positive", g.kv_heads, g.head_dim));
    if (m.heads % g.kv_heads != 0)
      throw_group(m, i, g, fmt::format("kv_heads {} does not divide heads {}, expected a divisor (GQA groups)",
                                       g.kv_heads, m.heads));
    if (g.state_elements != 0 || g.mixer_params != 0)
      throw_group(m, i, g, "state_elements and mixer_params are for recurrent groups, expected 0");
  } else {
    if (g.state_elements <= 0 || g.mixer_params <= 0)
      throw_group(m, i, g, fmt::format("state_elements {} and mixer_params {}, expected both positive",
                                       g.state_elements, g.mixer_params));
    if (g.kv_heads != 0 || g.head_dim != 0)
      throw_group(m, i, g, "a recurrent group keeps no KV, expected kv_heads 0 and head_dim 0");
  }
  if (windowed != (g.window_tokens > 0) || g.window_tokens < 0)
    throw_group(m, i, g, fmt::format("window_tokens is {}, expected {}", g.window_tokens,
                                     windowed ? ">= 1 (the window or chunk)" : "0 (only windowed kinds have one)"));
  if (cross != (g.encoder_tokens > 0) || g.encoder_tokens < 0)
    throw_group(m, i, g, fmt::format("encoder_tokens is {}, expected {}", g.encoder_tokens,
                                     cross ? ">= 1" : "0 (only cross-attention has encoder keys)"));
}

}  // namespace

std::vector<ModelLayerGroup> ModelSpec::layer_groups_or_uniform() const {
  if (!groups.empty()) return groups;
  ModelLayerGroup g;
  g.kind = LayerGroupKind::kFull;
  g.layers = layers;
  g.kv_heads = kv_heads;
  g.head_dim = head_dim;
  return {g};
}

std::int64_t ModelSpec::attention_layers() const {
  std::int64_t n = 0;
  for (const ModelLayerGroup& g : layer_groups_or_uniform()) n += g.attends() ? g.layers : 0;
  return n;
}

std::int64_t ModelSpec::attention_params_per_layer() const { return attention_params(*this, kv_heads, head_dim); }

std::int64_t ModelSpec::mlp_params_per_layer() const {
  const std::int64_t in_matrices = gated_mlp ? 2 : 1;  // (gate,) up
  const std::int64_t weights = in_matrices * hidden * ffn + ffn * hidden;
  const std::int64_t biases = linear_bias ? in_matrices * ffn + hidden : 0;
  return weights + biases;
}

std::int64_t ModelSpec::expert_params() const {
  const std::int64_t in_matrices = gated_mlp ? 2 : 1;
  return in_matrices * hidden * expert_ffn + expert_ffn * hidden;
}

std::int64_t ModelSpec::norm_params_per_layer() const {
  // Two norms per block (before attention, before the MLP).
  return 2 * (linear_bias ? 2 * hidden : hidden);
}

std::int64_t ModelSpec::params_per_layer() const {
  return attention_params_per_layer() + mlp_params_per_layer() + norm_params_per_layer();
}

std::int64_t ModelSpec::nonembedding_params() const { return block_params(*this, experts + shared_experts); }

std::int64_t ModelSpec::active_nonembedding_params() const {
  return block_params(*this, active_experts + shared_experts);
}

std::int64_t ModelSpec::all_expert_params() const {
  return moe_layers * (experts + shared_experts) * expert_params();
}

std::int64_t ModelSpec::embedding_params() const {
  return vocab * hidden + learned_positions * hidden;
}

std::int64_t ModelSpec::parameter_count() const {
  return nonembedding_params() + embedding_params() + (tied_lm_head ? 0 : lm_head_params());
}

namespace {
// `params` weights of `bytes` each (0: dtype_bytes), rounded up to whole bytes.
std::int64_t bytes_of(const ModelSpec& m, std::int64_t params, double bytes) {
  if (bytes <= 0) return params * m.dtype_bytes;
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(params) * bytes));
}
}  // namespace

// The embedding and LM head (what parameter_count adds to the blocks) at dtype_bytes.
std::int64_t ModelSpec::weight_bytes() const {
  return nonembedding_weight_bytes() + (parameter_count() - nonembedding_params()) * dtype_bytes;
}

std::int64_t ModelSpec::nonembedding_weight_bytes() const {
  const std::int64_t expert = all_expert_params();
  return bytes_of(*this, nonembedding_params() - expert, block_weight_bytes) +
         bytes_of(*this, expert, expert_weight_bytes);
}

std::int64_t ModelSpec::latent_kv_bytes_per_token() const {
  return mla.enabled() ? layers * latent_bytes_per_token_per_layer(mla, kv_dtype, dtype_bytes) : 0;
}

std::int64_t ModelSpec::index_kv_bytes_per_token() const {
  return mla.enabled() ? layers * index_key_bytes_per_token_per_layer(mla) : 0;
}

std::int64_t ModelSpec::kv_bytes_per_token() const {
  if (mla.enabled()) return latent_kv_bytes_per_token() + index_kv_bytes_per_token();
  std::int64_t widest = 0;
  for (const ModelLayerGroup& g : layer_groups_or_uniform())
    if (g.attends()) widest = std::max(widest, kv_bytes_per_token_per_layer(g.kv_heads, g.head_dim));
  return attention_layers() * widest;
}

std::int64_t ModelSpec::kv_bytes_per_token_per_gpu(int tp) const {
  if (mla.enabled()) return kv_bytes_per_token();  // every rank holds the whole latent cache
  std::int64_t widest = 0;
  for (const ModelLayerGroup& g : layer_groups_or_uniform())
    if (g.attends()) widest = std::max(widest, kv_bytes_per_token_per_layer(kv_heads_per_gpu(g.kv_heads, tp), g.head_dim));
  return attention_layers() * widest;
}

void ModelSpec::validate() const {
  const struct {
    const char* field;
    std::int64_t value;
  } positive[] = {{"layers", layers}, {"hidden", hidden},           {"heads", heads},
                  {"kv_heads", kv_heads}, {"head_dim", head_dim},   {"ffn", ffn},
                  {"vocab", vocab},       {"dtype_bytes", dtype_bytes},
                  {"max_seq_len", max_seq_len}};
  for (const auto& f : positive) {
    if (f.value <= 0) {
      throw CostModelError(fmt::format("model '{}': {} is {}, expected a positive integer",
                                       name, f.field, f.value));
    }
  }
  check_sizes_fit();
  if (heads % kv_heads != 0) {
    throw CostModelError(fmt::format(
        "model '{}': kv_heads {} does not divide heads {}, expected a divisor (GQA groups)", name,
        kv_heads, heads));
  }
  if (mla.enabled()) validate_latent();
  if (learned_positions < 0) {
    throw CostModelError(fmt::format("model '{}': learned_positions is {}, expected >= 0", name,
                                     learned_positions));
  }
  if (!groups.empty()) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      validate_group(*this, i, groups[i]);
      total += groups[i].layers;
    }
    if (total != layers)
      throw CostModelError(fmt::format("model '{}': groups hold {} layers, expected layers = {}", name, total, layers));
    if (attention_layers() == 0)
      throw CostModelError(fmt::format("model '{}': no group attends, expected at least one attention group", name));
  }
  if (moe_layers < 0 || moe_layers > layers)
    throw CostModelError(fmt::format("model '{}': moe_layers is {}, expected 0..layers ({})", name, moe_layers, layers));
  if (moe_layers > 0 && !(experts >= 1 && active_experts >= 1 && active_experts <= experts && expert_ffn >= 1 &&
                          shared_experts >= 0))
    throw CostModelError(fmt::format("model '{}': {} MoE layers with experts {}, active_experts {}, shared_experts {}, "
                                     "expert_ffn {}: expected 1 <= active_experts <= experts, shared_experts >= 0, "
                                     "expert_ffn >= 1",
                                     name, moe_layers, experts, active_experts, shared_experts, expert_ffn));
  if (expert_weight_bytes < 0)
    throw CostModelError(fmt::format("model '{}': expert_weight_bytes is {}, expected >= 0", name, expert_weight_bytes));
  if (block_weight_bytes < 0)
    throw CostModelError(fmt::format("model '{}': block_weight_bytes is {}, expected >= 0", name, block_weight_bytes));
}

// Every size pagesim derives from a model (parameters, weight bytes, KV bytes per token, a
// step's FLOPs) is a product of its fields in 64-bit integers or doubles. Rather than check each
// product where it is taken, validate() bounds them all at once: an over-estimate of every term
// of the weights and the KV (each term at least the exact formula's, computed in long double)
// must stay below kMaxModelBytes, so no exact formula can overflow. The bound is far beyond any
// model that exists (the largest hold ~2^41 bytes of weights) and far below int64's 2^63.
void ModelSpec::check_sizes_fit() const {
  constexpr long double kMaxModelBytes = 0x1p52L;  // 4 PiB
  const auto is_bad_weight_bytes = [](double b) { return !std::isfinite(b) || b > 8; };
  if (is_bad_weight_bytes(expert_weight_bytes) || is_bad_weight_bytes(block_weight_bytes))
    throw CostModelError(fmt::format("model '{}': expert_weight_bytes {} and block_weight_bytes {}: expected bytes per "
                                     "weight in [0, 8] (0: dtype_bytes; 8: fp64)",
                                     name, expert_weight_bytes, block_weight_bytes));
  using L = long double;
  const L h = static_cast<L>(hidden), n = static_cast<L>(layers);
  L groups_kv = static_cast<L>(kv_heads) * static_cast<L>(head_dim);
  L mixer = 0, state = 0, window = 0;
  for (const ModelLayerGroup& g : groups) {
    groups_kv = std::max(groups_kv, static_cast<L>(g.kv_heads) * static_cast<L>(g.head_dim));
    mixer = std::max(mixer, static_cast<L>(g.mixer_params));
    state = std::max(state, static_cast<L>(g.state_elements));
    window = std::max({window, static_cast<L>(g.window_tokens), static_cast<L>(g.encoder_tokens)});
  }
  const L q_width = static_cast<L>(heads) * static_cast<L>(head_dim);
  const L latent = static_cast<L>(mla.q_lora_rank) + static_cast<L>(mla.kv_lora_rank) +
                   static_cast<L>(mla.qk_rope_head_dim) + static_cast<L>(mla.index_n_heads) *
                   static_cast<L>(mla.index_head_dim);
  const L latent_heads = static_cast<L>(heads) * static_cast<L>(mla.qk_nope_head_dim + mla.qk_rope_head_dim +
                                                               mla.v_head_dim + mla.index_head_dim);
  const L per_layer = (2 * q_width + 2 * groups_kv) * h + 3 * h * static_cast<L>(ffn) +
                      static_cast<L>(experts + shared_experts + 1) * (3 * h * static_cast<L>(expert_ffn) + h) +
                      latent * h + latent_heads * (latent + h) + mixer + 8 * h + 4 * static_cast<L>(ffn);
  const L params = n * per_layer + 2 * (static_cast<L>(vocab) + static_cast<L>(learned_positions) + 1) * h;
  const L bytes_per_weight = std::max({static_cast<L>(dtype_bytes), static_cast<L>(expert_weight_bytes),
                                       static_cast<L>(block_weight_bytes)});
  const L kv_per_token = n * (2 * groups_kv + latent + state) * 4 * bytes_per_weight;
  const L longest = std::max({static_cast<L>(max_seq_len), window, static_cast<L>(mla.index_topk)});
  const L weights = params * bytes_per_weight;
  if (weights > kMaxModelBytes || kv_per_token * longest > kMaxModelBytes || kv_per_token * h > kMaxModelBytes)
    throw CostModelError(fmt::format(
        "model '{}': layers {}, hidden {}, heads {}, head_dim {}, ffn {}, vocab {}, experts {}, expert_ffn {}, "
        "max_seq_len {}: weights of up to {:.3g} B and {:.3g} B of KV per token, expected sizes below 2^52 B "
        "(4 PiB; pagesim's sizes are 64-bit integers)",
        name, layers, hidden, heads, head_dim, ffn, vocab, experts, expert_ffn, max_seq_len,
        static_cast<double>(weights), static_cast<double>(kv_per_token)));
}

void ModelSpec::validate_latent() const {
  const LatentAttention& a = mla;
  const struct {
    const char* field;
    std::int64_t value;
  } positive[] = {{"kv_lora_rank", a.kv_lora_rank},
                  {"qk_nope_head_dim", a.qk_nope_head_dim},
                  {"qk_rope_head_dim", a.qk_rope_head_dim},
                  {"v_head_dim", a.v_head_dim}};
  for (const auto& f : positive)
    if (f.value <= 0)
      throw CostModelError(fmt::format("model '{}': mla.{} is {}, expected a positive integer (latent attention)",
                                       name, f.field, f.value));
  if (a.q_lora_rank < 0)
    throw CostModelError(fmt::format("model '{}': mla.q_lora_rank is {}, expected >= 0 (0: no query compression)",
                                     name, a.q_lora_rank));
  if (!groups.empty())
    throw CostModelError(fmt::format("model '{}': latent attention with {} layer groups, expected none (every layer "
                                     "of an MLA model caches the latent; the indexer's keys are derived from mla)",
                                     name, groups.size()));
  if (head_dim != a.qk_nope_head_dim + a.qk_rope_head_dim || kv_heads != heads)
    throw CostModelError(fmt::format("model '{}': latent attention with head_dim {} and kv_heads {}, expected head_dim = "
                                     "qk_nope_head_dim + qk_rope_head_dim = {} and kv_heads = heads = {}",
                                     name, head_dim, kv_heads, a.qk_nope_head_dim + a.qk_rope_head_dim, heads));
  const bool any_index = a.index_n_heads != 0 || a.index_head_dim != 0 || a.index_topk != 0;
  if (any_index && !(a.index_n_heads > 0 && a.index_head_dim > 0 && a.index_topk > 0 && a.q_lora_rank > 0))
    throw CostModelError(fmt::format("model '{}': mla.index_n_heads {}, index_head_dim {}, index_topk {}: expected all "
                                     "positive (an indexer, which reads the compressed query: q_lora_rank > 0) or "
                                     "all 0",
                                     name, a.index_n_heads, a.index_head_dim, a.index_topk));
  if (kv_dtype == KvDtype::kInt4)
    throw CostModelError(fmt::format("model '{}': kv_dtype int4 for a latent (MLA) cache, expected auto, bf16, fp16 "
                                     "or fp8: no engine stores MLA's latent in int4 (vLLM's MLA caches are bf16, "
                                     "fp8 or fp8_ds_mla)",
                                     name));
}

void ModelSpec::check_tensor_parallel(int tp) const {
  if (tp < 1) {
    throw CostModelError(fmt::format("tensor-parallel degree is {}, expected >= 1", tp));
  }
  if (heads % tp != 0) {
    throw CostModelError(fmt::format(
        "model '{}': tensor-parallel degree {} does not divide heads {}, expected a divisor",
        name, tp, heads));
  }
  for (const ModelLayerGroup& g : layer_groups_or_uniform()) {
    if (!g.attends()) continue;
    if (g.kv_heads % tp != 0 && tp % g.kv_heads != 0) {
      throw CostModelError(fmt::format(
          "model '{}': tensor-parallel degree {} and kv_heads {}: expected one to divide the other",
          name, tp, g.kv_heads));
    }
  }
}

alloc::LayerGroups layer_groups(const ModelSpec& model, int tp) {
  alloc::LayerGroups out;
  if (model.mla.enabled()) {
    const auto layers = static_cast<std::int32_t>(model.layers);
    out.push_back({.kind = LayerGroupKind::kFull, .layers = layers, .kv_bytes_per_token = model.latent_kv_bytes_per_token()});
    if (model.mla.sparse())
      out.push_back({.kind = LayerGroupKind::kFull, .layers = layers, .kv_bytes_per_token = model.index_kv_bytes_per_token()});
    return out;
  }
  for (const ModelLayerGroup& g : model.layer_groups_or_uniform()) {
    alloc::LayerGroup a;
    a.kind = g.kind;
    a.layers = static_cast<std::int32_t>(g.layers);
    if (g.attends())
      a.kv_bytes_per_token =
          g.layers * model.kv_bytes_per_token_per_layer(ModelSpec::kv_heads_per_gpu(g.kv_heads, tp), g.head_dim);
    a.window_tokens = g.window_tokens;
    a.encoder_tokens = g.encoder_tokens;
    a.state_bytes = g.layers * ((g.state_elements + tp - 1) / tp) * model.dtype_bytes;
    out.push_back(a);
  }
  return out;
}

}  // namespace pagesim::sim
