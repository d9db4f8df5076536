// Host-side helpers around the CUDA runtime: the one error check, device detection and the
// RAII owners of device and pinned host memory. Shared by kernels/cuda's launchers, the
// kernels' GPU tests and benchmark, and sim's `pagesim validate` / `pagesim profile`, so
// every CUDA failure reads the same way and every allocation is freed on every path.
//
// Plain host C++ (no CUDA syntax): usable from .cpp files compiled by the host compiler that
// link CUDA::cudart. The buffers own their memory exclusively (movable, not copyable); like
// any CUDA allocation they may be used from any host thread, with the usual stream ordering.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

#include "kernels/kernel_error.h"
#include "kernels/launch_grid.h"

namespace pagesim::kernels {

// Throws KernelError "<fn>: <what> failed: <cudaErrorName> (<description>)". Out of line
// from check_cuda so that a passing check builds no string.
[[noreturn]] inline void throw_cuda_error(cudaError_t status, std::string_view fn, std::string_view what) {
  throw KernelError(std::string(fn) + ": " + std::string(what) + " failed: " + cudaGetErrorName(status) + " (" +
                    cudaGetErrorString(status) + ")");
}

// Throws (as throw_cuda_error) unless `status` is cudaSuccess. `fn` names the public entry
// point or command, `what` the CUDA call or kernel.
inline void check_cuda(cudaError_t status, std::string_view fn, std::string_view what) {
  if (status != cudaSuccess) [[unlikely]] {
    throw_cuda_error(status, fn, what);
  }
}

// After a kernel launch: a launch-configuration error (grid, shared memory, no device)
// surfaces here, naming the kernel.
inline void check_launch(std::string_view fn, std::string_view kernel) { check_cuda(cudaGetLastError(), fn, kernel); }

// The runtime's form of a host-planned grid. REQUIRES: grid_fits(g) (check_launch_grid).
inline dim3 to_dim3(const LaunchGrid& g) {
  return dim3(static_cast<unsigned>(g.x), static_cast<unsigned>(g.y), static_cast<unsigned>(g.z));
}

// True if a CUDA device is usable; otherwise false, with what the runtime reported in `why`
// (may be null). Clears the sticky error a failed query leaves.
inline bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why != nullptr) {
      *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
    }
    cudaGetLastError();
    return false;
  }
  if (n == 0) {
    if (why != nullptr) *why = "cudaGetDeviceCount reported 0 devices";
    return false;
  }
  return true;
}

// Device memory (cudaMalloc), freed on destruction. Every buffer, even of 0 bytes, holds at
// least kMinBytes, so get() is a valid, 256-byte aligned device pointer (the decode
// workspace's requirement); bytes() is the size asked for.
class DeviceBuffer {
 public:
  static constexpr std::size_t kMinBytes = 256;

  DeviceBuffer() = default;
  // Throws KernelError when cudaMalloc fails.
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    check_cuda(cudaMalloc(&ptr_, std::max(bytes, kMinBytes)), "DeviceBuffer",
               "cudaMalloc of " + std::to_string(bytes) + " bytes");
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.ptr_ = nullptr;
      o.bytes_ = 0;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // The device address (null only for a default-constructed or moved-from buffer); valid
  // until this buffer is destroyed or assigned.
  char* get() const { return static_cast<char*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

  // Synchronous copies of the first n bytes. REQUIRES: n <= bytes(). Throw KernelError.
  void upload(const void* src, std::size_t n) {
    if (n > 0) check_cuda(cudaMemcpy(ptr_, src, n, cudaMemcpyHostToDevice), "DeviceBuffer", "cudaMemcpy H2D");
  }
  void download(void* dst, std::size_t n) const {
    if (n > 0) check_cuda(cudaMemcpy(dst, ptr_, n, cudaMemcpyDeviceToHost), "DeviceBuffer", "cudaMemcpy D2H");
  }
  // Every byte of the buffer (bytes()) set to `value` (cudaMemset, synchronous for the host).
  void fill_bytes(int value) {
    if (bytes_ > 0) check_cuda(cudaMemset(ptr_, value, bytes_), "DeviceBuffer", "cudaMemset");
  }

 private:
  void release() noexcept {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = nullptr;
  }

  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locked host memory (cudaHostAlloc), freed on destruction: the host side of swaps
// and of asynchronous copies. `flags` as cudaHostAlloc's (cudaHostAllocMapped: the device
// may read and write it directly). Same size rules as DeviceBuffer.
class PinnedBuffer {
 public:
  // Throws KernelError when cudaHostAlloc fails.
  explicit PinnedBuffer(std::size_t bytes, unsigned flags = cudaHostAllocDefault) : bytes_(bytes) {
    check_cuda(cudaHostAlloc(&ptr_, std::max(bytes, DeviceBuffer::kMinBytes), flags), "PinnedBuffer",
               "cudaHostAlloc of " + std::to_string(bytes) + " bytes");
  }
  ~PinnedBuffer() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  // The host address, valid until this buffer is destroyed.
  char* get() const { return static_cast<char*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace pagesim::kernels
