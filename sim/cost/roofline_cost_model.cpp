#include "sim/cost/roofline_cost_model.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include <fmt/format.h>

namespace pagesim::sim {

RooflineCostModel::RooflineCostModel(ModelSpec model, GpuSpec gpu, int tp)
    : model_(std::move(model)), gpu_(std::move(gpu)), tp_(tp) {
  model_.validate();
  gpu_.validate();
  model_.check_tensor_parallel(tp_);

  const double t = tp_;
  const double flops = gpu_.achieved_flops();
  const double bw = gpu_.achieved_hbm_bytes_per_s();
  const double d = static_cast<double>(model_.dtype_bytes);
  const double layers = static_cast<double>(model_.layers);
  const double hidden = static_cast<double>(model_.hidden);
  const double vocab = static_cast<double>(model_.vocab);
  const double q_width = static_cast<double>(model_.heads_per_gpu(tp_) * model_.head_dim);
  const double kv_width = static_cast<double>(model_.kv_heads_per_gpu(tp_) * model_.head_dim);
  const double ffn = static_cast<double>(model_.ffn) / t;
  const double active = static_cast<double>(model_.active_nonembedding_params());
  const double weight_bytes = static_cast<double>(model_.nonembedding_weight_bytes());

  linear_c_per_token_ = 2 * active / t / flops;
  linear_m_weights_ = weight_bytes / t / bw;
  // Per layer and token, elements in and out of each projection on one GPU: column-parallel
  // projections (qkv, gate/up) read the full hidden vector and write their shard; row-parallel
  // ones (o, down) read their shard and write a full hidden vector (then all-reduced).
  const double gate_up = model_.gated_mlp ? 2 : 1;
  const double act_elems = (model_.mla.enabled() ? mla_projection_elements() : (hidden + q_width + 2 * kv_width)  // qkv
                                                                                    + (q_width + hidden))       // o
                           + (hidden + gate_up * ffn)         // gate, up
                           + (ffn + hidden);                  // down
  linear_m_per_token_ = layers * act_elems * d / bw;

  lm_c_per_seq_ = 2 * hidden * vocab / t / flops;
  lm_m_weights_ = hidden * vocab * d / t / bw;
  lm_m_per_seq_ = (hidden + vocab / t) * d / bw;

  if (tp_ > 1) {
    allreduce_fixed_ = 2 * layers * gpu_.allreduce_latency_seconds;
    allreduce_per_token_ =
        2 * layers * (2 * (t - 1) / t) * hidden * d / gpu_.achieved_nvlink_bytes_per_s();
  }
  swap_ = PcieSwapCost::of(model_, gpu_, tp_);
  if (model_.mla.enabled()) {
    init_latent_attention();
    return;
  }

  const std::vector<ModelLayerGroup> specs = model_.layer_groups_or_uniform();
  const alloc::LayerGroups per_gpu = layer_groups(model_, tp_);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i].attends()) {
      state_m_per_seq_ += 2 * static_cast<double>(per_gpu[i].state_bytes) / bw;
      continue;
    }
    const double group_layers = static_cast<double>(specs[i].layers);
    const double group_q_width = static_cast<double>(model_.heads_per_gpu(tp_) * specs[i].head_dim);
    AttentionGroupCost g;
    g.kind = specs[i].kind;
    g.window = static_cast<double>(specs[i].window_tokens);
    g.encoder_tokens = static_cast<double>(specs[i].encoder_tokens);
    g.c_per_pair = 4 * group_layers * group_q_width / flops;
    g.m_per_kv_token = static_cast<double>(per_gpu[i].kv_bytes_per_token) / bw;
    g.m_per_query = 2 * group_layers * group_q_width * d / bw;
    attention_groups_.push_back(g);
  }
  one_unbounded_group_ = attention_groups_.size() == 1 &&
                         attention_groups_.front().kind != alloc::LayerGroupKind::kCrossAttention &&
                         attention_groups_.front().window == 0;
}

double RooflineCostModel::mla_projection_elements() const {
  // Elements in and out of MLA's projections per layer and token on one GPU: q_a, kv_a (and
  // the indexer's) are replicated, q_b / kv_b column-parallel, o row-parallel.
  const LatentAttention& a = model_.mla;
  const double hidden = static_cast<double>(model_.hidden);
  const double hq = static_cast<double>(model_.heads_per_gpu(tp_));
  const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
  const double q = a.q_lora_rank > 0 ? (hidden + static_cast<double>(a.q_lora_rank)) +
                                           (static_cast<double>(a.q_lora_rank) + hq * qk)
                                     : hidden + hq * qk;
  const double kv_a = hidden + static_cast<double>(a.cached_dim());
  const double kv_b = static_cast<double>(a.kv_lora_rank) + hq * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim);
  const double o = hq * static_cast<double>(a.v_head_dim) + hidden;
  const double indexer = a.sparse() ? static_cast<double>(a.q_lora_rank + a.index_n_heads * a.index_head_dim) +
                                          hidden + static_cast<double>(a.index_head_dim + a.index_n_heads)
                                    : 0;
  return q + kv_a + kv_b + o + indexer;
}

