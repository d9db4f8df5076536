#include "sim/cost/kv_capacity.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

KvCapacity kv_capacity(const ModelSpec& model, const GpuSpec& gpu, int tp,
                       const KvCapacitySettings& settings) {
  model.validate();
  gpu.validate();
  model.check_tensor_parallel(tp);
  if (!(settings.gpu_memory_utilization > 0 && settings.gpu_memory_utilization <= 1)) {
    throw CostModelError(fmt::format("gpu_memory_utilization is {}, expected a fraction in (0, 1]",
                                     settings.gpu_memory_utilization));
  }
  if (settings.activation_reserve_bytes < 0) {
    throw CostModelError(fmt::format("activation_reserve_bytes is {}, expected >= 0",
                                     settings.activation_reserve_bytes));
  }
  if (settings.block_size < 1) {
    throw CostModelError(
        fmt::format("block_size is {}, expected >= 1 token", settings.block_size));
  }
  if (settings.draft_weight_bytes < 0)
    throw CostModelError(fmt::format("draft_weight_bytes is {}, expected >= 0", settings.draft_weight_bytes));

  KvCapacity c;
  c.usable_bytes = static_cast<std::int64_t>(
      std::floor(static_cast<double>(gpu.hbm_bytes) * settings.gpu_memory_utilization));
  c.weight_bytes = (model.weight_bytes() + tp - 1) / tp + settings.draft_weight_bytes;
  c.activation_reserve_bytes = settings.activation_reserve_bytes;
  c.kv_bytes = c.usable_bytes - c.weight_bytes - c.activation_reserve_bytes;
  c.kv_bytes_per_token = model.kv_bytes_per_token_per_gpu(tp);
  // block_size has no upper bound (a config may ask for any), so a block's bytes can exceed
  // int64: such a block fits in no memory.
  std::int64_t block_bytes = 0;
  const bool block_bytes_fit = !__builtin_mul_overflow(c.kv_bytes_per_token, settings.block_size, &block_bytes);
  c.blocks = c.kv_bytes > 0 && block_bytes_fit ? c.kv_bytes / block_bytes : 0;
  c.slots = c.blocks * settings.block_size;
  if (c.blocks < 1) {
    throw CostModelError(fmt::format(
        "{} on {} (tp={}): usable {} B − weights {} B − activation reserve {} B leaves {} B, "
        "expected room for at least one KV block of {} tokens × {} B",
        model.name, gpu.name, tp, c.usable_bytes, c.weight_bytes, c.activation_reserve_bytes,
        c.kv_bytes, settings.block_size, c.kv_bytes_per_token));
  }
  return c;
}

std::int64_t estimate_activation_bytes(const ModelSpec& model, std::int64_t max_batched_tokens,
                                       std::int64_t max_seqs, int tp) {
  model.check_tensor_parallel(tp);
  const std::int64_t qkv =
      (model.heads_per_gpu(tp) + 2 * model.kv_heads_per_gpu(tp)) * model.head_dim;
  const std::int64_t mlp = (model.gated_mlp ? 2 : 1) * model.ffn / tp;
  const std::int64_t per_token = (model.hidden + qkv + mlp) * model.dtype_bytes;
  constexpr std::int64_t kLogitBytes = 4;  // fp32 logits for sampling
  return max_batched_tokens * per_token + max_seqs * (model.vocab / tp) * kLogitBytes;
}

}  // namespace pagesim::sim
