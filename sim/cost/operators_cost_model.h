// OperatorsCostModel: an iteration's time as the sum of vLLM's operators, each looked up in a
// table of latencies measured inside vLLM (operator_tables/, imported from aiconfigurator;
// operator_table.h interpolates), plus the engine's host time.
//
// One iteration on one GPU of tensor-parallel degree t, with N = batch.total_tokens(),
// M = N padded to vLLM's CUDA-graph capture size (cuda_graph_sizes.h; M = N above the largest
// size), S = batch.sampling_seqs(), L = layers, h = hidden, heads and kv heads per GPU
// n = heads/t, n_kv = ModelSpec::kv_heads_per_gpu(t) (the composition of aiconfigurator's
// LLAMAModel and MOEModel, sdk/models/llama.py and sdk/models/moe.py):
//   gemm      per layer, GEMMs of M rows under Megatron sharding: qkv (n = (n + 2·n_kv)·head_dim,
//             k = h), o_proj (n = h, k = n·head_dim); dense MLP layers gate_up (n = 2·ffn/t,
//             k = h; OPT's up: ffn/t) and down (n = h, k = ffn/t); MoE layers the router
//             (n = experts, k = h, bf16 as aiconfigurator's sdk/models/blocks/moe.py) and, with
//             shared experts, their gate_up and down at width shared·expert_ffn. Weights' dtype:
//             bfloat16 for dtype_bytes 2, fp8 for 1.
//   lm_head   one GEMM of S rows (n = vocab/t, k = h), bf16 (llama.py's logits_gemm), unpadded:
//             vLLM computes logits outside the graph for the sampled positions only
//   moe       per MoE layer, the fused-MoE table at num_tokens M for (h, expert_ffn, top-k,
//             experts, moe_tp = t, moe_ep = 1); expert dtype from expert_weight_bytes. A shape
//             the table lacks takes the measured shape of its dtype and moe_tp with the nearest
//             share top-k/experts (then nearest expert bytes), scaled by the ratio of
//             experts·h·expert_ffn: at an equal share both the weights read and the FLOPs scale
//             so (a share more than 10% away is refused). Every such lookup counts as
//             extrapolated; describe() names the shape used
//   attention per attending layer group (full, sliding window, chunked local), from the
//             batch's sums (BatchShape keeps no per-sequence lengths), unpadded (attention
//             runs outside PIECEWISE graphs):
//             decode: `decode_seqs` sequences at the mean context c̄ = decode_context_tokens /
//               decode_seqs (min(c̄, W) for a window W): decode attention is ~affine in each
//               sequence's context, so the mean gives the sum
//             prefill: `prefill_seqs` equivalent chunks of the mean full length
//               s̄ = prefill_context_tokens / prefill_seqs (min(s̄, W)), scaled by
//               pairs / (prefill_seqs · s̄(s̄+1)/2), the ratio of the batch's causal query-key
//               pairs (min(pairs, prefill_tokens·W)) to those of the equivalent chunks: 1 for
//               one chunk without a cached prefix; for a chunk after h cached tokens, the
//               ((h+q)² − h²)/(h+q)² of aiconfigurator's prefix correction (attention.rs
//               query_context)
//             MHA layers (n == n_kv) read the table's rows with num_heads == num_kv_heads over
//             (num_heads, batch, length); GQA layers the other rows over (num_kv_heads,
//             num_heads, batch, length). Decode was measured for kv heads 1, 2, 4, 8 and MHA
//             up to 8 heads; more kv heads than a table measured (llama-2-7b's 32) fold into
//             the batch: (n, n_kv, b) → (n/f, n_kv/f, f·b), f = n_kv / the most measured. The
//             folded shape reads the same KV bytes, does the same FLOPs and has the same
//             (sequence, kv head) work items that FlashAttention's decode kernel spreads over
//             the GPU; it keeps the measured launch floor once, where scaling the latency by f
//             (aiconfigurator's util hold, or plain proportion) would count it f times, and
//             linear growth from the last two head counts would outrun the HBM bandwidth
//   allreduce t > 1 only: 2·L + 1 custom all-reduces (after attention and after the MLP in
//             every layer, and the vocab-parallel embedding's; llama.py context_ar_1/2,
//             context_embedding_ar) of M·h bf16 elements
//   mla       latent-attention models (ModelSpec::mla): the GEMMs are MLA's projections
//             (fused_qkv_a or q + kv_a, q_b, o_proj, the indexer's wq_b and wk) at the blocks'
//             weight dtype (block_weight_bytes). The attention is the tables' context_mla /
//             generation_mla (vLLM's MLA impl forward, kv_b's up-projection or absorption
//             included, so no kv_b GEMM), looked up like MHA attention at (heads per GPU,
//             batch, length) for every layer, where they measured the model: DeepSeek-V3's
//             shape (kv_lora_rank 512, rope 64, nope 128, v 128), dense. Otherwise (V3.2's
//             sparse attention, other shapes, tables without them) kv_b is a GEMM and the
//             attention is RooflineCostModel's MLA terms (absorbed decode, naive prefill,
//             sparse V3.2), counted in context/generation attention. describe() says which.
//             The measured decode holds a ~130-220 µs floor per layer at small batches (the
//             impl's eager forward as the collector timed it, not the kernel alone).
//   memory ops (settings.memory_ops) the kernels no table holds, priced as aiconfigurator prices
//             them (operators/attention.rs mem_op_latency_ms, with systems/<gpu>.yaml's
//             mem_bw_empirical_scaling_factor 0.8 and mem_empirical_constant_latency 3 µs, the
//             same for every GPU it models): bytes / (0.8 · HBM bandwidth) + 3 µs per call, over
//             M tokens. Per layer the two fused residual-add + RMSNorm calls (8·h bytes per token
//             each: sdk/models/llama.py and moe.py add_norm_1/2) and, in dense MLP layers, the
//             activation (act_gate: (2·w_in + 2·w_out) bytes per token, w_in = 2·ffn/t gated, else
//             ffn/t; w_out = ffn/t); once per iteration the embedding lookup (2·h bytes per
//             token). The 3 µs floor is the part that grows with the layer count: 9 µs per dense
//             layer, where decode batches move a few hundred kB
// Left out: rotary embedding and the KV-cache write (inside vLLM's attention custom ops, which
// the attention tables timed), sampling (host time below).
//   iteration = gpu_scale · Σ operators + host_step_s + host_per_seq_s · (prefill_seqs +
//               decode_seqs)          (0 for an empty batch)
//   swap      = pcie_swap_cost.h (the roofline's PCIe formula)
// Host time is the part of vLLM's engine step when the GPU waits on the CPU: the scheduler's
// schedule(), building the input tensors and attention metadata, the sampler and detokenising
// outputs (EngineCore.step: schedule → execute_model → update_from_output). host_step_s is
// its fixed part per iteration, host_per_seq_s the part that grows with each scheduled
// sequence. gpu_scale multiplies the measured operators' sum (kernel gaps, the ops left out,
// another engine version). Both default to none (0, 0, 1): they are calibration coefficients.
//
// Every lookup outside its table's measured range is counted per operator (notes()); a
// lookup is one operator at one shape, whatever its layer count. An operator without any
// data for the model (no table file, a GPU or engine folder that does not exist, a head_dim,
// dtype, MoE shape or all-reduce width the tables lack) is refused at construction with a
// CostModelError naming the operator, the shape and the file. Immutable after construction
// but for the relaxed atomic lookup counters; iteration_seconds allocates nothing and is safe
// from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cost/batch_shape.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/cuda_graph_sizes.h"
#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/operator_table.h"
#include "sim/cost/pcie_swap_cost.h"
#include "sim/cost/roofline_cost_model.h"

