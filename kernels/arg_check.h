// Helpers that validate TensorView arguments for kernels/ entry points.
//
// Each throws KernelError with a message "<fn>: <argument> <what was expected>, got <view>".
// They read shapes, strides and pointers only, never tensor data. Stateless.
//
// Messages are built only when a check fails: a launch runs ~90 checks and passes them all,
// so formatting (describe(), to_string) on the passing path would cost tens of microseconds
// per launch. `require` therefore takes either a string literal or a callable that builds
// the message; passing a ready std::string does not compile.
#pragma once

#include <concepts>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/dtype.h"
#include "kernels/tensor_view.h"

namespace pagesim::kernels::detail {

[[noreturn]] void fail(const char* fn, const std::string& what);

// A fixed message: nothing is formatted.
inline void require(bool ok, const char* fn, const char* what) {
  if (!ok) [[unlikely]] {
    fail(fn, what);
  }
}
// A built message: message() runs only when ok is false.
template <class Message>
  requires std::is_invocable_r_v<std::string, Message&>
inline void require(bool ok, const char* fn, Message&& message) {
  if (!ok) [[unlikely]] {
    fail(fn, message());
  }
}
// A std::string would be built before the check, on the passing path too: use a lambda.
void require(bool ok, const char* fn, const std::string& what) = delete;

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

// A batch's block table (i32 [num_seqs, max_blocks], contiguous rows, row stride >= its
// columns) and its kv_lens (i32 [num_seqs]); returns num_seqs.
std::int32_t expect_block_table(const TensorView& block_table, const TensorView& kv_lens, const char* fn);
// query_starts: empty for decode (then one query row per sequence), else i32 [num_seqs + 1].
// Returns whether the batch is a decode.
bool expect_query_starts(const TensorView& query_starts, std::int32_t num_query_tokens, std::int32_t num_seqs,
                         const char* fn);

}  // namespace pagesim::kernels::detail
