#include "kernels/prefill_plan.h"

#include <string>

#include "kernels/kernel_error.h"

namespace pagesim::kernels {

const char* prefill_kernel_name(PrefillKernel k) {
  switch (k) {
    case PrefillKernel::kCudaCores:
      return "cuda-cores";
    case PrefillKernel::kMma:
      return "mma";
    case PrefillKernel::kWgmma:
      return "wgmma";
  }
  return "?";
}

PrefillTile prefill_kernel_tile(PrefillKernel kernel, DType dtype, std::int32_t head_dim) {
  return kernel == PrefillKernel::kWgmma ? prefill_wgmma_tile() : prefill_tile(dtype, head_dim);
}

std::size_t prefill_kernel_smem_bytes(PrefillKernel kernel, DType dtype, std::int32_t head_dim) {
  return kernel == PrefillKernel::kWgmma ? prefill_wgmma_smem_bytes(head_dim) : prefill_smem_bytes(dtype, head_dim);
}

PrefillPlan plan_prefill(const PrefillProblem& p) {
  PrefillKernel k = p.dtype == DType::kFloat32 ? PrefillKernel::kCudaCores : PrefillKernel::kMma;
  if (p.wgmma && prefill_wgmma_supports(p.dtype, p.head_dim)) k = PrefillKernel::kWgmma;
  return make_prefill_plan(p, k);
}

PrefillPlan make_prefill_plan(const PrefillProblem& p, PrefillKernel kernel) {
  const char* fn = "plan_prefill";
  if (p.num_seqs < 0 || p.num_q_heads < 1 || p.num_kv_heads < 1 || p.head_dim < 1 ||
      p.num_q_heads % p.num_kv_heads != 0 || p.max_query_len < 0) {
    throw KernelError(std::string(fn) + ": need num_seqs >= 0, max_query_len >= 0, head_dim >= 1 "
                      "and num_q_heads (" + std::to_string(p.num_q_heads) +
                      ") a positive multiple of num_kv_heads (" + std::to_string(p.num_kv_heads) + ")");
  }
  if (p.num_seqs > 65535 || p.num_kv_heads > 65535) {
    throw KernelError(std::string(fn) + ": at most 65535 sequences and KV heads per launch, got " +
                      std::to_string(p.num_seqs) + " and " + std::to_string(p.num_kv_heads));
  }
  const bool f32 = p.dtype == DType::kFloat32;
  if ((kernel == PrefillKernel::kCudaCores) != f32 ||
      (kernel == PrefillKernel::kWgmma && !(p.wgmma && prefill_wgmma_supports(p.dtype, p.head_dim)))) {
    throw KernelError(std::string(fn) + ": the " + prefill_kernel_name(kernel) + " kernel has no code for " +
                      dtype_name(p.dtype) + " at head_dim " + std::to_string(p.head_dim) +
                      (kernel == PrefillKernel::kWgmma && !p.wgmma
                           ? " on this device (needs compute capability 9.0 and a build with sm_90a)"
                           : ""));
  }
  PrefillPlan plan;
  plan.kernel = kernel;
  plan.tile = prefill_kernel_tile(kernel, p.dtype, p.head_dim);
  const std::int64_t rows = static_cast<std::int64_t>(p.max_query_len) * (p.num_q_heads / p.num_kv_heads);
  const std::int64_t tiles = (rows + plan.tile.rows - 1) / plan.tile.rows;
  if (tiles > INT32_MAX) throw KernelError(std::string(fn) + ": too many query rows");
  plan.row_tiles = static_cast<std::int32_t>(tiles);
  plan.kv_heads = p.num_kv_heads;
  plan.num_seqs = p.num_seqs;
  plan.smem_bytes = prefill_kernel_smem_bytes(kernel, p.dtype, p.head_dim);
  return plan;
}

LaunchGrid prefill_grid(const PrefillPlan& plan) { return {plan.row_tiles, plan.kv_heads, plan.num_seqs}; }

void check_prefill_smem(const PrefillPlan& plan, std::int64_t max_optin_bytes, const char* fn) {
  if (static_cast<std::int64_t>(plan.smem_bytes) > max_optin_bytes) {
    throw KernelError(std::string(fn) + ": the prefill kernel's tile needs " + std::to_string(plan.smem_bytes) +
                      " bytes of shared memory per CTA; this device allows " + std::to_string(max_optin_bytes));
  }
}

}  // namespace pagesim::kernels