namespace pagesim::sim {

// cost.kind operators' settings as an experiment gives them (cost.operators and cost.host);
// make_cost_model resolves them, with the run's GPU and batch limits, into the parameters
// below.
struct OperatorsCostSettings {
  std::string tables;                  // folder of <gpu>/<engine>/ tables; "": the source tree's
                                       // sim/cost/operator_tables
  std::string engine = "vllm-0.14.0";  // engine folder (the serving engine and version measured)
  std::string gpu;                     // table folder of the GPU; "": from the gpu preset
                                       // (operator_table_gpu)
  // Largest CUDA-graph capture size (tokens): -1 = vLLM's default min(2 · max_num_seqs, 512)
  // from the scheduler's limits; 0 = no graphs (every batch eager, unpadded); N = that size.
  // Capped at max_num_batched_tokens as vLLM caps it (cuda_graph_sizes.h).
  std::int64_t cuda_graph_max_size = -1;
  // Multiplies the summed operator time (> 0): a calibration coefficient for what the tables
  // leave out (kernel gaps, norms, another engine version). 1 = the tables as measured.
  double gpu_scale = 1.0;
  // Price the memory-bound kernels no table holds (norms, activation, embedding) by
  // aiconfigurator's formula (above); false leaves them out.
  bool memory_ops = true;
  // The serving engine's host time per step, when the GPU waits on the CPU (above):
  // calibration coefficients, >= 0; 0 = none.
  double host_step_s = 0;     // seconds per non-empty iteration
  double host_per_seq_s = 0;  // seconds per scheduled sequence (prefill chunks + decodes)
  bool operator==(const OperatorsCostSettings&) const = default;
};

// What the model is built from: OperatorsCostSettings with the folders and CUDA-graph sizes
// resolved.
struct OperatorsCostParams {
  std::filesystem::path tables;        // the folder of <gpu>/<engine>/ tables (required)
  std::string gpu;                     // table folder of the GPU, e.g. "h100_sxm" (required)
  std::string engine = "vllm-0.14.0";  // engine folder under the GPU's
  CudaGraphSizes cuda_graphs;          // capture sizes; default none (every batch eager)
  double gpu_scale = 1.0;              // multiplies Σ operator seconds; > 0, finite
  double host_step_s = 0;              // host seconds per non-empty iteration; >= 0, finite
  double host_per_seq_s = 0;           // host seconds per scheduled sequence; >= 0, finite
  bool memory_ops = true;              // price the memory-bound ops (norms, activation, embedding)
};

// The operators counted in notes(), in this order.
enum class Operator { kGemm, kContextAttention, kGenerationAttention, kMoe, kAllreduce, kCount };
inline constexpr std::array<std::string_view, static_cast<std::size_t>(Operator::kCount)> kOperatorNames = {
    "gemm", "context_attention", "generation_attention", "moe", "allreduce"};

// One iteration's time, operator by operator (seconds, before gpu_scale but gpu_seconds).
struct OperatorsBreakdown {
  double gemm_seconds = 0;                  // every layer's GEMMs, router and shared experts
  double lm_head_seconds = 0;
  double context_attention_seconds = 0;
  double generation_attention_seconds = 0;
  double moe_seconds = 0;
  double allreduce_seconds = 0;
  double memory_op_seconds = 0;             // norms, activation, embedding (memory ops above)
  double gpu_seconds = 0;                   // gpu_scale · the seven above
  double host_seconds = 0;
  std::int64_t tokens = 0;                  // N
  std::int64_t padded_tokens = 0;           // M

