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

std::int32_t expect_block_table(const TensorView& block_table, const TensorView& kv_lens, const char* fn) {
  expect_tensor(block_table, fn, "block_table", 2, DType::kInt32);
  require(block_table.shape[0] <= INT32_MAX, fn, [&] { return "too many sequences: " + block_table.describe(); });
  const auto num_seqs = static_cast<std::int32_t>(block_table.shape[0]);
  require(block_table.shape[1] <= 1 || block_table.stride[1] == 1, fn,
          [&] { return "block_table rows must be contiguous, got " + block_table.describe(); });
  require(num_seqs <= 1 || block_table.stride[0] >= block_table.shape[1], fn,
          [&] { return "block_table row stride must be >= its column count, got " + block_table.describe(); });
  expect_vector(kv_lens, fn, "kv_lens", DType::kInt32, num_seqs);
  return num_seqs;
}

bool expect_query_starts(const TensorView& query_starts, std::int32_t num_query_tokens, std::int32_t num_seqs,
                         const char* fn) {
  if (query_starts.empty()) {
    require(num_query_tokens == num_seqs, fn, [&] {
      return "decode (no query_starts) needs one query row per sequence: query.shape[0] = " +
             std::to_string(num_query_tokens) + ", num_seqs = " + std::to_string(num_seqs);
    });
    return true;
  }
  expect_vector(query_starts, fn, "query_starts", DType::kInt32, static_cast<std::int64_t>(num_seqs) + 1);
  return false;
}

}  // namespace pagesim::kernels::detail
