// DType: the element types a tensor of kernels/ may hold.
//
// Floating types hold attention data (fp32, fp16, bf16; arithmetic is always fp32 or wider);
// fp8 (OCP E4M3, "e4m3fn": no infinities, 448 at most) holds only a latent KV cache
// (latent_attention.h), dequantized by a per-tensor scale; integer types hold block tables,
// lengths and slot mappings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pagesim::kernels {

enum class DType : std::uint8_t { kFloat32, kFloat16, kBFloat16, kInt32, kInt64, kFloat8E4M3 };

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat8E4M3: return 1;
  }
  return 0;
}

constexpr const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32: return "f32";
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kFloat8E4M3: return "fp8";
  }
  return "?";
}

// The dtypes of attention data: queries, outputs, K/V caches. Not fp8, which only a latent
// cache holds (with its scale).
constexpr bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

}  // namespace pagesim::kernels
