// The CUDA side of the Validator (validator.h): device detection and one paged-attention run
// on the GPU from host buffers. Built only with CUDA (validator_cuda.cpp); validator.cpp
// calls it under PAGESIM_HAVE_CUDA. Uses the current device; one caller at a time.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/attention_args.h"

namespace pagesim::sim::detail {

// True if cudaGetDeviceCount reports a device; otherwise `why` says what the runtime said.
bool cuda_device_usable(std::string* why);

// Runs paged attention on the device for arguments whose views point at HOST memory: copies
// query, caches, block table, kv_lens and query_starts to the device, runs paged_decode
// (host.query_starts empty; the planner's choice of v1/v2) or paged_prefill (max_query_len:
// the batch's largest query_len), and copies the output back into host.out (same dtype).
// The device output is set to NaN first, so a row the kernel does not write fails the
// comparison. Synchronous. Throws kernels::KernelError on bad arguments or a CUDA error.
// REQUIRES: every host view dense (as the Validator builds them).
void run_paged_attention_cuda(const kernels::PagedAttentionArgs& host, std::int32_t max_query_len);

}  // namespace pagesim::sim::detail
