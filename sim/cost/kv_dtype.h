// KvDtype: the number format of the KV cache, and what one head's key (or value) vector of one
// token costs in it, scales included.
//
//   auto   the model's dtype_bytes per element (fp16/bf16: 2), as every run before kv_dtype
//   fp16, bf16   2 bytes per element
//   fp8    1 byte per element (e4m3/e5m2) with one fp32 scale per layer for K and one for V
//          (vLLM's and TensorRT-LLM's per-tensor scaling: kv_cache_dtype=fp8 reads k_scale and
//          v_scale per attention layer), so nothing per token: bytes = head_dim
//   int4   4 bits per element, asymmetric, in groups of kInt4GroupSize consecutive elements of
//          one head's vector, each group with an fp16 scale and an fp16 zero point (the
//          per-token group quantisation of KIVI, arXiv 2402.02750, §3 and its group size 32):
//          bytes = ceil(head_dim / 2) + ceil(head_dim / 32) · 4; for head_dim 128: 64 + 16 = 80
//          bytes against 256 in fp16 (3.2× smaller, not 4×)
// Pure functions over a plain enum; the config reads and writes it by name (kKvDtypeNames).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace pagesim::sim {

enum class KvDtype { kAuto, kFp16, kBf16, kFp8, kInt4 };

inline constexpr std::array<std::pair<KvDtype, std::string_view>, 5> kKvDtypeNames = {{
    {KvDtype::kAuto, "auto"},
    {KvDtype::kFp16, "fp16"},
    {KvDtype::kBf16, "bf16"},
    {KvDtype::kFp8, "fp8"},
    {KvDtype::kInt4, "int4"},
}};

// int4 KV: elements sharing one scale and zero point, and those two fp16 values' bytes.
inline constexpr std::int64_t kInt4GroupSize = 32;
inline constexpr std::int64_t kInt4GroupScaleBytes = 2 + 2;

// Bytes of one head's key (or value) vector of `head_dim` elements for one token in `dtype`,
// scale overhead included; `auto_element_bytes` is the model's dtype_bytes, used by kAuto.
// REQUIRES: head_dim >= 1, auto_element_bytes >= 1.
constexpr std::int64_t kv_head_vector_bytes(KvDtype dtype, std::int64_t head_dim,
                                            std::int64_t auto_element_bytes) {
  switch (dtype) {
    case KvDtype::kAuto: return head_dim * auto_element_bytes;
    case KvDtype::kFp16:
    case KvDtype::kBf16: return head_dim * 2;
    case KvDtype::kFp8: return head_dim;
    case KvDtype::kInt4:
      return (head_dim + 1) / 2 + (head_dim + kInt4GroupSize - 1) / kInt4GroupSize * kInt4GroupScaleBytes;
  }
  return 0;
}

}  // namespace pagesim::sim
