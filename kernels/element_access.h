// Reading and writing single elements of a host TensorView of any floating dtype (fp8 too,
// unscaled), widened to double. For the CPU reference and tests: simple, not fast.
#pragma once

#include <cstdint>

#include "kernels/fp8.h"
#include "kernels/half.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels {

// REQUIRES: v holds a floating dtype; `offset` (elements) is inside v's memory.
inline double load_element(const TensorView& v, std::int64_t offset) {
  switch (v.dtype) {
    case DType::kFloat16: return static_cast<float>(v.as<const Half>()[offset]);
    case DType::kBFloat16: return static_cast<float>(v.as<const BFloat16>()[offset]);
    case DType::kFloat8E4M3: return static_cast<float>(v.as<const Fp8E4M3>()[offset]);
    default: return v.as<const float>()[offset];
  }
}

// Widens the `n` consecutive elements of v starting at `offset` into dst[0 .. n). One dtype
// dispatch per call: for rows of a tile. REQUIRES: as load_element, for each of them.
inline void load_elements(const TensorView& v, std::int64_t offset, std::int64_t n, double* dst) {
  switch (v.dtype) {
    case DType::kFloat16: {
      const Half* src = v.as<const Half>() + offset;
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
      break;
    }
    case DType::kBFloat16: {
      const BFloat16* src = v.as<const BFloat16>() + offset;
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
      break;
    }
    case DType::kFloat8E4M3: {
      const Fp8E4M3* src = v.as<const Fp8E4M3>() + offset;
      for (std::int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>(src[i]);
      break;
    }
    default: {
      const float* src = v.as<const float>() + offset;
      for (std::int64_t i = 0; i < n; ++i) dst[i] = src[i];
      break;
    }
  }
}

// Rounds x to v's dtype (to float first, then to 16 bits with round-to-nearest-even).
inline void store_element(const TensorView& v, std::int64_t offset, double x) {
  const auto f = static_cast<float>(x);
  switch (v.dtype) {
    case DType::kFloat16: v.as<Half>()[offset] = Half(f); break;
    case DType::kBFloat16: v.as<BFloat16>()[offset] = BFloat16(f); break;
    case DType::kFloat8E4M3: v.as<Fp8E4M3>()[offset] = Fp8E4M3(f); break;
    default: v.as<float>()[offset] = f; break;
  }
}

}  // namespace pagesim::kernels
