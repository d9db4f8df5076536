// Test support for the CUDA kernels: the device requirement (tests skip with a message
// where no GPU is present, or fail under PAGESIM_REQUIRE_GPU=1: gpu_requirement.h), device
// copies of host vectors, and an AttentionProblem mirrored on the device. Device memory
// and CUDA errors go through kernels/cuda/cuda_host.h like everywhere else.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "attention_problem.h"
#include "gpu_requirement.h"
#include "kernels/attention_args.h"
#include "kernels/cuda/cuda_host.h"

namespace pagesim::kernels::testing {

using kernels::DeviceBuffer;

// When no CUDA device is usable: skips the current test with the reason, or fails it when
// PAGESIM_REQUIRE_GPU is set (gpu_requirement.h).
#define PAGESIM_REQUIRE_GPU()                                                                            \
  do {                                                                                                   \
    std::string pagesim_why_;                                                                            \
    if (!::pagesim::kernels::cuda_device_available(&pagesim_why_)) {                                     \
      if (::pagesim::kernels::testing::no_gpu_action(                                                    \
              std::getenv(::pagesim::kernels::testing::kRequireGpuEnv)) ==                               \
          ::pagesim::kernels::testing::NoGpuAction::kFail) {                                             \
        GTEST_FAIL() << "no CUDA device (" << pagesim_why_ << ") but PAGESIM_REQUIRE_GPU is set";        \
      }                                                                                                  \
      GTEST_SKIP() << "no CUDA device (" << pagesim_why_ << "): GPU test skipped";                       \
    }                                                                                                    \
  } while (0)

// A device copy of `v` (at least 16 bytes, so that an empty vector still gives a valid,
// aligned pointer).
template <class T>
DeviceBuffer device_copy(const std::vector<T>& v) {
  DeviceBuffer b(std::max<std::size_t>(v.size() * sizeof(T), 16));
  b.upload(v.data(), v.size() * sizeof(T));
  return b;
}

// The device copy of a problem's inputs and an output buffer poisoned with NaN (0xFF bytes)
// before each run, so an element the kernel forgets to write fails the comparison.
class DeviceProblem {
 public:
  explicit DeviceProblem(const AttentionProblem& p);
  // Args with device pointers; `out` points at this object's output buffer.
  PagedAttentionArgs args() const;
  void poison_output();
  // The output copied back to host memory, as a view of `storage` (dtype of the problem).
  TensorView download_output(std::vector<std::byte>& storage) const;
  // Replaces the device block table (same shape as the problem's), e.g. with
  // freed_block_table(p).
  void upload_block_table(const std::vector<std::int32_t>& table);

 private:
  const AttentionProblem& p_;
  DeviceBuffer query_, k_cache_, v_cache_, table_, kv_lens_, query_starts_, alibi_, out_;
};

// K and V caches of `total_blocks` blocks (the geometry and layout of `p`) whose top
// p.num_blocks() blocks hold p's caches: p's block b is block base + b. With total_blocks *
// block elements > 2^31, every offset of p's tokens needs 64 bits (the large-offset tests;
// ~4.3 GB per cache for 600000 blocks of 2 heads x 16 x 128 f16).
struct LargeCaches {
  DeviceBuffer k, v;
  std::int32_t base = 0;
  TensorView k_view, v_view;  // [total_blocks, kv heads, block size, head_dim] on the device
};
LargeCaches large_caches(const AttentionProblem& p, std::int32_t total_blocks);
// p's block table with every block before each sequence's attended range (attention_mask.h
// attended_blocks; none for the causal mask) freed, as a windowed allocator leaves it: -1.
std::vector<std::int32_t> freed_block_table(const AttentionProblem& p);

// p's block table with every block id moved up by `base` (-1 padding kept).
std::vector<std::int32_t> shifted_block_table(const AttentionProblem& p, std::int32_t base);

// The dense CPU reference output of `p` (f32), for comparisons.
std::vector<float> dense_reference(const AttentionProblem& p);
TensorView reference_view(const AttentionProblem& p, std::vector<float>& ref);

// A point of the GPU test grids: dtype, head_dim, block_size, query heads per KV head.
using KernelGridParam = std::tuple<DType, int, int, int>;
// "f16_d128_b16_g4".
std::string kernel_grid_name(const ::testing::TestParamInfo<KernelGridParam>& info);
std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info);
// The spec of a grid point: 2 KV heads, 2 x group query heads, seeded by the point; the
// caller adds lengths.
ProblemSpec grid_spec(const KernelGridParam& point);

// A point of the mask tests: dtype, mask kind (sliding window or chunked local), window.
using MaskParam = std::tuple<DType, MaskKind, int>;
// "f16_window128", "bf16_chunk7".
std::string mask_param_name(const ::testing::TestParamInfo<MaskParam>& info);
// Its spec: head_dim 128, blocks of 16, 8 query / 2 KV heads, the mask; the caller adds
// lengths.
ProblemSpec mask_spec(const MaskParam& point);

// Expects `out` within the dtype's tolerance of the reference, naming `label` on failure.
void expect_matches_reference(const TensorView& out, const TensorView& ref, DType dtype,
                              const std::string& label);

}  // namespace pagesim::kernels::testing
