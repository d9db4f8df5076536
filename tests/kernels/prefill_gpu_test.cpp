// CUDA paged prefill (tensor cores for f16/bf16, CUDA cores for f32) against the dense CPU
// reference: dtypes x head sizes x block sizes (8 ... 128) x GQA ratios, each batch mixing
// fresh prompts and chunks with history (query_len < kv_len), lengths 1, block +- 1 and
// tile +- 1; long histories (8k, 32k) separately. Skips where no GPU is present.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/kernel_error.h"
#include "kernels/limits.h"
#include "kernels/paged_attention.h"

namespace pagesim::kernels {
namespace {

using testing::AttentionProblem;
using testing::DeviceProblem;
using testing::ProblemSpec;

// With `free_outside_mask`, the device table has every block before a sequence's attended
// range freed (-1), as the hybrid and Jenga pools leave a sliding-window layer's table.
void check_prefill(const AttentionProblem& p, const std::string& label, bool free_outside_mask = false) {
  DeviceProblem dev(p);
  if (free_outside_mask) dev.upload_block_table(testing::freed_block_table(p));
  const PagedAttentionArgs args = dev.args();
  const PrefillProblem problem = prefill_problem(args, p.batch().max_query_len);
  const PrefillPlan plan = plan_prefill(problem);
  std::vector<float> ref = testing::dense_reference(p);
  // The planned kernel, and mma.sync too where the plan took the Hopper (wgmma) kernel.
  std::vector<PrefillPlan> plans = {plan};
  if (plan.kernel == PrefillKernel::kWgmma) plans.push_back(make_prefill_plan(problem, PrefillKernel::kMma));
  for (const PrefillPlan& run : plans) {
    dev.poison_output();
    paged_prefill(args, run, nullptr);
    std::vector<std::byte> storage;
    const TensorView out = dev.download_output(storage);
    testing::expect_matches_reference(out, testing::reference_view(p, ref), p.spec().dtype,
                                      label + " (" + prefill_kernel_name(run.kernel) + ")");
  }
}

class PrefillGpu : public ::testing::TestWithParam<testing::KernelGridParam> {};

TEST_P(PrefillGpu, MatchesReference) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec = testing::grid_spec(GetParam());
  const int bs = spec.block_size;
  // (kv_len, query_len): single token, block - 1, block + 1, history + chunk, a tile of 128
  // packed rows +- 1 (for group 1), a longer prompt.
  spec.kv_lens = {1, bs - 1, bs + 1, 2 * bs + 3, 127, 129, 300, 300};
  spec.query_lens = {1, bs - 1, bs + 1, bs, 127, 129, 300, 45};
  spec.shared_prefix_blocks = 1;
  spec.alibi = (spec.head_dim + bs) % 3 == 0;  // a spread of cases with ALiBi
  check_prefill(AttentionProblem(spec), "grid");
}

INSTANTIATE_TEST_SUITE_P(Grid, PrefillGpu,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(64, 80, 96, 112, 128, 256),
                                            ::testing::Values(8, 16, 32, 128), ::testing::Values(1, 4, 8)),
                         testing::kernel_grid_name);

// Sliding-window and chunked-local masks with the blocks before each sequence's attended
// range freed: fresh prompts and chunks after history, windows shorter than a key tile, a
// block and a prompt, match the dense reference and never read a freed entry.
using testing::MaskParam;
class PrefillGpuMask : public ::testing::TestWithParam<MaskParam> {};

TEST_P(PrefillGpuMask, MatchesReferenceWithFreedBlocks) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec = testing::mask_spec(GetParam());
  const int window = std::get<2>(GetParam());
  spec.kv_lens = {1, window, window + 1, 3 * window + 2, 300, 300, 700};
  spec.query_lens = {1, window, 2, window + 1, 300, 45, 129};
  check_prefill(AttentionProblem(spec), "mask", /*free_outside_mask=*/true);
}

INSTANTIATE_TEST_SUITE_P(Masks, PrefillGpuMask,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(MaskKind::kSlidingWindow, MaskKind::kChunkedLocal),
                                            ::testing::Values(1, 7, 128, 200)),
                         testing::mask_param_name);

class PrefillGpuOptions : public ::testing::TestWithParam<DType> {};

TEST_P(PrefillGpuOptions, NhdMqaAndEmptyQueries) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec;
  spec.dtype = GetParam();
  spec.head_dim = 128;
  spec.block_size = 16;
  spec.layout = KvLayout::kNHD;
  spec.num_q_heads = 16;
  spec.num_kv_heads = 1;  // MQA: 16 packed rows per token
  spec.alibi = true;
  spec.kv_lens = {40, 17, 0, 64};
  spec.query_lens = {40, 0, 0, 9};  // sequences with no query rows
  check_prefill(AttentionProblem(spec), "nhd mqa");
}

