#include "kernels/decode_plan.h"

#include <gtest/gtest.h>

#include <vector>

#include "kernels/kernel_error.h"
#include "kernels/limits.h"

namespace pagesim::kernels {
namespace {

DecodeProblem problem(const std::vector<std::int32_t>& lens, int hq, int hkv, DType t = DType::kFloat16,
                      int d = 128) {
  DecodeProblem p;
  p.num_seqs = static_cast<std::int32_t>(lens.size());
  p.num_q_heads = hq;
  p.num_kv_heads = hkv;
  p.head_dim = d;
  p.dtype = t;
  p.kv_lens = lens;
  return p;
}

TEST(DecodePlan, TileConstants) {
  // f16, d = 128: 16 lanes per 256-byte row, 2 rows per warp step, 8 tokens per lane group.
  constexpr DecodeTile t = decode_tile(2, 128);
  static_assert(t.vec_elems == 8 && t.lanes_per_token == 16 && t.vecs_per_lane == 1);
  static_assert(t.tokens_per_group == 8 && t.tokens_per_iteration == 64);
  // d = 80: 10 vectors padded to 16 lanes.
  static_assert(decode_tile(2, 80).lanes_per_token == 16);
  // f32, d = 256: 64 vectors, 2 per lane, 4 tokens per group.
  static_assert(decode_tile(4, 256).vecs_per_lane == 2 && decode_tile(4, 256).tokens_per_group == 4);
  for (std::int32_t d : limits::kHeadDims) {
    for (std::int32_t e : {2, 4}) {
      const DecodeTile x = decode_tile(e, d);
      EXPECT_LE(x.vecs_per_lane * x.lanes_per_token * x.vec_elems, 2 * d) << d;
      EXPECT_GE(x.vecs_per_lane * x.lanes_per_token * x.vec_elems, d) << d;
      for (std::int32_t size : kDecodePartitionSizes) EXPECT_EQ(size % x.tokens_per_iteration, 0) << d;
    }
  }
}

TEST(DecodePlan, ManyShortSequencesUseV1) {
  const std::vector<std::int32_t> lens(256, 200);
  const DecodePlan plan = plan_decode(problem(lens, 32, 32), {});
  EXPECT_EQ(plan.algo, DecodeAlgo::kV1);
  EXPECT_EQ(plan.workspace_bytes, 0u);
  EXPECT_EQ(plan.max_partitions, 1);
  EXPECT_EQ(plan.max_kv_len, 200);
}

TEST(DecodePlan, OneLongSequenceUsesV2) {
  const std::vector<std::int32_t> lens{65536};
  const DecodePlan plan = plan_decode(problem(lens, 32, 32), {});
  EXPECT_EQ(plan.algo, DecodeAlgo::kV2);
  EXPECT_GE(plan.partition_size, 256);
  EXPECT_LE(plan.partition_size, 2048);
  EXPECT_EQ(plan.max_partitions, (65536 + plan.partition_size - 1) / plan.partition_size);
  // Partials: seqs x q heads x partitions x (head_dim + 1) floats, 256-byte aligned parts.
  const std::size_t rows = 32u * static_cast<std::size_t>(plan.max_partitions);
  EXPECT_GE(plan.workspace_bytes, rows * (128 + 1) * sizeof(float));
  EXPECT_EQ(plan.partial_lse_offset % 256, 0u);
  EXPECT_GE(plan.partial_lse_offset, rows * 128 * sizeof(float));
}

TEST(DecodePlan, FewSequencesWithGqaUseV2) {
  const std::vector<std::int32_t> lens{8192, 8000};
  const DecodePlan plan = plan_decode(problem(lens, 32, 8), {});
  EXPECT_EQ(plan.algo, DecodeAlgo::kV2);
  EXPECT_EQ(plan.kernel, DecodeKernel::kTensorCores);  // f16, group of 4
  EXPECT_EQ(plan.heads_per_cta, 16);
  EXPECT_EQ(plan.head_groups, 1);
}

TEST(DecodePlan, KernelFollowsDtypeAndGroup) {
  EXPECT_EQ(decode_kernel_for(DType::kFloat16, 1), DecodeKernel::kCudaCores);
  EXPECT_EQ(decode_kernel_for(DType::kFloat16, kDecodeMmaMinGroup), DecodeKernel::kTensorCores);
  EXPECT_EQ(decode_kernel_for(DType::kBFloat16, 8), DecodeKernel::kTensorCores);
  EXPECT_EQ(decode_kernel_for(DType::kFloat32, 8), DecodeKernel::kCudaCores);  // no f32 mma
  // CUDA cores hold the group rounded up to a power of two, at most 4 heads.
  EXPECT_EQ(decode_simt_heads(1), 1);
  EXPECT_EQ(decode_simt_heads(2), 2);
  EXPECT_EQ(decode_simt_heads(3), 4);
  EXPECT_EQ(decode_simt_heads(8), 4);
  const std::vector<std::int32_t> lens(4, 100);
  EXPECT_EQ(make_decode_plan(problem(lens, 32, 32), DecodeAlgo::kV1, 0).heads_per_cta, 1);  // MHA
  const DecodePlan simt = make_decode_plan(problem(lens, 32, 8), DecodeAlgo::kV1, 0, DecodeKernel::kCudaCores);
  EXPECT_EQ(simt.kernel, DecodeKernel::kCudaCores);
  EXPECT_EQ(simt.heads_per_cta, 4);
  EXPECT_THROW(make_decode_plan(problem(lens, 32, 8, DType::kFloat32), DecodeAlgo::kV1, 0, DecodeKernel::kTensorCores),
               KernelError);
  // Shared memory: three stages of 16 K and V rows per warp up to head_dim 128, two above.
  static_assert(decode_mma_smem_bytes(128) == 4u * 3 * 2 * 16 * 136 * 2);
  static_assert(decode_mma_smem_bytes(256) == 4u * 2 * 2 * 16 * 264 * 2);
  for (std::int32_t d : limits::kHeadDims) EXPECT_LE(decode_mma_smem_bytes(d), 163u * 1024) << d;  // A100 opt-in
}

TEST(DecodePlan, HeadGroupsCoverLargeGroups) {
  const std::vector<std::int32_t> lens(4, 100);
  const DType f32 = DType::kFloat32;
  EXPECT_EQ(plan_decode(problem(lens, 32, 1, f32), {}).head_groups, 8);  // MQA on CUDA cores: 32 / 4
  EXPECT_EQ(plan_decode(problem(lens, 6, 2, f32), {}).head_groups, 1);   // group of 3 fits one CTA
  EXPECT_EQ(plan_decode(problem(lens, 10, 2, f32), {}).head_groups, 2);  // group of 5
  EXPECT_EQ(plan_decode(problem(lens, 32, 1), {}).head_groups, 2);       // MQA on tensor cores: 32 / 16
  EXPECT_EQ(plan_decode(problem(lens, 10, 2), {}).head_groups, 1);
  EXPECT_EQ(plan_decode(problem(lens, 34, 2), {}).head_groups, 2);       // group of 17
}

TEST(DecodePlan, EmptyAndZeroLengthBatches) {
  const std::vector<std::int32_t> none;
  EXPECT_EQ(plan_decode(problem(none, 8, 8), {}).algo, DecodeAlgo::kV1);
  const std::vector<std::int32_t> zeros(3, 0);
  const DecodePlan plan = plan_decode(problem(zeros, 8, 8), {});
  EXPECT_EQ(plan.algo, DecodeAlgo::kV1);
  EXPECT_EQ(plan.max_kv_len, 0);
  const DecodePlan forced = make_decode_plan(problem(zeros, 8, 8), DecodeAlgo::kV2, 256);
  EXPECT_EQ(forced.max_partitions, 1);
  EXPECT_GT(forced.workspace_bytes, 0u);
}

TEST(DecodePlan, DeterministicAndMoreSlotsNeverForceV2) {
  const std::vector<std::int32_t> lens(64, 4096);
  const DecodePlan a = plan_decode(problem(lens, 32, 32), {132, 3});
  const DecodePlan b = plan_decode(problem(lens, 32, 32), {132, 3});
  EXPECT_EQ(a.algo, b.algo);
  EXPECT_EQ(a.partition_size, b.partition_size);
  // With one CTA slot, splitting only adds overhead: v1.
  EXPECT_EQ(plan_decode(problem(lens, 32, 32), {1, 1}).algo, DecodeAlgo::kV1);
}

TEST(DecodePlan, BadInputsThrow) {
  const std::vector<std::int32_t> lens{10, -1};
  EXPECT_THROW(plan_decode(problem(lens, 8, 8), {}), KernelError);
  const std::vector<std::int32_t> ok{10};
  EXPECT_THROW(plan_decode(problem(ok, 6, 4), {}), KernelError);
  EXPECT_THROW(plan_decode(problem(ok, 8, 8), {0, 1}), KernelError);
  EXPECT_THROW(make_decode_plan(problem(ok, 8, 8), DecodeAlgo::kV2, 0), KernelError);
  const std::vector<std::int32_t> huge{1 << 30};
  EXPECT_THROW(make_decode_plan(problem(huge, 8, 8), DecodeAlgo::kV2, 256), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels
