// Test support for the CUDA kernels: device detection (tests skip with a message where no
// GPU is present), RAII device buffers, and an AttentionProblem mirrored on the device.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "attention_problem.h"
#include "kernels/attention_args.h"

namespace pagesim::kernels::testing {

// True if a CUDA device is usable; otherwise `why` says what the runtime reported.
bool cuda_device_available(std::string* why);

// Skips the current test (with the reason) when no CUDA device is usable.
#define PAGESIM_REQUIRE_GPU()                                                 \
  do {                                                                        \
    std::string pagesim_why_;                                                 \
    if (!::pagesim::kernels::testing::cuda_device_available(&pagesim_why_)) { \
      GTEST_SKIP() << "no CUDA device (" << pagesim_why_ << "): GPU test skipped"; \
    }                                                                         \
  } while (0)

// Throws std::runtime_error naming `what` when status is not cudaSuccess (int = cudaError_t).
void cuda_ok(int status, const char* what);

// Device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t n);     // synchronous
  void download(void* dst, std::size_t n) const;   // synchronous
  void fill_bytes(int value);                      // cudaMemset

  template <class T>
  static DeviceBuffer from(const std::vector<T>& v) {
    DeviceBuffer b(std::max<std::size_t>(v.size() * sizeof(T), 16));
    if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
    return b;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

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

 private:
  const AttentionProblem& p_;
  DeviceBuffer query_, k_cache_, v_cache_, table_, kv_lens_, query_starts_, alibi_, out_;
};

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

// Expects `out` within the dtype's tolerance of the reference, naming `label` on failure.
void expect_matches_reference(const TensorView& out, const TensorView& ref, DType dtype,
                              const std::string& label);

}  // namespace pagesim::kernels::testing