  double total_seconds() const { return gpu_seconds + host_seconds; }
};

class OperatorsCostModel final : public CostModel {
 public:
  // Reads the tables the model needs from settings.tables / gpu / engine. Throws
  // CostModelError for an invalid model, GPU, tp or setting, a missing folder or table, or an
  // operator of the model without data; ProfileFormatError for a malformed table.
  OperatorsCostModel(ModelSpec model, GpuSpec gpu, int tp, OperatorsCostParams settings);
  ~OperatorsCostModel() override;

  double iteration_seconds(const BatchShape& batch) const override { return breakdown(batch).total_seconds(); }
  // The terms of iteration_seconds(batch), counted in notes() as iteration_seconds is; all
  // zero for an empty batch.
  OperatorsBreakdown breakdown(const BatchShape& batch) const;
  double swap_seconds(std::int64_t blocks, std::int64_t block_size) const override;
  std::string describe() const override;
  CostNotes notes() const override;

  // The folder the tables were read from: tables/gpu/engine.
  const std::filesystem::path& folder() const { return folder_; }

 private:
  struct GemmOp;
  struct AttentionGroup;
  struct Tally;

  GridLookup lookup(const OperatorGrid& grid, std::span<const double> coords, Operator op, Tally& tally) const;
  // The rows of the measured MoE shape that stands in for the model's unmeasured one (same
  // dtype and moe_tp, nearest top-k / experts, then nearest expert bytes), setting
  // moe_transfer_scale_ and moe_transfer_from_; empty when the table has none of that dtype
  // and moe_tp. Constructor only.
  std::vector<std::size_t> transfer_moe_shape(const OperatorTable& moe, const std::string& dtype);
  // MLA's projection GEMMs (latent-attention models); kv_b only when the roofline prices the
  // attention (the tables' MLA operator includes it). Constructor only.
  void add_mla_gemms(const OperatorGrid* weights, bool with_kv_b);

