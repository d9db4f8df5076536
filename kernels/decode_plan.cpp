#include "kernels/decode_plan.h"

#include <algorithm>
#include <string>

#include "kernels/kernel_error.h"
#include "kernels/limits.h"

namespace pagesim::kernels {

namespace {

// Overheads of the makespan estimate, in token-units (one token of one KV head read by one
// CTA). A CTA's prologue and epilogue; writing and re-reading one partition's fp32 partial
// output per query head handled; the merge kernel's launch.
constexpr double kCtaOverheadTokens = 32;
constexpr double kPartialPerHeadTokens = 2;
constexpr double kMergeLaunchTokens = 100;

constexpr std::size_t kWorkspaceAlign = 256;

std::size_t align_up(std::size_t x) { return (x + kWorkspaceAlign - 1) / kWorkspaceAlign * kWorkspaceAlign; }

void check_problem(const DecodeProblem& p, const char* fn) {
  if (p.num_seqs < 0 || p.num_q_heads < 1 || p.num_kv_heads < 1 || p.head_dim < 1 ||
      p.num_q_heads % p.num_kv_heads != 0) {
    throw KernelError(std::string(fn) + ": need num_seqs >= 0, head_dim >= 1 and num_q_heads (" +
                      std::to_string(p.num_q_heads) + ") a positive multiple of num_kv_heads (" +
                      std::to_string(p.num_kv_heads) + ")");
  }
  if (p.kv_lens.size() != static_cast<std::size_t>(p.num_seqs)) {
    throw KernelError(std::string(fn) + ": kv_lens has " + std::to_string(p.kv_lens.size()) +
                      " entries for " + std::to_string(p.num_seqs) + " sequences");
  }
  for (std::size_t s = 0; s < p.kv_lens.size(); ++s) {
    if (p.kv_lens[s] < 0) {
      throw KernelError(std::string(fn) + ": kv_lens[" + std::to_string(s) + "] = " +
                        std::to_string(p.kv_lens[s]) + " is negative");
    }
  }
}

}  // namespace

DecodeWorkspaceLayout decode_workspace_layout(std::int32_t num_seqs, std::int32_t num_q_heads,
                                              std::int32_t max_partitions, std::int32_t head_dim) {
  const auto rows = static_cast<std::size_t>(num_seqs) * static_cast<std::size_t>(num_q_heads) *
                    static_cast<std::size_t>(max_partitions);
  DecodeWorkspaceLayout w;
  w.partial_out_offset = 0;
  w.partial_lse_offset = align_up(rows * static_cast<std::size_t>(head_dim) * sizeof(float));
  w.bytes = w.partial_lse_offset + align_up(rows * sizeof(float));
  return w;
}

LaunchGrid decode_kernel_grid(const DecodePlan& plan, std::int32_t num_seqs, std::int32_t num_kv_heads) {
  return {static_cast<std::int64_t>(num_seqs) * num_kv_heads * plan.head_groups,
          plan.algo == DecodeAlgo::kV2 ? plan.max_partitions : 1, 1};
}

LaunchGrid decode_merge_grid(std::int32_t num_seqs, std::int32_t num_q_heads) { return {num_seqs, num_q_heads, 1}; }

const char* decode_algo_name(DecodeAlgo a) { return a == DecodeAlgo::kV1 ? "v1" : "v2"; }

const char* decode_kernel_name(DecodeKernel k) { return k == DecodeKernel::kCudaCores ? "simt" : "mma"; }

DecodeKernel decode_kernel_for(DType dtype, std::int32_t group_size) {
  const bool half = dtype == DType::kFloat16 || dtype == DType::kBFloat16;
  return half && group_size >= kDecodeMmaMinGroup ? DecodeKernel::kTensorCores : DecodeKernel::kCudaCores;
}

std::int32_t decode_heads_per_cta(DecodeKernel k, std::int32_t group_size) {
  return k == DecodeKernel::kTensorCores ? DecodeMmaTile{}.heads_per_cta : decode_simt_heads(group_size);
}

DecodePlan make_decode_plan(const DecodeProblem& p, DecodeAlgo algo, std::int32_t partition_size,
                            std::optional<DecodeKernel> kernel) {
  const char* fn = "make_decode_plan";
  check_problem(p, fn);
  const std::int32_t group = p.num_q_heads / p.num_kv_heads;
  DecodePlan plan;
  plan.algo = algo;
  plan.kernel = kernel.value_or(decode_kernel_for(p.dtype, group));
  if (plan.kernel == DecodeKernel::kTensorCores && p.dtype != DType::kFloat16 && p.dtype != DType::kBFloat16) {
    throw KernelError(std::string(fn) + ": the tensor-core decode kernel takes f16 or bf16, not " +
                      dtype_name(p.dtype));
  }
  plan.heads_per_cta = decode_heads_per_cta(plan.kernel, group);
  plan.head_groups = (group + plan.heads_per_cta - 1) / plan.heads_per_cta;
  for (std::int32_t len : p.kv_lens) plan.max_kv_len = std::max(plan.max_kv_len, len);
  if (algo == DecodeAlgo::kV1) {
    if (p.num_seqs > 0) check_launch_grid(decode_kernel_grid(plan, p.num_seqs, p.num_kv_heads), fn, "paged_decode_kernel");
    return plan;
  }

  if (partition_size < 1) {
    throw KernelError(std::string(fn) + ": v2 partition_size must be >= 1, got " +
                      std::to_string(partition_size));
  }
  plan.partition_size = partition_size;
  plan.max_partitions = std::max<std::int32_t>(1, (plan.max_kv_len + partition_size - 1) / partition_size);
  if (plan.max_partitions > limits::kMaxDecodePartitions) {
    throw KernelError(std::string(fn) + ": kv_len " + std::to_string(plan.max_kv_len) + " needs " +
                      std::to_string(plan.max_partitions) + " partitions of " +
                      std::to_string(partition_size) + " tokens; at most " +
                      std::to_string(limits::kMaxDecodePartitions) + " are supported");
  }
  if (p.num_seqs > 0) {
    check_launch_grid(decode_kernel_grid(plan, p.num_seqs, p.num_kv_heads), fn, "paged_decode_kernel (v2)");
    check_launch_grid(decode_merge_grid(p.num_seqs, p.num_q_heads), fn, "decode_merge_kernel");
  }
  const DecodeWorkspaceLayout ws = decode_workspace_layout(p.num_seqs, p.num_q_heads, plan.max_partitions, p.head_dim);
  plan.partial_out_offset = ws.partial_out_offset;
  plan.partial_lse_offset = ws.partial_lse_offset;
  plan.workspace_bytes = ws.bytes;
  return plan;
}

DecodePlan plan_decode(const DecodeProblem& p, const DecodeDeviceCaps& caps) {
  const char* fn = "plan_decode";
  check_problem(p, fn);
  if (caps.num_sms < 1 || caps.ctas_per_sm < 1) {
    throw KernelError(std::string(fn) + ": device caps need num_sms >= 1 and ctas_per_sm >= 1");
  }
  const DecodePlan v1 = make_decode_plan(p, DecodeAlgo::kV1, 0);  // decode_kernel_for the problem
  const std::int32_t group = p.num_q_heads / p.num_kv_heads;
  const double slots = static_cast<double>(caps.num_sms) * caps.ctas_per_sm;
  const double heads = static_cast<double>(p.num_kv_heads) * v1.head_groups;
  double total = 0;
  for (std::int32_t len : p.kv_lens) total += len;
  total *= heads;
  const double units_v1 = heads * p.num_seqs;
  const double best_v1 = total / slots + v1.max_kv_len + units_v1 * kCtaOverheadTokens / slots;

  DecodePlan best = v1;
  double best_cost = best_v1;
  for (std::int32_t size : kDecodePartitionSizes) {
    if (size >= v1.max_kv_len) break;
    const std::int32_t partitions = (v1.max_kv_len + size - 1) / size;
    if (partitions > limits::kMaxDecodePartitions) continue;
    DecodePlan shape = v1;
    shape.algo = DecodeAlgo::kV2;
    shape.max_partitions = partitions;
    if (!grid_fits(decode_kernel_grid(shape, p.num_seqs, p.num_kv_heads)) ||
        !grid_fits(decode_merge_grid(p.num_seqs, p.num_q_heads))) {
      continue;
    }
    double units = 0;
    for (std::int32_t len : p.kv_lens) units += (len + size - 1) / size;
    units *= heads;
    const double overhead =
        units * (kCtaOverheadTokens + kPartialPerHeadTokens * std::min(v1.heads_per_cta, group)) / slots +
        kMergeLaunchTokens;
    const double cost = total / slots + size + overhead;
    if (cost < best_cost) {
      best_cost = cost;
      best = make_decode_plan(p, DecodeAlgo::kV2, size, v1.kernel);
    }
  }
  return best;
}

}  // namespace pagesim::kernels
