#include "sim/cost/vllm_kv_budget.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

KvEngine vllm_family(const VllmVersion& v) {
  if (v >= VllmVersion{0, 10, 0} && v < VllmVersion{0, 17, 0}) return KvEngine::kVllm0_10;
  if (v >= VllmVersion{0, 17, 0} && v < VllmVersion{0, 21, 0}) return KvEngine::kVllm0_17;
  throw CostModelError(fmt::format(
      "vLLM's KV budget is modelled for releases 0.10 to 0.20 (checked against their start-up logs; from 0.21 "
      "vLLM also subtracts an estimate of its CUDA graphs), but vllm_version is {}: set kv.slots, or kv.engine: "
      "pagesim for pagesim's own formula",
      format_vllm_version(v)));
}


namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::int64_t gib_bytes(double gib) { return static_cast<std::int64_t>(std::llround(gib * kGiB)); }

double sampler_copies(KvEngine engine) {
  return engine == KvEngine::kVllm0_10 ? vllm_profile::kSamplerLogitCopiesV0_10
                                       : vllm_profile::kSamplerLogitCopiesV0_17;
}

// Elements per token of the widest MLP intermediates one block holds at once on one GPU: a
// dense gated MLP holds gate‖up (2·ffn) and its activation (ffn); a fused MoE holds, for each
// of the token's active experts, gate‖up (2·N), the activation (N) and the expert's output
// (hidden), N = expert_ffn / tp (vLLM's fused_moe workspaces, intermediate_cache1..3).
std::int64_t mlp_peak_elements(const ModelSpec& m, int tp) {
  const std::int64_t in_matrices = m.gated_mlp ? 2 : 1;
  std::int64_t widest = 0;
  if (m.moe_layers < m.layers) widest = (in_matrices + 1) * m.ffn / tp;
  if (m.moe_layers > 0) {
    const std::int64_t n = m.expert_ffn / tp;
    const std::int64_t per_expert = (in_matrices + 1) * n + m.hidden;
    widest = std::max(widest, (m.active_experts + m.shared_experts) * per_expert);
  }
  return widest;
}

}  // namespace

std::int64_t vllm_non_torch_bytes(KvEngine engine, int tp) {
  const bool v0_10 = engine == KvEngine::kVllm0_10;
  if (tp <= 1) return gib_bytes(v0_10 ? vllm_profile::kNonTorchTp1GiBV0_10 : vllm_profile::kNonTorchTp1GiBV0_17);
  return gib_bytes(v0_10 ? vllm_profile::kNonTorchTpNGiBV0_10 : vllm_profile::kNonTorchTpNGiBV0_17);
}

std::int64_t vllm_profile_activation_bytes(const ModelSpec& m, int tp, KvEngine engine,
                                           std::int64_t max_num_batched_tokens, std::int64_t max_num_seqs) {
  const std::int64_t tokens = max_num_batched_tokens;
  // The forward pass: the residual stream and the normed hidden state of every token, and the
  // MLP's intermediates (model dtype).
  const std::int64_t forward = tokens * (2 * m.hidden + mlp_peak_elements(m, tp)) * m.dtype_bytes;
  // The sampler: the forward's output hidden states stay alive while it samples
  // min(max_num_seqs, max_num_batched_tokens) sequences over the whole vocabulary (the
  // logits are gathered across TP ranks, so every rank holds all of them).
  const std::int64_t seqs = std::min(max_num_seqs, max_num_batched_tokens);
  const double logits = static_cast<double>(seqs) * static_cast<double>(m.vocab) * vllm_profile::kLogitBytes;
  const std::int64_t sampler = tokens * m.hidden * m.dtype_bytes +
                               static_cast<std::int64_t>(std::llround(sampler_copies(engine) * logits));
  return std::max(forward, sampler);
}

