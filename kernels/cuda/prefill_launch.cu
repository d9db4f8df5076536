// Host side of paged prefill: validation, plan checks and dispatch.
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/arg_check.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/cuda/device_common.cuh"
#include "kernels/cuda/dispatch.h"
#include "kernels/cuda/prefill_params.h"
#include "kernels/kv_layout.h"
#include "kernels/launch_grid.h"
#include "kernels/paged_attention.h"

namespace pagesim::kernels {

using detail::require;

namespace detail {

bool device_runs_wgmma() {
#if defined(PAGESIM_CUDA_SM90A)
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    // No usable device: plans take mma.sync, and a launch reports the error itself.
    (void)cudaGetLastError();
    return false;
  }
  return major == 9 && minor == 0;  // sm_90a code runs on 9.0 only
#else
  return false;
#endif
}

}  // namespace detail

PrefillProblem prefill_problem(const PagedAttentionArgs& args, std::int32_t max_query_len) {
  const AttentionShape s = check_paged_attention_args(args, "prefill_problem", Backend::kCuda);
  PrefillProblem p;
  p.num_seqs = s.num_seqs;
  p.num_q_heads = s.num_q_heads;
  p.num_kv_heads = s.num_kv_heads;
  p.head_dim = s.head_dim;
  p.dtype = s.dtype;
  p.max_query_len = max_query_len;
  p.wgmma = detail::device_runs_wgmma();
  return p;
}

void paged_prefill(const PagedAttentionArgs& a, const PrefillPlan& plan, CudaStream stream) {
  const char* fn = "paged_prefill";
  const AttentionShape s = check_paged_attention_args(a, fn, Backend::kCuda);
  require(!s.decode, fn, "needs query_starts (prefill); use paged_decode for one query per sequence");
  const bool f32 = s.dtype == DType::kFloat32;
  const bool wgmma = plan.kernel == PrefillKernel::kWgmma;
  require((plan.kernel == PrefillKernel::kCudaCores) == f32 &&
              (!wgmma || (prefill_wgmma_supports(s.dtype, s.head_dim) && detail::device_runs_wgmma())),
          fn, [&] {
            return std::string("plan's ") + prefill_kernel_name(plan.kernel) + " kernel has no code for these arguments" +
                   (wgmma ? " on this device and build (wgmma: compute capability 9.0, sm_90a code, head_dim 128)" : "");
          });
  const PrefillTile tile = prefill_kernel_tile(plan.kernel, s.dtype, s.head_dim);
  require(plan.tile.rows == tile.rows && plan.tile.keys == tile.keys && plan.kv_heads == s.num_kv_heads &&
              plan.num_seqs == s.num_seqs &&
              plan.smem_bytes == prefill_kernel_smem_bytes(plan.kernel, s.dtype, s.head_dim),
          fn, "plan does not match these arguments (made for another dtype, head size, head count or batch?)");
  require(plan.row_tiles >= 0, fn, "plan has a negative tile count");
  require(static_cast<std::int64_t>(plan.row_tiles) * tile.rows <=
              static_cast<std::int64_t>(s.num_query_tokens) * s.group_size() + tile.rows,
          fn, "plan's max_query_len exceeds the number of query rows");
  if (s.num_seqs == 0 || plan.row_tiles == 0) return;

  detail::PrefillParams p;
  static_cast<detail::PagedAttentionParams&>(p) = detail::make_attention_params(a, s, fn);
  p.query_starts = a.query_starts.as<const std::int32_t>();
  p.row_tiles = plan.row_tiles;

  const char* kernel = f32 ? "paged_prefill_simt_kernel"
                      : wgmma ? "paged_prefill_wgmma_kernel"
                              : "paged_prefill_mma_kernel";
  const LaunchGrid planned = prefill_grid(plan);
  check_launch_grid(planned, fn, kernel);
  int device = 0, max_optin = 0;
  check_cuda(cudaGetDevice(&device), fn, "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), fn,
             "cudaDeviceGetAttribute(max shared memory per block, opt-in)");
  check_prefill_smem(plan, max_optin, fn);
  const dim3 grid = to_dim3(planned);
  cudaStream_t st = stream;
  cudaError_t attribute = cudaSuccess;
  detail::dispatch_dtype(s.dtype, fn, [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::dispatch_head_dim(s.head_dim, fn, [&](auto d) {
      constexpr int D = decltype(d)::value;
      if constexpr (std::is_same_v<T, float>) {
        attribute = detail::launch_prefill_simt<D>(p, grid, plan.smem_bytes, st);
      } else if (wgmma) {
        if constexpr (D == kPrefillWgmmaHeadDim) attribute = detail::launch_prefill_wgmma<T>(p, grid, plan.smem_bytes, st);
      } else {
        attribute = detail::launch_prefill_mma<T, D>(p, grid, plan.smem_bytes, st);
      }
    });
  });
  check_cuda(attribute, fn, "cudaFuncSetAttribute(max dynamic shared memory) before the prefill launch");
  check_launch(fn, kernel);
}

}  // namespace pagesim::kernels