void RooflineCostModel::init_latent_attention() {
  const LatentAttention& a = model_.mla;
  const double flops = gpu_.achieved_flops();
  const double bw = gpu_.achieved_hbm_bytes_per_s();
  const double d = static_cast<double>(model_.dtype_bytes);
  const double layers = static_cast<double>(model_.layers);
  const double hq = static_cast<double>(model_.heads_per_gpu(tp_));
  const double rank = static_cast<double>(a.kv_lora_rank);
  const double rope = static_cast<double>(a.qk_rope_head_dim);
  const double qk = static_cast<double>(a.qk_nope_head_dim) + rope;
  const double v = static_cast<double>(a.v_head_dim);
  LatentAttentionCost& m = mla_;
  m.sparse = a.sparse();
  m.topk = static_cast<double>(a.index_topk);
  m.absorbed_c_per_pair = 2 * layers * hq * (a.cached_dim() + rank) / flops;
  m.absorbed_m_per_query = layers * hq * (static_cast<double>(a.cached_dim()) + rank) * d / bw;
  m.naive_c_per_pair = 2 * layers * hq * (qk + v) / flops;
  m.naive_c_per_cached_token = 2 * layers * rank * hq * (static_cast<double>(a.qk_nope_head_dim) + v) / flops;
  m.naive_m_per_key = layers * hq * (qk + v) * d / bw;
  m.naive_m_per_query = layers * hq * (qk + v) * d / bw;
  m.latent_m_per_token = static_cast<double>(model_.latent_kv_bytes_per_token()) / bw;
  m.index_c_per_pair = 2 * layers * static_cast<double>(a.index_n_heads * a.index_head_dim) / flops;
  m.index_m_per_token = static_cast<double>(model_.index_kv_bytes_per_token()) / bw;
}

// Inline: a decode run prices every iteration with it (decode_run_seconds).
inline void RooflineCostModel::add_decode_attention(const BatchShape& batch, RooflinePart& part) const {
  const double seqs = static_cast<double>(batch.decode_seqs);
  const double ctx = static_cast<double>(batch.decode_context_tokens);
  if (one_unbounded_group_ && batch.verify_tokens == 0) {
    // The loop below for one self-attention group without a window and nothing verified
    // (its verify terms add +0.0): every repeat of a decode run of most models.
    const AttentionGroupCost& g = attention_groups_.front();
    part.compute_seconds += ctx * g.c_per_pair;
    part.memory_seconds += (ctx + seqs) * g.m_per_kv_token + seqs * g.m_per_query;
    part.memory_seconds += seqs * state_m_per_seq_;
    return;
  }
  for (const AttentionGroupCost& g : attention_groups_) {
    double pairs = ctx;         // keys read = query-key pairs (one query per sequence)
    double written = seqs;      // the new token's KV
    if (g.kind == alloc::LayerGroupKind::kCrossAttention) {
      pairs = seqs * g.encoder_tokens;
      written = 0;
    } else if (g.window > 0) {
      pairs = std::min(ctx, seqs * g.window);
    }
    // Verified proposals (speculative decoding): more queries over the KV read once.
    const double verify = static_cast<double>(batch.verify_tokens);
    double verify_pairs = 0;
    if (verify > 0 && g.kind != alloc::LayerGroupKind::kCrossAttention) {
      verify_pairs = g.window > 0 ? std::min(batch.verify_attention_pairs, verify * g.window) : batch.verify_attention_pairs;
      written += verify;
    }
    part.compute_seconds += (pairs + verify_pairs) * g.c_per_pair;
    part.memory_seconds += (pairs + written) * g.m_per_kv_token + (seqs + verify) * g.m_per_query;
  }
  part.memory_seconds += seqs * state_m_per_seq_;
}

void RooflineCostModel::latent_attention(const BatchShape& batch, RooflineBreakdown& out) const {
  const LatentAttentionCost& m = mla_;
  if (batch.prefill_seqs > 0) {
    const double q = static_cast<double>(batch.prefill_tokens);
    const double context = static_cast<double>(batch.prefill_context_tokens);
    const double pairs = batch.prefill_attention_pairs;
    RooflinePart& p = out.prefill_attention;
    if (m.sparse) {
      // Absorbed sparse prefill: each query reads at most topk latent keys.
      const double read = std::min(pairs, q * m.topk);
      p.compute_seconds += read * m.absorbed_c_per_pair + pairs * m.index_c_per_pair;
      p.memory_seconds += (std::min(context, q * m.topk) + q) * m.latent_m_per_token + q * m.absorbed_m_per_query +
                          (context + q) * m.index_m_per_token;
    } else {
      // Naive prefill: the cached keys' latents are up-projected to per-head K and V (the new
      // tokens' kv_b runs in the linear part), then multi-head attention over them.
      p.compute_seconds += pairs * m.naive_c_per_pair + (context - q) * m.naive_c_per_cached_token;
      p.memory_seconds += context * m.latent_m_per_token + context * m.naive_m_per_key + q * m.naive_m_per_query;
    }
  }
  if (batch.decode_seqs > 0) {
    const double seqs = static_cast<double>(batch.decode_seqs);
    const double ctx = static_cast<double>(batch.decode_context_tokens);
    const double read = m.sparse ? std::min(ctx, seqs * m.topk) : ctx;
    RooflinePart& p = out.decode_attention;
    p.compute_seconds += read * m.absorbed_c_per_pair + (m.sparse ? ctx * m.index_c_per_pair : 0);
    p.memory_seconds += (read + seqs) * m.latent_m_per_token + seqs * m.absorbed_m_per_query +
                        (m.sparse ? (ctx + seqs) * m.index_m_per_token : 0);
  }
}

