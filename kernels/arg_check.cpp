#include "kernels/arg_check.h"

#include <cstdint>

#include "kernels/kernel_error.h"
#include "kernels/limits.h"

namespace pagesim::kernels::detail {

void fail(const char* fn, const std::string& what) { throw KernelError(std::string(fn) + ": " + what); }

namespace {
void expect_rank_and_shape(const TensorView& v, const char* fn, const char* name, int rank) {
  require(v.rank == rank, fn,
          [&] { return std::string(name) + " must have rank " + std::to_string(rank) + ", got " + v.describe(); });
  for (int d = 0; d < rank; ++d) {
    require(v.shape[static_cast<std::size_t>(d)] >= 0, fn,
            [&] { return std::string(name) + " has a negative dimension: " + v.describe(); });
  }
  require(v.data != nullptr || v.numel() == 0, fn, [&] { return std::string(name) + " has a null pointer"; });
}
}  // namespace

void expect_tensor(const TensorView& v, const char* fn, const char* name, int rank, DType dtype) {
  expect_rank_and_shape(v, fn, name, rank);
  require(v.dtype == dtype, fn,
          [&] { return std::string(name) + " must be " + dtype_name(dtype) + ", got " + v.describe(); });
}

void expect_float_tensor(const TensorView& v, const char* fn, const char* name, int rank) {
  expect_rank_and_shape(v, fn, name, rank);
  require(is_floating(v.dtype), fn,
          [&] { return std::string(name) + " must be f32, f16 or bf16, got " + v.describe(); });
}

void expect_vector(const TensorView& v, const char* fn, const char* name, DType dtype,
                   std::int64_t n) {
  expect_tensor(v, fn, name, 1, dtype);
  require(v.shape[0] == n, fn,
          [&] { return std::string(name) + " must have " + std::to_string(n) + " elements, got " + v.describe(); });
  require(v.shape[0] <= 1 || v.stride[0] == 1, fn,
          [&] { return std::string(name) + " must be contiguous, got " + v.describe(); });
}

void expect_inner_contiguous(const TensorView& v, const char* fn, const char* name) {
  require(v.rank >= 1 && v.stride[static_cast<std::size_t>(v.rank - 1)] == 1, fn,
          [&] { return std::string(name) + " must have a contiguous last dimension (stride 1), got " +
              v.describe(); });
}

void expect_row_aligned(const TensorView& v, const char* fn, const char* name) {
  const auto align = static_cast<std::uintptr_t>(limits::kRowAlignmentBytes);
  require(reinterpret_cast<std::uintptr_t>(v.data) % align == 0, fn,
          [&] { return std::string(name) + " must start on a " + std::to_string(align) +
              "-byte boundary, got " + v.describe(); });
  const auto elem = static_cast<std::int64_t>(dtype_size(v.dtype));
  const auto a = static_cast<std::int64_t>(align);
  for (int d = 0; d < v.rank; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (d == v.rank - 1) {
      require(v.shape[i] * elem % a == 0, fn,
              [&] { return std::string(name) + " rows must be a multiple of " + std::to_string(a) +
                  " bytes, got " + v.describe(); });
    } else if (v.shape[i] > 1) {
      require(v.stride[i] * elem % a == 0, fn,
              [&] { return std::string(name) + " stride of dim " + std::to_string(d) + " must be a multiple of " +
                  std::to_string(a) + " bytes, got " + v.describe(); });
    }
  }
}

void expect_dim(const TensorView& v, const char* fn, const char* name, int dim,
                std::int64_t expected, const char* meaning) {
  require(v.shape[static_cast<std::size_t>(dim)] == expected, fn,
          [&] { return std::string(name) + ".shape[" + std::to_string(dim) + "] (" + meaning + ") must be " +
              std::to_string(expected) + ", got " + v.describe(); });
}

}  // namespace pagesim::kernels::detail
