#include "bench/kernels/stream_gate.h"

#include <atomic>
#include <cassert>

namespace pagesim::bench {

namespace {

// Spins until flag[0] != 0 or `timeout_ns` of the device's global timer passed; records a
// timeout in flag[1].
__global__ void stream_gate_kernel(volatile std::int32_t* flag, std::uint64_t timeout_ns) {
  std::uint64_t start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  while (flag[0] == 0) {
    std::uint64_t now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > timeout_ns) {
      flag[1] = 1;
      return;
    }
  }
}

// Long enough for any host-side enqueue (a benchmark case enqueues a few launches), short
// enough that a lost release costs little.
constexpr std::uint64_t kTimeoutNs = 2'000'000'000;

}  // namespace

StreamGate::StreamGate() : flag_(2 * sizeof(std::int32_t), cudaHostAllocMapped) {}

void StreamGate::hold(cudaStream_t stream) {
  assert(!held_ && "StreamGate::hold twice without release");
  auto* f = reinterpret_cast<volatile std::int32_t*>(flag_.get());
  f[0] = 0;
  f[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::int32_t* device_flag = nullptr;
  kernels::check_cuda(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag), flag_.get(), 0), "StreamGate",
                      "cudaHostGetDevicePointer");
  stream_gate_kernel<<<1, 1, 0, stream>>>(device_flag, kTimeoutNs);
  kernels::check_launch("StreamGate", "stream_gate_kernel");
  held_ = true;
}

void StreamGate::release() {
  auto* f = reinterpret_cast<volatile std::int32_t*>(flag_.get());
  std::atomic_thread_fence(std::memory_order_seq_cst);
  f[0] = 1;
  held_ = false;
}

bool StreamGate::timed_out() const { return reinterpret_cast<volatile const std::int32_t*>(flag_.get())[1] != 0; }

}  // namespace pagesim::bench
