#include "sim/profile/profile_grid.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

namespace {

void require_positive(std::int64_t v, const char* option) {
  if (v < 1) throw CostModelError(fmt::format("profile option {} must be >= 1, got {}", option, v));
}

bool is_pow2(std::int64_t v) { return v >= 1 && (v & (v - 1)) == 0; }

}  // namespace

std::size_t ProfileGrid::num_points() const {
  return linear_tokens.size() + moe_tokens.size() + prefill.size() + decode_seqs.size() * decode_contexts.size() + lm_head_seqs.size() +
         swap_blocks.size() * swap_block_sizes.size();
}

std::vector<std::int64_t> powers_of_two(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> v;
  for (std::int64_t x = lo; x <= hi; x *= 2) v.push_back(x);
  if (v.empty() || v.back() != hi) v.push_back(hi);
  return v;
}

ProfileGrid make_profile_grid(const ModelSpec& model, const ProfileGridOptions& o) {
  model.validate();
  auto weight_bytes = [&](double bytes) { return bytes > 0 ? bytes : static_cast<double>(model.dtype_bytes); };
  if (weight_bytes(model.expert_weight_bytes) != static_cast<double>(model.dtype_bytes) ||
      weight_bytes(model.block_weight_bytes) != static_cast<double>(model.dtype_bytes)) {
    throw CostModelError(fmt::format(
        "profile: model {} stores its experts at {} and its blocks at {} bytes per weight, its other weights at {}; "
        "pagesim profile times {}-byte GEMMs only, so its table would price other weights than the model's; use "
        "cost.kind: operators or roofline",
        model.name, weight_bytes(model.expert_weight_bytes), weight_bytes(model.block_weight_bytes),
        model.dtype_bytes, model.dtype_bytes));
  }
  require_positive(o.max_tokens, "max_tokens");
  require_positive(o.max_decode_seqs, "max_decode_seqs");
  require_positive(o.max_swap_blocks, "max_swap_blocks");
  if (o.max_context < 0) throw CostModelError(fmt::format("profile option max_context must be >= 0, got {}", o.max_context));
  if (o.prefill_tokens < 16) {
    throw CostModelError(fmt::format("profile option prefill_tokens must be >= 16, got {}", o.prefill_tokens));
  }
  if (!is_pow2(o.block_size) || o.block_size > 1024) {
    throw CostModelError(fmt::format("profile option block_size must be a power of two in [1, 1024], got {}",
                                     o.block_size));
  }
  if (o.swap_block_sizes.empty()) throw CostModelError("profile option swap_block_sizes needs at least one size");
  const std::int64_t max_context = o.max_context > 0 ? o.max_context : model.max_seq_len;
  if (max_context < 16) throw CostModelError(fmt::format("profile: max_context must be >= 16, got {}", max_context));

  ProfileGrid g;
  g.linear_tokens = powers_of_two(1, o.max_tokens);
  if (model.moe_layers > 0) g.moe_tokens = g.linear_tokens;
  g.decode_seqs = powers_of_two(1, o.max_decode_seqs);
  g.decode_contexts = powers_of_two(16, max_context);
  g.lm_head_seqs = powers_of_two(1, o.max_decode_seqs);
  g.swap_blocks = powers_of_two(1, o.max_swap_blocks);
  g.swap_block_sizes = o.swap_block_sizes;
  std::sort(g.swap_block_sizes.begin(), g.swap_block_sizes.end());
  g.swap_block_sizes.erase(std::unique(g.swap_block_sizes.begin(), g.swap_block_sizes.end()),
                           g.swap_block_sizes.end());
  if (g.swap_block_sizes.front() < 1) {
    throw CostModelError(fmt::format("profile option swap_block_sizes must be >= 1, got {}",
                                     g.swap_block_sizes.front()));
  }

  // Prefill: single short prompts, full batches of prefill_tokens, single long prompts.
  std::vector<PrefillComposition> candidates;
  const std::int64_t full_max = std::min(o.prefill_tokens, max_context);
  const PrefillComposition first_full{std::max<std::int64_t>(1, o.prefill_tokens / 16), 16};
  for (std::int64_t len = 16; len <= full_max; len *= 2) {
    const PrefillComposition single{1, len};
    if (single.pairs() >= first_full.pairs()) break;
    candidates.push_back(single);
  }
  for (std::int64_t len = 16; len <= full_max; len *= 2) candidates.push_back({std::max<std::int64_t>(1, o.prefill_tokens / len), len});
  for (std::int64_t len = 32; len <= max_context; len *= 2) {
    if (len > o.prefill_tokens) candidates.push_back({1, len});
  }
  if (max_context > full_max && !is_pow2(max_context)) candidates.push_back({1, max_context});
  for (const PrefillComposition& c : candidates) {
    if (g.prefill.empty() || c.pairs() > g.prefill.back().pairs()) g.prefill.push_back(c);
  }
  return g;
}

std::vector<GemmShape> layer_gemms(const ModelSpec& m) {
  return {
      {"qkv", m.hidden, m.q_width() + 2 * m.kv_width()},
      {"o_proj", m.q_width(), m.hidden},
      {"mlp_up", m.hidden, m.gated_mlp ? 2 * m.ffn : m.ffn},
      {"mlp_down", m.ffn, m.hidden},
  };
}

std::vector<GemmShape> attention_gemms(const ModelSpec& m) {
  std::vector<GemmShape> g = layer_gemms(m);
  g.resize(2);
  return g;
}

MoeLayerShape moe_layer_shape(const ModelSpec& m) {
  const std::int64_t in_width = m.gated_mlp ? 2 * m.expert_ffn : m.expert_ffn;
  MoeLayerShape s{
      .router = {"router", m.hidden, m.experts},
      .expert_gate_up = {"expert_gate_up", m.hidden, in_width},
      .expert_down = {"expert_down", m.expert_ffn, m.hidden},
      .experts = m.experts,
      .top_k = m.active_experts,
      .gated = m.gated_mlp,
      .shared = {},
  };
  if (m.shared_experts > 0) {
    const std::int64_t width = m.shared_experts * m.expert_ffn;
    s.shared = {{"shared_gate_up", m.hidden, m.gated_mlp ? 2 * width : width}, {"shared_down", width, m.hidden}};
  }
  return s;
}

std::vector<std::int64_t> moe_expert_tokens(std::int64_t tokens, std::int64_t top_k, std::int64_t experts) {
  assert(tokens >= 0 && top_k >= 1 && top_k <= experts);
  const std::int64_t assignments = tokens * top_k;
  std::vector<std::int64_t> per(static_cast<std::size_t>(experts), assignments / experts);
  for (std::int64_t e = 0; e < assignments % experts; ++e) ++per[static_cast<std::size_t>(e)];
  return per;
}

GemmShape lm_head_gemm(const ModelSpec& m) { return {"lm_head", m.hidden, m.vocab}; }

}  // namespace pagesim::sim
