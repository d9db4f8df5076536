#include "kernels/prefill_plan.h"

#include <string>

#include "kernels/kernel_error.h"

namespace pagesim::kernels {

PrefillPlan plan_prefill(const PrefillProblem& p) {
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
  PrefillPlan plan;
  plan.tile = prefill_tile(p.dtype, p.head_dim);
  const std::int64_t rows = static_cast<std::int64_t>(p.max_query_len) * (p.num_q_heads / p.num_kv_heads);
  const std::int64_t tiles = (rows + plan.tile.rows - 1) / plan.tile.rows;
  if (tiles > INT32_MAX) throw KernelError(std::string(fn) + ": too many query rows");
  plan.row_tiles = static_cast<std::int32_t>(tiles);
  plan.kv_heads = p.num_kv_heads;
  plan.num_seqs = p.num_seqs;
  plan.smem_bytes = prefill_smem_bytes(p.dtype, p.head_dim);
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