TEST_P(PrefillGpuOptions, ExtremeBlockSizes) {
  PAGESIM_REQUIRE_GPU();
  for (int bs : {1, 2, 512, 1024}) {
    ProblemSpec spec;
    spec.dtype = GetParam();
    spec.head_dim = 64;
    spec.block_size = bs;
    spec.num_q_heads = 8;
    spec.num_kv_heads = 2;
    spec.kv_lens = {1, 3, 200, 1100};
    spec.query_lens = {1, 3, 150, 70};
    check_prefill(AttentionProblem(spec), "block " + std::to_string(bs));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, PrefillGpuOptions,
                         ::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                         testing::dtype_param_name);

// Long histories: a chunk of queries over 8k / 32k cached tokens.
using LongParam = std::tuple<DType, int>;  // dtype, context
class PrefillGpuLong : public ::testing::TestWithParam<LongParam> {};

TEST_P(PrefillGpuLong, MatchesReference) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, ctx] = GetParam();
  ProblemSpec spec;
  spec.dtype = dtype;
  spec.head_dim = 128;
  spec.block_size = 16;
  spec.num_q_heads = 4;
  spec.num_kv_heads = 1;
  spec.kv_lens = {ctx, 1000};
  spec.query_lens = {ctx == 8192 ? 256 : 32, 1000};
  check_prefill(AttentionProblem(spec), "long");
}

std::string long_name(const ::testing::TestParamInfo<LongParam>& info) {
  const auto [t, c] = info.param;
  return std::string(dtype_name(t)) + "_ctx" + std::to_string(c);
}

INSTANTIATE_TEST_SUITE_P(Contexts, PrefillGpuLong,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(8192, 32768)),
                         long_name);

// A cache of more than 2^31 elements per tensor, with the batch's blocks at the top of it
// (as DecodeGpuLarge): every K/V offset needs 64 bits. ~4.3 GB per cache (f16).
TEST(PrefillGpuLarge, OffsetsBeyond2Pow31Elements) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec;
  spec.dtype = DType::kFloat16;
  spec.head_dim = 128;
  spec.block_size = 16;
  spec.num_q_heads = 8;
  spec.num_kv_heads = 2;
  spec.kv_lens = {300, 37};
  spec.query_lens = {130, 37};
  spec.spare_blocks = 0;
  const AttentionProblem p(spec);
  testing::LargeCaches big = testing::large_caches(p, 600000);
  ASSERT_GT(static_cast<std::int64_t>(big.base) * 2 * 16 * 128, (1LL << 31));
  DeviceBuffer dtable = testing::device_copy(testing::shifted_block_table(p, big.base));
  DeviceProblem dev(p);
  PagedAttentionArgs args = dev.args();
  args.k_cache = big.k_view;
  args.v_cache = big.v_view;
  args.block_table.data = dtable.get();
  paged_prefill(args, plan_prefill(prefill_problem(args, p.batch().max_query_len)), nullptr);
  std::vector<std::byte> storage;
  const TensorView out = dev.download_output(storage);
  std::vector<float> ref = testing::dense_reference(p);
  testing::expect_matches_reference(out, testing::reference_view(p, ref), DType::kFloat16, "large cache");
}

// The launcher raises each prefill kernel's shared-memory limit (cudaFuncSetAttribute, whose
// failure it reports); on this device every dtype and head size must fit the opt-in limit.
TEST(PrefillGpuOptions, EveryTileFitsTheDeviceSharedMemory) {
  PAGESIM_REQUIRE_GPU();
  int device = 0, optin = 0;
  check_cuda(cudaGetDevice(&device), "test", "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "test",
             "cudaDeviceGetAttribute");
  for (DType t : {DType::kFloat16, DType::kBFloat16, DType::kFloat32}) {
    for (int d : limits::kHeadDims) {
      PrefillProblem problem;
      problem.num_seqs = 1;
      problem.num_q_heads = 2;
      problem.num_kv_heads = 1;
      problem.head_dim = d;
      problem.dtype = t;
      problem.max_query_len = 8;
      EXPECT_NO_THROW(check_prefill_smem(plan_prefill(problem), optin, "test")) << dtype_name(t) << " d" << d;
    }
  }
}

TEST(PrefillGpuValidation, BadArgumentsThrowBeforeLaunch) {
  ProblemSpec spec;
  spec.dtype = DType::kBFloat16;
  spec.head_dim = 64;
  spec.kv_lens = {5};
  spec.query_lens = {5};
  const AttentionProblem p(spec);
  std::vector<std::byte> out(static_cast<std::size_t>(5 * 4 * 64 * 2));
  PagedAttentionArgs a = p.paged_args(TensorView::contiguous(out.data(), DType::kBFloat16, {5, 4, 64}));
  const PrefillPlan plan = plan_prefill(prefill_problem(a, 5));
  PagedAttentionArgs decode_args = a;
  decode_args.query_starts = {};
  decode_args.query.shape[0] = decode_args.out.shape[0] = 1;
  EXPECT_THROW(paged_prefill(decode_args, plan, nullptr), KernelError);
  PrefillPlan other = plan;
  other.kv_heads = 2;
  EXPECT_THROW(paged_prefill(a, other, nullptr), KernelError);
  PrefillProblem f16 = prefill_problem(a, 5);
  f16.dtype = DType::kFloat32;
  EXPECT_THROW(paged_prefill(a, plan_prefill(f16), nullptr), KernelError);  // plan for another dtype
  PagedAttentionArgs bad = a;
  bad.k_cache.shape[2] = bad.v_cache.shape[2] = 24;  // block size 24
  EXPECT_THROW(paged_prefill(bad, plan, nullptr), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels
