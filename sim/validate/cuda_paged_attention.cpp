#include "sim/validate/cuda_paged_attention.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/cuda_host.h"
#include "kernels/latent_attention.h"
#include "kernels/limits.h"
#include "kernels/paged_attention.h"

namespace pagesim::sim {

namespace {

using kernels::DeviceBuffer;  // kernels/cuda/cuda_host.h: 256-byte aligned, as the decode workspace requires
using kernels::TensorView;

void cuda_check(cudaError_t status, const char* what) { kernels::check_cuda(status, "validate (cuda)", what); }

std::size_t view_bytes(const TensorView& v) {
  return static_cast<std::size_t>(v.span_elements()) * kernels::dtype_size(v.dtype);
}

// A device copy of the memory behind a host view (nothing for an empty view).
DeviceBuffer upload(const TensorView& host) {
  DeviceBuffer b(host.empty() ? 0 : view_bytes(host));
  if (b.bytes() > 0) cuda_check(cudaMemcpy(b.get(), host.data, b.bytes(), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  return b;
}

// `v` re-pointed at device memory `b` (an empty view stays empty).
TensorView on_device(TensorView v, const DeviceBuffer& b) {
  if (!v.empty()) v.data = b.get();
  return v;
}

std::string head_dims_list() {
  std::string s;
  for (const std::int32_t d : kernels::limits::kHeadDims) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

}  // namespace

bool CudaPagedAttention::device_usable(std::string* why) { return kernels::cuda_device_available(why); }

void CudaPagedAttention::check_supported(std::int32_t block_size, std::int32_t head_dim) const {
  if (!kernels::limits::is_supported_block_size(block_size)) {
    throw ValidateError(fmt::format(
        "device cuda: block size {} (file header) is not supported by the CUDA kernels: expected a power of "
        "two in [{}, {}]; use --device cpu",
        block_size, kernels::limits::kMinBlockSize, kernels::limits::kMaxBlockSize));
  }
  if (!kernels::limits::is_supported_head_dim(head_dim)) {
    throw ValidateError(fmt::format("device cuda: head_dim {} is not supported by the CUDA kernels: expected one of {}",
                                    head_dim, head_dims_list()));
  }
  std::string why;
  if (!device_usable(&why)) {
    throw ValidateError(fmt::format("device cuda: no usable CUDA device ({}); use --device cpu", why));
  }
}

void CudaPagedAttention::run(const kernels::PagedAttentionArgs& host, std::int32_t max_query_len) const {
  const DeviceBuffer query = upload(host.query);
  const DeviceBuffer k_cache = upload(host.k_cache);
  const DeviceBuffer v_cache = upload(host.v_cache);
  const DeviceBuffer table = upload(host.block_table);
  const DeviceBuffer kv_lens = upload(host.kv_lens);
  const DeviceBuffer query_starts = upload(host.query_starts);
  const DeviceBuffer alibi = upload(host.alibi_slopes);
  const DeviceBuffer out(view_bytes(host.out));
  if (out.bytes() > 0) cuda_check(cudaMemset(out.get(), 0xFF, out.bytes()), "cudaMemset (NaN output)");

  kernels::PagedAttentionArgs dev = host;
  dev.query = on_device(host.query, query);
  dev.out = on_device(host.out, out);
  dev.k_cache = on_device(host.k_cache, k_cache);
  dev.v_cache = on_device(host.v_cache, v_cache);
  dev.block_table = on_device(host.block_table, table);
  dev.kv_lens = on_device(host.kv_lens, kv_lens);
  dev.query_starts = on_device(host.query_starts, query_starts);
  dev.alibi_slopes = on_device(host.alibi_slopes, alibi);

  if (host.query_starts.empty()) {
    const std::span<const std::int32_t> lens(host.kv_lens.as<const std::int32_t>(),
                                             static_cast<std::size_t>(host.kv_lens.size(0)));
    const kernels::DecodeProblem problem = kernels::decode_problem(dev, lens);
    const kernels::DecodePlan plan =
        kernels::plan_decode(problem, kernels::decode_device_caps(problem));
    const DeviceBuffer workspace(plan.workspace_bytes);
    kernels::paged_decode(dev, plan, workspace.get(), workspace.bytes(), nullptr);
    cuda_check(cudaDeviceSynchronize(), "paged_decode execution");
  } else {
    const kernels::PrefillPlan plan = kernels::plan_prefill(kernels::prefill_problem(dev, max_query_len));
    kernels::paged_prefill(dev, plan, nullptr);
    cuda_check(cudaDeviceSynchronize(), "paged_prefill execution");
  }
  if (out.bytes() > 0) cuda_check(cudaMemcpy(host.out.data, out.get(), out.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

void CudaPagedAttention::check_supported_latent(std::int32_t block_size, std::int32_t latent_dim,
                                                std::int32_t value_dim, kernels::DType query,
                                                kernels::DType cache) const {
  namespace ll = kernels::latent_limits;
  if (latent_dim != ll::kLatentDim || value_dim != ll::kValueDim) {
    throw ValidateError(fmt::format(
        "device cuda: a latent cache of {} elements per token whose first {} are the value is not supported by the "
        "CUDA latent kernel: expected {} and {} (kv_lora_rank 512 + rope 64); use --device cpu",
        latent_dim, value_dim, ll::kLatentDim, ll::kValueDim));
  }
  if (query != kernels::DType::kFloat16 && query != kernels::DType::kBFloat16) {
    throw ValidateError(fmt::format("device cuda: the latent kernel takes f16 or bf16 queries (and an fp8 cache with "
                                    "--dtype fp8), got {}; use --device cpu",
                                    kernels::dtype_name(query)));
  }
  if (cache != query && cache != kernels::DType::kFloat8E4M3) {
    throw ValidateError(fmt::format("device cuda: a {} latent cache with {} queries is not supported", 
                                    kernels::dtype_name(cache), kernels::dtype_name(query)));
  }
  check_supported(block_size, 64);  // the block size and the device
}

void CudaPagedAttention::run_latent(const kernels::LatentAttentionArgs& host, std::int32_t max_query_len) const {
  const DeviceBuffer query = upload(host.query);
  const DeviceBuffer cache = upload(host.latent_cache);
  const DeviceBuffer table = upload(host.block_table);
  const DeviceBuffer kv_lens = upload(host.kv_lens);
  const DeviceBuffer query_starts = upload(host.query_starts);
  const DeviceBuffer out(view_bytes(host.out));
  if (out.bytes() > 0) cuda_check(cudaMemset(out.get(), 0xFF, out.bytes()), "cudaMemset (NaN output)");
  kernels::LatentAttentionArgs dev = host;
  dev.query = on_device(host.query, query);
  dev.out = on_device(host.out, out);
  dev.latent_cache = on_device(host.latent_cache, cache);
  dev.block_table = on_device(host.block_table, table);
  dev.kv_lens = on_device(host.kv_lens, kv_lens);
  dev.query_starts = on_device(host.query_starts, query_starts);
  const std::int32_t* lens = host.kv_lens.as<const std::int32_t>();
  std::int32_t max_kv = 0;
  for (std::int64_t i = 0; i < host.kv_lens.size(0); ++i) max_kv = std::max(max_kv, lens[i]);
  const kernels::LatentPlan plan = kernels::plan_latent_attention(
      {static_cast<std::int32_t>(host.kv_lens.size(0)), static_cast<std::int32_t>(host.query.size(1)),
       host.query_starts.empty() ? 1 : max_query_len, max_kv},
      kernels::latent_attention_target_ctas());
  const DeviceBuffer workspace(plan.workspace_bytes);
  kernels::paged_latent_attention(dev, plan, workspace.get(), workspace.bytes(), nullptr);
  cuda_check(cudaDeviceSynchronize(), "paged_latent_attention execution");
  if (out.bytes() > 0) cuda_check(cudaMemcpy(host.out.data, out.get(), out.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

}  // namespace pagesim::sim
