// TensorView: a non-owning view of a strided tensor in host or device memory.
//
// Up to 4 dimensions; shape and strides are in elements (not bytes). The view never owns
// or frees memory and says nothing about where the memory lives: the CPU reference reads
// host pointers, the CUDA launchers pass device pointers to kernels. An empty view
// (data == nullptr, rank 0) stands for an optional argument that is absent.
// A view is a plain value, safe to copy across threads; the memory it points to is not
// synchronised by it.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kernels/dtype.h"

namespace pagesim::kernels {

struct TensorView {
  static constexpr int kMaxRank = 4;

  void* data = nullptr;
  DType dtype = DType::kFloat32;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> stride{};

  // A row-major (C-contiguous) view of `data`. REQUIRES: 1 <= shape.size() <= kMaxRank.
  static TensorView contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> shape);
  static TensorView contiguous(const void* data, DType dtype,
                               std::initializer_list<std::int64_t> shape) {
    return contiguous(const_cast<void*>(data), dtype, shape);
  }
  // A view with explicit strides (elements). REQUIRES: shape.size() == strides.size().
  static TensorView strided(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                            std::initializer_list<std::int64_t> strides);

  bool empty() const { return data == nullptr && rank == 0; }
  std::int64_t numel() const;
  std::int64_t size(int dim) const { return shape[static_cast<std::size_t>(dim)]; }
  std::int64_t stride_of(int dim) const { return stride[static_cast<std::size_t>(dim)]; }
  // True if strides are exactly row-major for the shape.
  bool is_contiguous() const;
  // Largest element offset reachable + 1 (0 if any dimension is 0): how many elements the
  // memory behind `data` must hold. REQUIRES: non-negative strides.
  std::int64_t span_elements() const;

  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }

  // E.g. "f16[4, 32, 128] strides [4096, 128, 1]".
  std::string describe() const;
};

}  // namespace pagesim::kernels
