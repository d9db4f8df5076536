// vLLM's KV budget: the KV pool vLLM's V1 GPU worker sizes at start-up, term by term, for the
// engine versions pagesim models (kv.engine). vLLM (vllm/v1/worker/gpu_worker.py,
// Worker.determine_available_memory, and vllm/utils memory_profiling / MemorySnapshot) takes
//
//   requested  = total · gpu_memory_utilization      total: what cudaMemGetInfo reports
//                                                    (GpuSpec::cuda_total_bytes), not the
//                                                    datasheet's size; snapshot taken in
//                                                    Worker.init_device
//   available  = requested − weights − activation − non_torch − cuda_graphs
//   blocks     = available / (block_size · KV bytes per token per GPU)   (whole blocks,
//                vllm/v1/core/kv_cache_utils.py get_num_blocks / get_kv_cache_config)
//   tokens     = blocks · block_size   ("GPU KV cache size: N tokens")
//
// weights: the model as loaded on one rank ("Model loading took X GiB"): ModelSpec::
//   weight_bytes / tp, quantised experts and blocks at their stored bytes, plus what the
//   mixture-of-experts backend keeps beside them (vllm_moe_backend_bytes).
// activation: the torch peak increase of the profile run (GPUModelRunner.profile_run): one
//   dummy forward pass over max_num_batched_tokens tokens, then the sampler on
//   min(max_num_seqs, max_num_batched_tokens) sequences. Its peak is the larger of the
//   forward pass's (residual and normed hidden state plus the widest MLP intermediates) and
//   the sampler's (the forward's output hidden states plus the sampler's fp32 copies of the
//   [sequences × vocab] logits); the number of those copies is the one term that changed
//   between versions (vllm_profile below).
// non_torch: "non-torch forward increase memory": what the CUDA driver holds beyond PyTorch's
//   allocator after the profile run, less what it held at the init snapshot. The CUDA context
//   is in both snapshots, so it is not subtracted (it sits outside the requested memory);
//   cuBLAS workspaces at TP 1, and NCCL / custom all-reduce buffers at TP > 1, are.
// cuda_graphs: 0 for every version modelled here: vLLM captures its CUDA graphs after the KV
//   cache is allocated, on top of the requested memory, through v0.20 (the estimate is
//   subtracted by default only from v0.21, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS).
//
// Numbers checked against 26 published start-up logs:
// experiments/engine_parity/kv_capacity/ (README.md cites each log). Pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

#include "sim/core/vllm_version.h"
#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"

