// DType: the element types a tensor of kernels/ may hold.
//
// Floating types hold attention data (fp32, fp16, bf16; arithmetic is always fp32 or wider);
// integer types hold block tables, lengths and slot mappings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pagesim::kernels {

enum class DType : std::uint8_t { kFloat32, kFloat16, kBFloat16, kInt32, kInt64 };

constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32: return 4;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
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
  }
  return "?";
}

constexpr bool is_floating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

}  // namespace pagesim::kernels