RooflineBreakdown RooflineCostModel::breakdown(const BatchShape& batch) const {
  RooflineBreakdown out;
  if (batch.empty()) return out;
  const double tokens = static_cast<double>(batch.total_tokens());
  out.overhead_seconds = gpu_.iteration_overhead_seconds;
  out.allreduce_seconds = allreduce_fixed_ + tokens * allreduce_per_token_;
  out.linear = {tokens * linear_c_per_token_, linear_m_weights_ + tokens * linear_m_per_token_};

  if (model_.mla.enabled()) latent_attention(batch, out);
  if (batch.prefill_seqs > 0) {
    const double q = static_cast<double>(batch.prefill_tokens);
    const double chunks = static_cast<double>(batch.prefill_seqs);
    const double context = static_cast<double>(batch.prefill_context_tokens);
    for (const AttentionGroupCost& g : attention_groups_) {
      // Pairs computed and KV tokens read + written by this group (see the header).
      double pairs = batch.prefill_attention_pairs;
      double kv = context + q;
      if (g.kind == alloc::LayerGroupKind::kCrossAttention) {
        pairs = q * g.encoder_tokens;
        kv = chunks * g.encoder_tokens;
      } else if (g.window > 0) {
        pairs = std::min(pairs, q * g.window);
        kv = std::min(context, chunks * (g.window - 1) + q) + q;
      }
      out.prefill_attention.compute_seconds += pairs * g.c_per_pair;
      out.prefill_attention.memory_seconds += kv * g.m_per_kv_token + q * g.m_per_query;
    }
    out.prefill_attention.memory_seconds += chunks * state_m_per_seq_;
  }
  if (batch.decode_seqs > 0) add_decode_attention(batch, out.decode_attention);
  const double sampled = static_cast<double>(batch.sampling_seqs());
  if (sampled > 0) {
    out.lm_head = {sampled * lm_c_per_seq_, lm_m_weights_ + sampled * lm_m_per_seq_};
  }
  return out;
}

DecodeRunConstant RooflineCostModel::decode_run_constant(const BatchShape& batch) const {
  if (batch.prefill_seqs > 0 || batch.decode_seqs <= 0) return {};
  const RooflineBreakdown b = breakdown(batch);
  // total_seconds(): ((((overhead + allreduce) + linear) + prefill) + decode) + lm_head.
  return {.varies = true,
          .before = b.overhead_seconds + b.allreduce_seconds + b.linear.seconds() + b.prefill_attention.seconds(),
          .after = b.lm_head.seconds()};
}

double RooflineCostModel::decode_run_seconds(const BatchShape& batch, const DecodeRunConstant& c) const {
  if (!c.varies) return iteration_seconds(batch);
  // breakdown()'s decode attention for a batch without prefills.
  RooflineBreakdown out;
  if (model_.mla.enabled()) latent_attention(batch, out);
  add_decode_attention(batch, out.decode_attention);
  return c.before + out.decode_attention.seconds() + c.after;
}

void RooflineCostModel::decode_repeat_seconds(BatchShape batch, const DecodeRunConstant& c, double add_s,
                                              std::span<double> out) const {
  if (!c.varies || model_.mla.enabled() || !one_unbounded_group_ || batch.verify_tokens != 0) {
    CostModel::decode_repeat_seconds(batch, c, add_s, out);
    return;
  }
  // decode_run_seconds' sum, inlined, without its checks and the breakdown it fills.
  for (double& seconds : out) {
    batch.decode_context_tokens += batch.decode_seqs;
    RooflinePart decode;
    add_decode_attention(batch, decode);
    seconds = c.before + decode.seconds() + c.after + add_s;
  }
}

double RooflineCostModel::swap_seconds(std::int64_t blocks, std::int64_t block_size) const {
  return swap_.seconds(blocks, block_size);
}

std::string RooflineCostModel::describe() const {
  return fmt::format(
      "roofline(model={}, gpu={}, tp={}, compute_efficiency={}, memory_efficiency={}, "
      "iteration_overhead={}s)",
      model_.name, gpu_.name, tp_, gpu_.compute_efficiency, gpu_.memory_efficiency,
      gpu_.iteration_overhead_seconds);
}

}  // namespace pagesim::sim