namespace pagesim::sim {

// How kv.slots: 0 sizes the pool. kPagesim is pagesim's earlier formula (kv_capacity.h:
// hbm_bytes · utilization − weights − kv.activation_reserve_gib); the others are vLLM version
// families whose profiling terms differ (vllm_profile below).
enum class KvEngine {
  kPagesim,   // "pagesim": kv_capacity.h, the datasheet-free formula of before
  kVllm0_10,  // "vllm-0.10": vLLM v0.10 to v0.16
  kVllm0_17,  // "vllm-0.17": vLLM v0.17 to v0.20
};

inline constexpr std::array<std::pair<KvEngine, std::string_view>, 3> kKvEngineNames = {{
    {KvEngine::kPagesim, "pagesim"},
    {KvEngine::kVllm0_10, "vllm-0.10"},
    {KvEngine::kVllm0_17, "vllm-0.17"},
}};

// The experiment key kv.engine: how kv.slots: 0 sizes the pool. kVllm (the default) as the
// vLLM release of the key vllm_version profiles its GPU (vllm_family); kPagesim pagesim's
// earlier formula (kv_capacity.h), which subtracts only the weights and
// kv.activation_reserve_gib.
enum class KvSizing { kVllm, kPagesim };
inline constexpr std::array<std::pair<KvSizing, std::string_view>, 2> kKvSizingNames = {{
    {KvSizing::kVllm, "vllm"},
    {KvSizing::kPagesim, "pagesim"},
}};

// The version family whose profiling terms a vLLM release has: 0.10 to 0.16 kVllm0_10, 0.17
// to 0.20 kVllm0_17. Throws CostModelError for a release outside 0.10 to 0.20: earlier ones
// are unchecked against logs, and from 0.21 vLLM subtracts an estimate of its CUDA graphs,
// which is not modelled.
KvEngine vllm_family(const VllmVersion& v);

// The terms that differ between version families, with the logs they come from (all on
// H100 80GB, max_num_batched_tokens 8192, max_num_seqs 1024; experiments/engine_parity/
// kv_capacity/README.md cites each). They are shared by every model, not fitted per log.
namespace vllm_profile {
// The sampler's peak in fp32 [sequences × vocab] matrices, what the dummy sampler run holds
// at once beyond the logits of the forward pass. Through v0.16 the top-k/top-p path sorts
// the logits (values, int64 indices, probabilities, their cumulative sum, the scattered
// result): 9.6 copies, the same for Llama-3.1-8B, Qwen3 0.6B/14B/32B and gpt-oss-20b/120b
// ((torch peak − hidden states) / (1024 · vocab · 4 B) = 9.56 to 9.73, v0.11.0 and
// v0.15.0/v0.16.0 logs). From v0.17 the sampler's dummy run holds 3.7 (3.67 to 3.74 for
// Llama-3.1-8B, Qwen2.5-7B, Qwen3-8B/14B, Gemma-2 9B/27B, Gemma-7B, gpt-oss-20b, v0.17.0 to
// v0.19.0 logs: Qwen3-14B's activation fell from 5.64 to 2.23 GiB between v0.16.0 and
// v0.17.0 with nothing else changed).
inline constexpr double kSamplerLogitCopiesV0_10 = 9.6;
inline constexpr double kSamplerLogitCopiesV0_17 = 3.7;
// Non-torch increase at TP 1 (cuBLAS and attention-backend workspaces): 0.13 GiB through
// v0.17 (v0.11.0, v0.15.0-v0.17.0 logs), 0.24-0.27 GiB from v0.18 (v0.18.0, v0.19.0 logs);
// the v0.17 family takes 0.25 (its v0.17.0 log is 0.12 GiB, 0.3% of that pool, off).
inline constexpr double kNonTorchTp1GiBV0_10 = 0.13;
inline constexpr double kNonTorchTp1GiBV0_17 = 0.25;
// At TP > 1 the all-reduce buffers (NCCL, vLLM's custom all-reduce) add to it: 0.54-0.55 GiB
// in all at TP 2 (v0.11.0 logs); 2.06-2.11 GiB at TP 2 and 2.13-2.21 at TP 4 (v0.19.0 logs).
inline constexpr double kNonTorchTpNGiBV0_10 = 0.55;
inline constexpr double kNonTorchTpNGiBV0_17 = 2.10;
// Bytes of one fp32 logit.
inline constexpr std::int64_t kLogitBytes = 4;
}  // namespace vllm_profile

// What vLLM's MXFP4 mixture-of-experts path keeps on one rank beyond the checkpoint's
// tensors, in bytes, read from the 0.13.0 and 0.14.0 wheels (vllm/model_executor/layers/
// quantization/mxfp4.py, utils/mxfp4_utils.py, vllm/third_party/triton_kernels). On a GPU of
// compute capability 9.x the Triton backend runs the experts (get_mxfp4_backend: triton_kernels,
// bundled from 0.13, on 9.0 <= capability < 11.0; FlashInfer only on request), and from 0.13,
// whose torch is >= 2.8.1, _swizzle_mxfp4 converts the weights to the Hopper layouts:
//   - the expert biases (ModelSpec::expert_biases) are cast to fp32
//     (process_weights_after_loading, TRITON branch), the bf16 originals freed: 4 bytes each,
//     E · (2 · I_rank + H) a layer;
//   - each scale tensor [E, rows, cols/32] is copied into HopperMXScaleLayout, rows padded to
//     2 · num_warps · 2 · 8 = 256 (num_warps 8) and columns to even (hopper_scale.py
//     swizzle_data), while the loaded scale parameters stay (only w13_weight and w2_weight are
//     deleted): w13's [E, 2 · I_rank, H/32] and w2's [E, H, I_rank/32], one byte each.
// 0 for other models, other GPUs (A100: the Marlin backend, whose padding no log checks),
// and releases before 0.13 (torch 2.8.0: the layouts stay strided, nothing is copied).
// Checked against gpt-oss-120b on one H100 (kv_capacity/README.md): 64.33 GiB of weights
// against the 64.38 its log printed.
std::int64_t vllm_moe_backend_bytes(const ModelSpec& model, const GpuSpec& gpu, int tp, const VllmVersion& version);

struct VllmProfileSettings {
  KvEngine engine = KvEngine::kVllm0_17;  // version family; REQUIRES: not kPagesim
  VllmVersion version{0, 19, 0};          // the release itself, in that family (the MoE
                                          // backend's buffers: vllm_moe_backend_bytes)
  double gpu_memory_utilization = 0.9;    // fraction of the driver-reported memory (0, 1]
  std::int64_t max_num_batched_tokens = 8192;  // tokens of the profile run's forward pass
                                               // (vLLM's serve default on >= 70 GiB GPUs)
  std::int64_t max_num_seqs = 1024;       // sequences the profile run samples (same source)
  std::int64_t block_size = 16;           // tokens per KV block
  std::int64_t max_model_len = 0;         // tokens, for max_concurrency; 0 = not reported
  std::int64_t activation_override_bytes = 0;  // > 0: use this instead of the modelled peak
  // Weights loaded beside the model on this rank (bytes, >= 0): a speculative drafter's. vLLM
  // loads the drafter inside load_model's memory profile (v1/worker/gpu_model_runner.py:
  // load_model calls drafter.load_model under the same DeviceMemoryProfiler), so "Model
  // loading took" and the KV budget both count it.
  std::int64_t draft_weight_bytes = 0;
};

// The derivation as vLLM's log prints it; sizes per GPU (bytes).
struct VllmKvBudget {
  std::int64_t total_bytes = 0;         // driver-reported device memory
  std::int64_t requested_bytes = 0;     // total · utilization ("requested memory")
  std::int64_t weight_bytes = 0;        // weights on this rank ("Model loading took"), the
                                        // drafter's included
  std::int64_t draft_weight_bytes = 0;  // of which the drafter's (settings.draft_weight_bytes)
  std::int64_t activation_bytes = 0;    // "torch peak memory increase"
  std::int64_t non_torch_bytes = 0;     // "non-torch forward increase memory"
  std::int64_t cuda_graph_bytes = 0;    // graphs subtracted before the KV cache (0 here)
  std::int64_t kv_bytes = 0;            // "Available KV cache memory"
  std::int64_t kv_bytes_per_token = 0;  // ModelSpec::kv_bytes_per_token_per_gpu
  std::int64_t blocks = 0;              // whole blocks in kv_bytes
  std::int64_t tokens = 0;              // blocks · block_size ("GPU KV cache size")
  double max_concurrency = 0;           // tokens / max_model_len ("Maximum concurrency")
};

// Throws CostModelError when a spec is invalid, tp does not fit the model, a setting is out
// of range, engine is kPagesim, or the terms leave no room for one block (naming each term).
VllmKvBudget vllm_kv_budget(const ModelSpec& model, const GpuSpec& gpu, int tp,
                            const VllmProfileSettings& settings);

// The profile run's torch peak increase on one GPU (bytes), as described above.
// REQUIRES: model.check_tensor_parallel(tp) passes, tokens and seqs >= 1, engine not kPagesim.
std::int64_t vllm_profile_activation_bytes(const ModelSpec& model, int tp, KvEngine engine,
                                           std::int64_t max_num_batched_tokens,
                                           std::int64_t max_num_seqs);

// The non-torch increase of `engine` at tensor parallelism tp (bytes).
std::int64_t vllm_non_torch_bytes(KvEngine engine, int tp);

}  // namespace pagesim::sim
