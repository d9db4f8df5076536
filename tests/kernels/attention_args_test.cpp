// Launch validation: bad shapes, dtypes, sizes and alignment are KernelErrors naming the
// argument and the expected value, checked without touching tensor data (no GPU needed).
#include "kernels/attention_args.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "attention_problem.h"
#include "kernels/kernel_error.h"
#include "kernels/kv_layout.h"

namespace pagesim::kernels {
namespace {

using testing::AttentionProblem;
using testing::ProblemSpec;

std::string error_of(const PagedAttentionArgs& a, Backend backend) {
  try {
    check_paged_attention_args(a, "paged_decode", backend);
  } catch (const KernelError& e) {
    return e.what();
  }
  return "";
}

class AttentionArgs : public ::testing::Test {
 protected:
  AttentionArgs() : problem_(spec()) {
    out_.resize(static_cast<std::size_t>(problem_.num_query_tokens() * 8 * 64 * 2));
  }
  static ProblemSpec spec() {
    ProblemSpec s;
    s.kv_lens = {3, 20};
    s.num_q_heads = 8;
    s.num_kv_heads = 2;
    s.head_dim = 64;
    s.dtype = DType::kFloat16;
    return s;
  }
  PagedAttentionArgs args() {
    return problem_.paged_args(TensorView::contiguous(out_.data(), DType::kFloat16,
                                                      {problem_.num_query_tokens(), 8, 64}));
  }
  AttentionProblem problem_;
  std::vector<std::byte> out_;
};

TEST_F(AttentionArgs, ValidArgsGiveTheShape) {
  const AttentionShape s = check_paged_attention_args(args(), "f", Backend::kCuda);
  EXPECT_EQ(s.num_seqs, 2);
  EXPECT_EQ(s.num_q_heads, 8);
  EXPECT_EQ(s.num_kv_heads, 2);
  EXPECT_EQ(s.group_size(), 4);
  EXPECT_EQ(s.head_dim, 64);
  EXPECT_EQ(s.block_size, 16);
  EXPECT_TRUE(s.decode);
  EXPECT_EQ(s.dtype, DType::kFloat16);
}

TEST_F(AttentionArgs, UnsupportedHeadDimIsNamed) {
  PagedAttentionArgs a = args();
  // Same memory, viewed with head_dim 72 everywhere.
  a.query.shape[2] = 72;
  a.out.shape[2] = 72;
  a.k_cache.shape[3] = 72;
  a.v_cache.shape[3] = 72;
  const std::string e = error_of(a, Backend::kCuda);
  EXPECT_NE(e.find("paged_decode: head_dim 72 is not supported; expected one of 64, 80, 96, 112, 128, 256"),
            std::string::npos) << e;
  EXPECT_EQ(error_of(a, Backend::kReference), "");  // the reference takes any head size
}

TEST_F(AttentionArgs, UnsupportedBlockSizeIsNamed) {
  PagedAttentionArgs a = args();
  a.k_cache.shape[2] = 12;
  a.v_cache.shape[2] = 12;
  const std::string e = error_of(a, Backend::kCuda);
  EXPECT_NE(e.find("block_size 12 is not supported"), std::string::npos) << e;
  EXPECT_EQ(error_of(a, Backend::kReference), "");
}

TEST_F(AttentionArgs, MixedDtypesAreRejectedForCuda) {
  PagedAttentionArgs a = args();
  a.out.dtype = DType::kFloat32;
  EXPECT_NE(error_of(a, Backend::kCuda).find("share one dtype"), std::string::npos);
  EXPECT_EQ(error_of(a, Backend::kReference), "");
  a.out.dtype = DType::kInt32;
  EXPECT_NE(error_of(a, Backend::kReference).find("out must be f32, f16 or bf16"), std::string::npos);
}

TEST_F(AttentionArgs, InconsistentShapesAreNamed) {
  PagedAttentionArgs a = args();
  a.out.shape[1] = 4;
  EXPECT_NE(error_of(a, Backend::kCuda).find("out.shape[1] (same as query) must be 8"), std::string::npos);
  a = args();
  a.out.shape[1] = 7;
  a.query.shape[1] = 7;
  EXPECT_NE(error_of(a, Backend::kCuda).find("num_q_heads (7) must be a positive multiple of num_kv_heads (2)"),
            std::string::npos);
  a = args();
  a.v_cache.stride[0] += 8;
  EXPECT_NE(error_of(a, Backend::kCuda).find("v_cache must have the shape and strides of k_cache"),
            std::string::npos);
  a = args();
  a.kv_lens.shape[0] = 3;
  EXPECT_NE(error_of(a, Backend::kCuda).find("kv_lens must have 2 elements"), std::string::npos);
  a = args();
  a.block_table.dtype = DType::kInt64;
  EXPECT_NE(error_of(a, Backend::kCuda).find("block_table must be i32"), std::string::npos);
  a = args();
  a.query.shape[0] = 3;
  a.out.shape[0] = 3;
  EXPECT_NE(error_of(a, Backend::kCuda).find("decode (no query_starts) needs one query row per sequence"),
            std::string::npos);
}

TEST_F(AttentionArgs, MisalignmentIsNamed) {
  PagedAttentionArgs a = args();
  a.query.data = static_cast<char*>(a.query.data) + 2;
  EXPECT_NE(error_of(a, Backend::kCuda).find("query must start on a 16-byte boundary"), std::string::npos);
  EXPECT_EQ(error_of(a, Backend::kReference), "");
  a = args();
  a.query.stride[1] = 68;  // 136 bytes: rows not 16-byte aligned
  a.query.stride[0] = 8 * 68;
  EXPECT_NE(error_of(a, Backend::kCuda).find("query stride of dim 1 must be a multiple of 16 bytes"),
            std::string::npos);
}

TEST_F(AttentionArgs, NonFiniteScaleAndBadAlibi) {
  PagedAttentionArgs a = args();
  a.scale = std::numeric_limits<float>::infinity();
  EXPECT_NE(error_of(a, Backend::kCuda).find("scale must be finite"), std::string::npos);
  a = args();
  float slopes[4] = {};
  a.alibi_slopes = TensorView::contiguous(slopes, DType::kFloat32, {4});
  EXPECT_NE(error_of(a, Backend::kCuda).find("alibi_slopes must have 8 elements"), std::string::npos);
}

}  // namespace
}  // namespace pagesim::kernels
