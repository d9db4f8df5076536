// RooflineCostModel: iteration time from FLOP and byte counts of a model on a GPU.
//
// An iteration costs
//   overhead + all-reduce + Σ_part max(FLOPs_part / (peak·compute_eff),
//                                      bytes_part / (HBM bw·memory_eff))
// over four parts, each one kernel family that is either compute- or memory-bound. Per GPU,
// with tensor-parallel degree t, N = batch.total_tokens(), S = batch.sampling_seqs(),
// P = model.nonembedding_params(), d = dtype_bytes, L = layers, Hq = heads/t query heads and
// Dkv = 2·L·kv_heads_per_gpu·head_dim·d KV bytes per token:
//   linear   FLOPs 2·P·N/t;  bytes P·d/t (weights, read once per iteration) + N·(activations
//            in and out of every projection, per layer, sharded as Megatron-style TP shards
//            them)·d
//   prefill attention  FLOPs 4·L·Hq·head_dim·pairs (QKᵀ and PV, 2 FLOPs per multiply-add);
//            bytes Dkv·(prefill_context_tokens + prefill_tokens) (KV read once per chunk, new
//            KV written) + 2·L·Hq·head_dim·d·prefill_tokens (Q read, O written)
//   decode attention   FLOPs 4·L·Hq·head_dim·decode_context_tokens; bytes
//            Dkv·(decode_context_tokens + decode_seqs) + 2·L·Hq·head_dim·d·decode_seqs
//   lm head  FLOPs 2·hidden·vocab·S/t; bytes hidden·vocab·d/t + S·(hidden + vocab/t)·d; S
//            counts decode sequences and only the prefill chunks that complete their prompt
//   all-reduce (t > 1 only) two per layer (after attention and after the MLP), ring
//            algorithm: 2·L·(allreduce_latency + 2·(t−1)/t·N·hidden·d / (NVLink bw·nvlink_eff))
// Left out as small: embedding lookup (N rows), norms and activations' elementwise kernels,
// the logits gather across GPUs, sampling (inside overhead).
//
// Layer groups (ModelSpec::groups; a uniform model is one full group and the formulas above):
// the attention terms are summed over the attending groups, each with its own L, head_dim and
// KV bytes per token (in the model's kv_dtype), and each reads only the keys it attends:
//   sliding window W / chunked local C: a query reads at most W (C) keys, so decode reads
//            min(Σc, seqs·W) keys and computes as many pairs; a prefill chunk reads at most
//            min(Σ(h+q), chunks·(W−1) + Σq) keys and computes min(pairs, Σq·W) pairs. These
//            batch-level minima bound Σ min(c_i, W) from above and equal it when every
//            sequence is on the same side of W (BatchShape keeps sums, not per-sequence values)
//   cross-attention over E encoder keys: each query reads the request's E keys (decode
//            seqs·E, prefill chunks·E keys; Σq·E pairs); no KV written per token
//   recurrent: each sequence in the batch reads and writes its state once (2·state_bytes),
//            as memory traffic of the attention part; the scan's FLOPs are left out
// Mixture of experts: the linear FLOPs use the active parameters (active_nonembedding_params),
// the weight read all of them (nonembedding_weight_bytes: a batch of many tokens touches
// every expert; a batch of one reads only active_experts of them, so small batches are
// costed high).
// Latent attention (ModelSpec::mla), as vLLM runs it (vllm/model_executor/layers/attention/
// mla_attention.py: "compute-friendly" naive prefill, "data-movement friendly" absorbed decode),
// per GPU with Hq = heads/t, rank r = kv_lora_rank, rope ρ, L layers, and the latent bytes per
// token Dlat (whole on every GPU, latent_attention.h):
//   decode (absorbed MQA over the latent): FLOPs 2·L·Hq·((r + ρ) + r) per query-key pair (QKᵀ
//            over r + ρ, PV over r); bytes Dlat·(c + seqs) + L·Hq·(2r + ρ)·d per query. The
//            absorption GEMMs (W_UK, W_UV: kv_b's weights) are kv_b's FLOPs, in the linear part
//   prefill (naive): the cached keys' latents are up-projected by kv_b (2·L·r·Hq·(nope + v)
//            FLOPs per cached token; the new tokens' run in the linear part), then multi-head
//            attention with qk = nope + ρ and v: 2·L·Hq·(qk + v) FLOPs per pair; bytes Dlat per
//            key read or written + L·Hq·(qk + v)·d per key (per-head K, V) and per query
//   sparse (DeepSeek-V3.2, FlashMLA's sparse kernels): prefill and decode absorbed, each query
//            reading at most index_topk keys (pairs and keys capped as a window of topk); the
//            indexer scores every causal pair with 2·L·index_heads·index_dim FLOPs (replicated
//            on every rank; fp8 in vLLM, priced at the GPU's bf16 peak) and reads and writes
//            its keys (L · 132 bytes per token)
// MoE layers: as above (active parameters' FLOPs, every expert's weights read).
// Swap: each GPU copies its share of the KV over its own PCIe link, in parallel:
//   blocks·block_size·Dkv / pcie + blocks·swap_block_overhead (pcie_swap_cost.h).
//
// Every coefficient is computed once in the constructor; iteration_seconds is a few dozen
// flops, no allocation. Immutable after construction; safe to share between threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/cost/batch_shape.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/pcie_swap_cost.h"

namespace pagesim::sim {

// One kernel family's two roofline bounds.
struct RooflinePart {
  double compute_seconds = 0;  // FLOPs / achieved FLOP/s (seconds)
  double memory_seconds = 0;   // bytes / achieved HBM bytes/s (seconds)