std::int64_t vllm_moe_backend_bytes(const ModelSpec& model, const GpuSpec& gpu, int tp, const VllmVersion& version) {
  const bool mxfp4 = model.moe_layers > 0 && model.expert_weight_bytes == kMxfp4WeightBytes;
  if (!mxfp4 || gpu.compute_capability / 10 != 9 || version < VllmVersion{0, 13, 0}) return 0;
  constexpr std::int64_t kScaleRowAlign = 2 * 8 * 2 * 8;  // 2 · num_warps · 2 · 8, num_warps 8
  const auto round_up = [](std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; };
  const std::int64_t h = model.hidden, i = (model.expert_ffn + tp - 1) / tp;  // I sharded by rank
  const std::int64_t scales = round_up(2 * i, kScaleRowAlign) * round_up(h / 32, 2) +  // w13
                              round_up(h, kScaleRowAlign) * round_up(i / 32, 2);       // w2
  // The biases, which ModelSpec's counts leave out, in fp32.
  const std::int64_t biases = model.expert_biases ? (2 * i + h) * 4 : 0;
  return model.moe_layers * model.experts * (scales + biases);
}

VllmKvBudget vllm_kv_budget(const ModelSpec& model, const GpuSpec& gpu, int tp, const VllmProfileSettings& s) {
  model.validate();
  gpu.validate();
  model.check_tensor_parallel(tp);
  if (s.engine == KvEngine::kPagesim)
    throw CostModelError("vllm_kv_budget: engine 'pagesim' is kv_capacity's formula, expected a vLLM version family");
  if (!(s.gpu_memory_utilization > 0 && s.gpu_memory_utilization <= 1))
    throw CostModelError(fmt::format("gpu_memory_utilization is {}, expected a fraction in (0, 1]",
                                     s.gpu_memory_utilization));
  if (s.max_num_batched_tokens < 1 || s.max_num_seqs < 1)
    throw CostModelError(fmt::format("max_num_batched_tokens {} and max_num_seqs {}: expected both >= 1",
                                     s.max_num_batched_tokens, s.max_num_seqs));
  if (s.block_size < 1) throw CostModelError(fmt::format("block_size is {}, expected >= 1 token", s.block_size));
  if (s.max_model_len < 0 || s.activation_override_bytes < 0 || s.draft_weight_bytes < 0)
    throw CostModelError(fmt::format("max_model_len {}, activation_override_bytes {} and draft_weight_bytes {}: "
                                     "expected all >= 0",
                                     s.max_model_len, s.activation_override_bytes, s.draft_weight_bytes));

  VllmKvBudget b;
  b.total_bytes = gpu.cuda_total_bytes > 0 ? gpu.cuda_total_bytes : gpu.hbm_bytes;
  b.requested_bytes = static_cast<std::int64_t>(static_cast<double>(b.total_bytes) * s.gpu_memory_utilization);
  b.draft_weight_bytes = s.draft_weight_bytes;
  b.weight_bytes =
      (model.weight_bytes() + tp - 1) / tp + vllm_moe_backend_bytes(model, gpu, tp, s.version) + s.draft_weight_bytes;
  b.activation_bytes = s.activation_override_bytes > 0
                           ? s.activation_override_bytes
                           : vllm_profile_activation_bytes(model, tp, s.engine, s.max_num_batched_tokens, s.max_num_seqs);
  b.non_torch_bytes = vllm_non_torch_bytes(s.engine, tp);
  b.cuda_graph_bytes = 0;
  b.kv_bytes = b.requested_bytes - b.weight_bytes - b.activation_bytes - b.non_torch_bytes - b.cuda_graph_bytes;
  b.kv_bytes_per_token = model.kv_bytes_per_token_per_gpu(tp);
  std::int64_t block_bytes = 0;
  const bool fits = !__builtin_mul_overflow(b.kv_bytes_per_token, s.block_size, &block_bytes);
  b.blocks = b.kv_bytes > 0 && fits ? b.kv_bytes / block_bytes : 0;
  b.tokens = b.blocks * s.block_size;
  b.max_concurrency = s.max_model_len > 0 ? static_cast<double>(b.tokens) / static_cast<double>(s.max_model_len) : 0;
  if (b.blocks < 1) {
    throw CostModelError(fmt::format(
        "{} on {} (tp={}): requested {:.2f} GiB − weights {:.2f} GiB − activation {:.2f} GiB − non-torch {:.2f} "
        "GiB leaves {:.2f} GiB, expected room for at least one KV block of {} tokens × {} B",
        model.name, gpu.name, tp, b.requested_bytes / kGiB, b.weight_bytes / kGiB, b.activation_bytes / kGiB,
        b.non_torch_bytes / kGiB, b.kv_bytes / kGiB, s.block_size, b.kv_bytes_per_token));
  }
  return b;
}

}  // namespace pagesim::sim
