// Test support for sim/validate: the paged-attention backends a validate test runs with, as
// a program's main would give them — the CPU reference always, and the CUDA kernels when the
// test links pagesim_validate_cuda (tests/sim/CMakeLists.txt then defines
// PAGESIM_TEST_CUDA_BACKEND=1; CPU-only builds have no CUDA backend to link).
#pragma once

#include <string>

#include "sim/validate/cpu_paged_attention.h"
#include "sim/validate/paged_attention_backend.h"
#if PAGESIM_TEST_CUDA_BACKEND
#include "sim/validate/cuda_paged_attention.h"
#endif

namespace pagesim::sim::testing {

// Owns the backends; all() lends them (valid while this object lives).
class TestBackends {
 public:
  PagedAttentionBackends all() const {
#if PAGESIM_TEST_CUDA_BACKEND
    return {.cpu = &cpu_, .cuda = &cuda_};
#else
    return {.cpu = &cpu_, .cuda = nullptr};
#endif
  }

 private:
  CpuPagedAttention cpu_;
#if PAGESIM_TEST_CUDA_BACKEND
  CudaPagedAttention cuda_;
#endif
};

// True when this test has the CUDA backend.
inline bool cuda_backend_linked() {
#if PAGESIM_TEST_CUDA_BACKEND
  return true;
#else
  return false;
#endif
}

// True when the CUDA backend is linked and a device is usable; otherwise `why` (if not
// null) says why.
inline bool cuda_device_usable(std::string* why) {
#if PAGESIM_TEST_CUDA_BACKEND
  return CudaPagedAttention::device_usable(why);
#else
  if (why != nullptr) *why = "this test was built without CUDA";
  return false;
#endif
}

}  // namespace pagesim::sim::testing