  double seconds() const { return std::max(compute_seconds, memory_seconds); }
  bool compute_bound() const { return compute_seconds > memory_seconds; }
};

// An iteration's cost, term by term (all in seconds).
struct RooflineBreakdown {
  double overhead_seconds = 0;   // fixed per iteration (0 for an empty batch)
  double allreduce_seconds = 0;  // tensor-parallel communication (0 when tp == 1)
  RooflinePart linear;
  RooflinePart prefill_attention;
  RooflinePart decode_attention;
  RooflinePart lm_head;

  double total_seconds() const {
    return overhead_seconds + allreduce_seconds + linear.seconds() +
           prefill_attention.seconds() + decode_attention.seconds() + lm_head.seconds();
  }
};

// cost.kind roofline's settings: overrides of the GPU preset's efficiencies and per-iteration
// overhead, each kept from the preset when < 0 (the default).
struct RooflineCostSettings {
  double compute_efficiency = -1;    // fraction of peak FLOPS reached, in (0, 1]
  double memory_efficiency = -1;     // fraction of peak HBM bandwidth reached, in (0, 1]
  double iteration_overhead_s = -1;  // fixed seconds per non-empty iteration, >= 0
  // `gpu` with the overrides that are set laid over it.
  GpuSpec applied_to(GpuSpec gpu) const {
    if (compute_efficiency >= 0) gpu.compute_efficiency = compute_efficiency;
    if (memory_efficiency >= 0) gpu.memory_efficiency = memory_efficiency;
    if (iteration_overhead_s >= 0) gpu.iteration_overhead_seconds = iteration_overhead_s;
    return gpu;
  }
  bool operator==(const RooflineCostSettings&) const = default;
};

class RooflineCostModel final : public CostModel {
 public:
  // Throws CostModelError when model or gpu fails validate() or tp does not fit the model
  // (ModelSpec::check_tensor_parallel).
  RooflineCostModel(ModelSpec model, GpuSpec gpu, int tp = 1);

  double iteration_seconds(const BatchShape& batch) const override {
    return breakdown(batch).total_seconds();
  }
  // The terms of iteration_seconds(batch); all zero for an empty batch.
  RooflineBreakdown breakdown(const BatchShape& batch) const;
  // Decode-only batches: every term but decode attention once (total_seconds()'s sum, in its
  // order, around it).
  DecodeRunConstant decode_run_constant(const BatchShape& batch) const override;
  double decode_run_seconds(const BatchShape& batch, const DecodeRunConstant& c) const override;
  void decode_repeat_seconds(BatchShape batch, const DecodeRunConstant& c, double add_s,
                             std::span<double> out) const override;
  double swap_seconds(std::int64_t blocks, std::int64_t block_size) const override;
  std::string describe() const override;

  const ModelSpec& model() const { return model_; }
  const GpuSpec& gpu() const { return gpu_; }
  int tp() const { return tp_; }

 private:
  ModelSpec model_;
  GpuSpec gpu_;
  int tp_;

  // Seconds per unit, precomputed: c_ = compute bound, m_ = memory bound.
  double linear_c_per_token_ = 0;       // 2·P/t FLOPs per token
  double linear_m_weights_ = 0;         // weight read, once per iteration
  double linear_m_per_token_ = 0;       // activations per token
  // One attending layer group's attention, seconds per unit.
  struct AttentionGroupCost {
    alloc::LayerGroupKind kind = alloc::LayerGroupKind::kFull;
    double window = 0;           // W or C keys a query reads at most; 0 = unbounded
    double encoder_tokens = 0;   // kCrossAttention: keys per request
    double c_per_pair = 0;       // 4·L_g·Hq·head_dim_g FLOPs per query-key pair
    double m_per_kv_token = 0;   // the group's KV bytes per token, read or written
    double m_per_query = 0;      // Q read + O written per query token
  };
  std::vector<AttentionGroupCost> attention_groups_;  // in the model's group order
  // One group that attends to every key of its sequence (no window, not cross-attention):
  // add_decode_attention's short path.
  bool one_unbounded_group_ = false;
  double state_m_per_seq_ = 0;          // recurrent state read + written per sequence
  double lm_c_per_seq_ = 0;             // 2·hidden·vocab/t FLOPs per sampled sequence
  double lm_m_weights_ = 0;             // LM head weight read, once per iteration
  double lm_m_per_seq_ = 0;             // hidden in + logits out per sampled sequence
  double allreduce_fixed_ = 0;          // 2·L latencies (t > 1)
  double allreduce_per_token_ = 0;      // 2·L ring transfers of hidden·d bytes (t > 1)
  PcieSwapCost swap_;                   // Dkv bytes over PCIe, per-block overhead

  // Latent attention, seconds per unit (see the header); unused without ModelSpec::mla.
  struct LatentAttentionCost {
    bool sparse = false;
    double topk = 0;
    double absorbed_c_per_pair = 0, absorbed_m_per_query = 0;
    double naive_c_per_pair = 0, naive_c_per_cached_token = 0, naive_m_per_key = 0, naive_m_per_query = 0;
    double latent_m_per_token = 0;
    double index_c_per_pair = 0, index_m_per_token = 0;
  };
  LatentAttentionCost mla_;
  double mla_projection_elements() const;
  void init_latent_attention();
  void latent_attention(const BatchShape& batch, RooflineBreakdown& out) const;
  // Adds decode attention's bounds (every attention group and per-sequence state) to part.
  // REQUIRES: batch.decode_seqs > 0.
  void add_decode_attention(const BatchShape& batch, RooflinePart& part) const;
};

}  // namespace pagesim::sim
