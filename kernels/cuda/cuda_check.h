// Host-side CUDA error handling for kernels/cuda: every runtime call's status becomes a
// KernelError naming the call site.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "kernels/kernel_error.h"

namespace pagesim::kernels::detail {

inline void check_cuda(cudaError_t status, const char* fn, const char* what) {
  if (status != cudaSuccess) {
    throw KernelError(std::string(fn) + ": " + what + " failed: " + cudaGetErrorName(status) +
                      " (" + cudaGetErrorString(status) + ")");
  }
}

// After a kernel launch: launch-configuration errors surface here.
inline void check_launch(const char* fn, const char* kernel) {
  check_cuda(cudaGetLastError(), fn, kernel);
}

}  // namespace pagesim::kernels::detail