  ModelSpec model_;
  GpuSpec gpu_;
  int tp_;
  OperatorsCostParams settings_;
  std::filesystem::path folder_;
  PcieSwapCost swap_;

  std::vector<std::unique_ptr<OperatorGrid>> gemm_grids_;  // one per weight dtype used
  std::vector<GemmOp> gemms_;
  std::vector<AttentionGroup> attention_;
  std::unique_ptr<OperatorGrid> moe_grid_;                 // null for a dense model
  double moe_layers_ = 0;
  double moe_transfer_scale_ = 0;  // > 0: the MoE grid is another shape's, times this
  std::string moe_transfer_from_;  // that shape, for describe()
  std::unique_ptr<OperatorGrid> allreduce_grid_;           // null when tp == 1
  std::unique_ptr<RooflineCostModel> mla_roofline_;        // MLA attention's price; else null
  std::string mla_roofline_why_;                           // why the tables can't price MLA ("" if they can)
  double allreduces_ = 0;                                  // per iteration
  double memory_op_calls_ = 0;                             // memory-op kernels per iteration
  double memory_op_bytes_per_token_ = 0;                   // their bytes per (padded) token

  static constexpr std::size_t kOps = static_cast<std::size_t>(Operator::kCount);
  mutable std::array<std::atomic<std::int64_t>, kOps> lookups_{};
  mutable std::array<std::atomic<std::int64_t>, kOps> extrapolated_{};
};

// The table folder of a GPU preset (presets.h): h100-sxm → h100_sxm, h200 → h200_sxm,
// a100-80gb → a100_sxm, l40s → l40s (the devices aiconfigurator measured: "NVIDIA H100 80GB
// HBM3", ...). nullopt for a preset with no measured counterpart (a100-40gb: the tables'
// A100 has 80 GB at 2.0 TB/s, not 1.6).
std::optional<std::string_view> operator_table_gpu(std::string_view gpu_preset);

// The subfolders of `dir`, sorted (the GPUs of a tables folder, or the engines of a GPU);
// empty when `dir` is not a folder.
std::vector<std::string> operator_table_folders(const std::filesystem::path& dir);

// sim/cost/operator_tables of the source tree this binary was built from.
std::filesystem::path default_operator_tables();

}  // namespace pagesim::sim
