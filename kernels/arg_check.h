// Helpers that validate TensorView arguments for kernels/ entry points.
//
// Each throws KernelError with a message "<fn>: <argument> <what was expected>, got <view>".
// They read shapes, strides and pointers only, never tensor data. Stateless.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/dtype.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels::detail {

[[noreturn]] void fail(const char* fn, const std::string& what);

inline void require(bool ok, const char* fn, const std::string& what) {
  if (!ok) fail(fn, what);
}

// `name` is rank `rank` with the given dtype and non-negative shape; a non-empty view needs a
// non-null pointer.
void expect_tensor(const TensorView& v, const char* fn, const char* name, int rank, DType dtype);
// Same with any floating dtype.
void expect_float_tensor(const TensorView& v, const char* fn, const char* name, int rank);
// A contiguous rank-1 tensor of `n` elements of `dtype`.
void expect_vector(const TensorView& v, const char* fn, const char* name, DType dtype,
                   std::int64_t n);
// The innermost dimension has stride 1.
void expect_inner_contiguous(const TensorView& v, const char* fn, const char* name);
// Every row (innermost dimension) starts on limits::kRowAlignmentBytes: pointer and outer
// strides are multiples of it.
void expect_row_aligned(const TensorView& v, const char* fn, const char* name);
// `name`.shape[dim] == expected.
void expect_dim(const TensorView& v, const char* fn, const char* name, int dim,
                std::int64_t expected, const char* meaning);

}  // namespace pagesim::kernels::detail
