// Fixed constants of kernels/: what the CUDA kernels are built for.
//
// The CPU reference accepts any head size and any block size >= 1; the CUDA launchers accept
// exactly the values below and throw KernelError naming anything else.
#pragma once

#include <array>
#include <cstdint>

namespace pagesim::kernels::limits {

// Head sizes (elements per head) the CUDA kernels are instantiated for (a template parameter).
inline constexpr std::array<int32_t, 6> kHeadDims = {64, 80, 96, 112, 128, 256};

// Block sizes (tokens per KV block) are a run-time value inside every kernel: any power of
// two in [kMinBlockSize, kMaxBlockSize]. Tests cover 8, 16, 32 everywhere and larger ones
// for prefill.
inline constexpr int32_t kMinBlockSize = 1;
inline constexpr int32_t kMaxBlockSize = 1024;

// Every row (one token of one head) of a query, output or cache tensor starts on this many
// bytes: kernels move 16-byte vectors.
inline constexpr int32_t kRowAlignmentBytes = 16;

// Decode v2: most partitions one (sequence, head) may be split into (bounds the reduce
// kernel's shared memory: 4 bytes per partition).
inline constexpr int32_t kMaxDecodePartitions = 8192;

constexpr bool is_supported_head_dim(int64_t d) {
  for (int32_t h : kHeadDims) {
    if (h == d) return true;
  }
  return false;
}

constexpr bool is_supported_block_size(int64_t b) {
  return b >= kMinBlockSize && b <= kMaxBlockSize && (b & (b - 1)) == 0;
}

}  // namespace pagesim::kernels::limits
