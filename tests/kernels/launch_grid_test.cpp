// Launch grids are planned and checked on the host (launch_grid.h): an oversized grid is
// named before anything runs. The decode v2 merge kernel puts sequences on grid.x, so a batch
// of more than 65535 sequences plans and launches; only what cannot fit is refused.
#include "kernels/launch_grid.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/decode_plan.h"
#include "kernels/kernel_error.h"
#include "kernels/prefill_plan.h"

namespace pagesim::kernels {
namespace {

TEST(LaunchGrid, LimitsAreCudas) {
  EXPECT_TRUE(grid_fits({1, 1, 1}));
  EXPECT_TRUE(grid_fits({2147483647, 65535, 65535}));
  EXPECT_FALSE(grid_fits({2147483648LL, 1, 1}));
  EXPECT_FALSE(grid_fits({1, 65536, 1}));
  EXPECT_FALSE(grid_fits({1, 1, 65536}));
  EXPECT_FALSE(grid_fits({0, 1, 1}));
}

TEST(LaunchGrid, ACheckNamesTheKernelAndTheGrid) {
  EXPECT_NO_THROW(check_launch_grid({70000, 32, 1}, "fn", "k"));
  try {
    check_launch_grid({32, 70000, 1}, "paged_decode", "decode_merge_kernel");
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("paged_decode: decode_merge_kernel needs grid (32, 70000, 1)"), std::string::npos) << m;
    EXPECT_NE(m.find("65535"), std::string::npos) << m;
  }
}

DecodeProblem decode_problem(std::int32_t num_seqs, std::int32_t len, std::vector<std::int32_t>& lens) {
  lens.assign(static_cast<std::size_t>(num_seqs), len);
  DecodeProblem p;
  p.num_seqs = num_seqs;
  p.num_q_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.kv_lens = lens;
  return p;
}

TEST(LaunchGrid, DecodeGridsPutSequencesOnX) {
  std::vector<std::int32_t> lens;
  const DecodeProblem p = decode_problem(70000, 2048, lens);
  const DecodePlan v2 = make_decode_plan(p, DecodeAlgo::kV2, 512);
  EXPECT_EQ(decode_kernel_grid(v2, p.num_seqs, p.num_kv_heads), (LaunchGrid{70000LL * 8 * v2.head_groups, 4, 1}));
  EXPECT_EQ(decode_merge_grid(p.num_seqs, p.num_q_heads), (LaunchGrid{70000, 32, 1}));
  EXPECT_TRUE(grid_fits(decode_merge_grid(p.num_seqs, p.num_q_heads)));
  const DecodePlan v1 = make_decode_plan(p, DecodeAlgo::kV1, 0);
  EXPECT_EQ(decode_kernel_grid(v1, p.num_seqs, p.num_kv_heads).y, 1);
}

TEST(LaunchGrid, MoreThan65535SequencesPlanForBothAlgorithms) {
  std::vector<std::int32_t> lens;
  const DecodeProblem p = decode_problem(100000, 300, lens);
  EXPECT_NO_THROW(make_decode_plan(p, DecodeAlgo::kV1, 0));
  EXPECT_NO_THROW(make_decode_plan(p, DecodeAlgo::kV2, 256));
  EXPECT_NO_THROW(plan_decode(p, DecodeDeviceCaps{}));
}

TEST(LaunchGrid, ADecodeGridBeyondTheLimitIsRefusedByThePlanner) {
  // 2^31 CTAs on x: 300000 sequences x 8 KV heads x 1000 head groups: on CUDA cores (f32, 4
  // heads a CTA) 4000 query heads per KV head, on tensor cores (f16, 16 a CTA) 16000.
  std::vector<std::int32_t> lens(300000, 1);
  DecodeProblem p;
  p.num_seqs = 300000;
  p.num_kv_heads = 8;
  p.num_q_heads = 8 * 4000;
  p.head_dim = 128;
  p.dtype = DType::kFloat32;
  p.kv_lens = lens;
  EXPECT_THROW(make_decode_plan(p, DecodeAlgo::kV1, 0), KernelError);
  p.dtype = DType::kFloat16;
  EXPECT_NO_THROW(make_decode_plan(p, DecodeAlgo::kV1, 0));  // 250 head groups of 16
  p.num_q_heads = 8 * 16000;
  EXPECT_THROW(make_decode_plan(p, DecodeAlgo::kV1, 0), KernelError);
  // More query heads than grid.y may hold: the v2 merge grid is refused, v1 still plans and
  // plan_decode skips the v2 candidates.
  std::vector<std::int32_t> one(1, 100000);
  DecodeProblem heads;
  heads.num_seqs = 1;
  heads.num_kv_heads = 1;
  heads.num_q_heads = 70000;
  heads.head_dim = 128;
  heads.kv_lens = one;
  EXPECT_THROW(make_decode_plan(heads, DecodeAlgo::kV2, 512), KernelError);
  EXPECT_EQ(plan_decode(heads, DecodeDeviceCaps{}).algo, DecodeAlgo::kV1);
}

TEST(LaunchGrid, PrefillGridIsTilesHeadsSequences) {
  PrefillProblem p;
  p.num_seqs = 3;
  p.num_q_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.max_query_len = 4096;
  const PrefillPlan plan = plan_prefill(p);
  EXPECT_EQ(prefill_grid(plan), (LaunchGrid{4096 * 4 / 128, 8, 3}));
  p.num_seqs = 65536;
  EXPECT_THROW(plan_prefill(p), KernelError);
}

// The prefill launcher checks the tile's dynamic shared memory against the device's opt-in
// limit (and cudaFuncSetAttribute's result): d256 f16 needs 132 KiB, more than sm_86/89 give.
TEST(LaunchGrid, PrefillSharedMemoryIsCheckedAgainstTheDevice) {
  PrefillProblem p;
  p.num_seqs = 1;
  p.num_q_heads = 2;
  p.num_kv_heads = 1;
  p.head_dim = 256;
  p.max_query_len = 16;
  const PrefillPlan plan = plan_prefill(p);
  EXPECT_NO_THROW(check_prefill_smem(plan, 227 * 1024, "paged_prefill"));
  try {
    check_prefill_smem(plan, 99 * 1024, "paged_prefill");
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(std::to_string(plan.smem_bytes)), std::string::npos) << m;
    EXPECT_NE(m.find(std::to_string(99 * 1024)), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace pagesim::kernels
