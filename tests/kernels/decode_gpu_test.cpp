// CUDA paged decode (v1, v2 and the planner's choice) against the dense CPU reference over
// dtypes x head sizes x block sizes x GQA ratios, each batch holding awkward lengths (0, 1,
// block - 1, block, block + 1, ~1k), random block tables with shared blocks and NaN in every
// unowned slot; long contexts (8k, 32k) separately; 64-bit offsets with a > 2^31-element
// cache. Skips (with a message) where no GPU is present, except the validation tests, which
// never reach the device.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/kernel_error.h"
#include "kernels/paged_attention.h"

namespace pagesim::kernels {
namespace {

using testing::AttentionProblem;
using testing::DeviceProblem;
using testing::ProblemSpec;

enum class Mode { kV1, kV2, kAuto };

const char* mode_name(Mode m) { return m == Mode::kV1 ? "v1" : m == Mode::kV2 ? "v2" : "auto"; }

// Runs decode on the device in `mode` and checks it against the dense reference.
// With `free_outside_mask`, the device table has every block before a sequence's attended
// range freed (-1), as the hybrid and Jenga pools leave a sliding-window layer's table.
// `kernel` forces the CUDA-core or tensor-core kernel (v1/v2 modes only).
void check_decode(const AttentionProblem& p, Mode mode, std::int32_t partition_size, const std::string& label,
                  bool free_outside_mask = false, std::optional<DecodeKernel> kernel = std::nullopt) {
  DeviceProblem dev(p);
  if (free_outside_mask) dev.upload_block_table(testing::freed_block_table(p));
  const PagedAttentionArgs args = dev.args();
  const DecodeProblem problem = decode_problem(args, p.batch().kv_lens);
  DecodePlan plan;
  if (mode == Mode::kAuto) {
    plan = plan_decode(problem, decode_device_caps(problem));
  } else {
    plan = make_decode_plan(problem, mode == Mode::kV1 ? DecodeAlgo::kV1 : DecodeAlgo::kV2, partition_size, kernel);
  }
  DeviceBuffer workspace(plan.workspace_bytes);
  paged_decode(args, plan, workspace.get(), workspace.bytes(), nullptr);
  std::vector<std::byte> out_storage;
  const TensorView out = dev.download_output(out_storage);
  std::vector<float> ref = testing::dense_reference(p);
  testing::expect_matches_reference(out, testing::reference_view(p, ref), p.spec().dtype,
                                    label + " " + mode_name(mode) + " (" + decode_kernel_name(plan.kernel) + " " +
                                        decode_algo_name(plan.algo) +
                                        ", partition " + std::to_string(plan.partition_size) + ")");
}

class DecodeGpu : public ::testing::TestWithParam<testing::KernelGridParam> {};

TEST_P(DecodeGpu, MatchesReference) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec = testing::grid_spec(GetParam());
  const int bs = spec.block_size;
  spec.kv_lens = {0, 1, bs - 1, bs, bs + 1, 1000, 1031};  // odd batch size
  spec.shared_prefix_blocks = 3;
  const AttentionProblem p(spec);
  for (Mode m : {Mode::kV1, Mode::kV2, Mode::kAuto}) check_decode(p, m, 256, "grid");
}

INSTANTIATE_TEST_SUITE_P(Grid, DecodeGpu,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(64, 80, 96, 112, 128, 256),
                                            ::testing::Values(8, 16, 32), ::testing::Values(1, 4, 8)),
                         testing::kernel_grid_name);

// Sliding-window and chunked-local masks (gpt-oss, Mistral; Llama 4) with the blocks before
// each sequence's attended range freed: v1 and v2 (partitions wholly before the window
// included) match the dense reference and never read a freed entry.
using testing::MaskParam;
class DecodeGpuMask : public ::testing::TestWithParam<MaskParam> {};

TEST_P(DecodeGpuMask, MatchesReferenceWithFreedBlocks) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec = testing::mask_spec(GetParam());
  const int window = std::get<2>(GetParam());
  spec.kv_lens = {0, 1, window, window + 1, 2 * window + 3, 1000, 1031};
  const AttentionProblem p(spec);
  for (Mode m : {Mode::kV1, Mode::kV2}) check_decode(p, m, 256, "mask", /*free_outside_mask=*/true);
}

INSTANTIATE_TEST_SUITE_P(Masks, DecodeGpuMask,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(MaskKind::kSlidingWindow, MaskKind::kChunkedLocal),
                                            ::testing::Values(1, 7, 128, 600)),
                         testing::mask_param_name);

// ALiBi, NHD layout, MQA and many heads per group (several CTAs per KV head).
class DecodeGpuOptions : public ::testing::TestWithParam<DType> {};

TEST_P(DecodeGpuOptions, AlibiNhdAndMqa) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec;
  spec.dtype = GetParam();
  spec.head_dim = 128;
  spec.block_size = 16;
  spec.kv_lens = {1, 15, 17, 333, 2048};
  spec.alibi = true;
  spec.num_q_heads = 12;
  spec.num_kv_heads = 4;
  check_decode(AttentionProblem(spec), Mode::kV1, 0, "alibi");
  check_decode(AttentionProblem(spec), Mode::kV2, 512, "alibi");
  spec.alibi = false;
  spec.layout = KvLayout::kNHD;
  check_decode(AttentionProblem(spec), Mode::kV1, 0, "nhd");
  check_decode(AttentionProblem(spec), Mode::kV2, 256, "nhd");
  spec.layout = KvLayout::kHND;
  spec.num_q_heads = 32;  // MQA: 8 CTAs per KV head
  spec.num_kv_heads = 1;
  spec.alibi = true;
  check_decode(AttentionProblem(spec), Mode::kV1, 0, "mqa");
  check_decode(AttentionProblem(spec), Mode::kV2, 1024, "mqa");
}

// Both kernels (f32: CUDA cores only) on every group shape: CUDA cores with 1, 2 and 4 heads per CTA (groups 1, 2,
// 3, 4, 8), tensor cores from MHA (one real row of 16) to groups past one tile (20: two CTAs
// per KV head, the second with 4 rows); windows and ALiBi through both.
TEST_P(DecodeGpuOptions, BothKernelsOnEveryGroup) {
  PAGESIM_REQUIRE_GPU();
  std::vector<DecodeKernel> kernels{DecodeKernel::kCudaCores};
  if (GetParam() != DType::kFloat32) kernels.push_back(DecodeKernel::kTensorCores);  // 16-bit only
  for (int d : {80, 128}) {
    for (int group : {1, 2, 3, 4, 8, 20}) {
      ProblemSpec spec;
      spec.dtype = GetParam();
      spec.head_dim = d;
      spec.block_size = 16;
      spec.num_kv_heads = 2;
      spec.num_q_heads = 2 * group;
      spec.kv_lens = {0, 1, 15, 16, 17, 300, 1031};
      spec.alibi = group == 3;
      const AttentionProblem p(spec);
      for (DecodeKernel k : kernels) {
        const std::string label = "group " + std::to_string(group) + " d " + std::to_string(d);
        check_decode(p, Mode::kV1, 0, label, false, k);
        check_decode(p, Mode::kV2, 256, label, false, k);
      }
    }
  }
}

// Block sizes beyond the main grid: 1 (a contiguous allocator's slots) up to 1024.
TEST_P(DecodeGpuOptions, ExtremeBlockSizes) {
  PAGESIM_REQUIRE_GPU();
  for (int bs : {1, 2, 64, 1024}) {
    ProblemSpec spec;
    spec.dtype = GetParam();
    spec.head_dim = 64;
    spec.block_size = bs;
    spec.num_q_heads = 8;
    spec.num_kv_heads = 2;
    spec.kv_lens = {1, 3, bs + 1, 700};
    spec.shared_prefix_blocks = 1;
    const AttentionProblem p(spec);
    check_decode(p, Mode::kV1, 0, "block " + std::to_string(bs));
    check_decode(p, Mode::kV2, 256, "block " + std::to_string(bs));
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DecodeGpuOptions,
                         ::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                         testing::dtype_param_name);

// Long contexts: v1 walks 32k tokens in one CTA; v2 splits and merges.
using LongParam = std::tuple<DType, int, int>;  // dtype, head_dim, context
class DecodeGpuLong : public ::testing::TestWithParam<LongParam> {};

TEST_P(DecodeGpuLong, MatchesReference) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, d, ctx] = GetParam();
  ProblemSpec spec;
  spec.dtype = dtype;
  spec.head_dim = d;
  spec.block_size = 16;
  spec.num_q_heads = 8;
  spec.num_kv_heads = 2;
  spec.kv_lens = {ctx, ctx - 17, 3};
  spec.shared_prefix_blocks = 64;
  spec.alibi = d == 128;
  const AttentionProblem p(spec);
  for (Mode m : {Mode::kV1, Mode::kV2, Mode::kAuto}) check_decode(p, m, 512, "long");
}

std::string long_name(const ::testing::TestParamInfo<LongParam>& info) {
  const auto [t, d, c] = info.param;
  return std::string(dtype_name(t)) + "_d" + std::to_string(d) + "_ctx" + std::to_string(c);
}

INSTANTIATE_TEST_SUITE_P(Contexts, DecodeGpuLong,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(64, 128, 256), ::testing::Values(8192, 32768)),
                         long_name);

// A cache of more than 2^31 elements per tensor, with the batch's blocks at the top of it:
// every offset computed in 32 bits would be wrong. ~4.3 GB per cache (f16).
TEST(DecodeGpuLarge, OffsetsBeyond2Pow31Elements) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec;
  spec.dtype = DType::kFloat16;
  spec.head_dim = 128;
  spec.block_size = 16;
  spec.num_q_heads = 8;
  spec.num_kv_heads = 2;
  spec.kv_lens = {100, 37};
  spec.spare_blocks = 0;
  const AttentionProblem p(spec);
  const std::int32_t big_blocks = 600000;  // 600000 * 2 * 16 * 128 > 2^31 elements
  testing::LargeCaches big = testing::large_caches(p, big_blocks);
  ASSERT_GT(static_cast<std::int64_t>(big.base) * 2 * 16 * 128, (1LL << 31));
  DeviceBuffer dtable = testing::device_copy(testing::shifted_block_table(p, big.base));
  DeviceProblem dev(p);
  PagedAttentionArgs args = dev.args();
  args.k_cache = big.k_view;
  args.v_cache = big.v_view;
  args.block_table.data = dtable.get();
  for (DecodeAlgo algo : {DecodeAlgo::kV1, DecodeAlgo::kV2}) {
    dev.poison_output();
    const DecodePlan plan = make_decode_plan(decode_problem(args, p.batch().kv_lens), algo, 256);
    DeviceBuffer ws(plan.workspace_bytes);
    paged_decode(args, plan, ws.get(), ws.bytes(), nullptr);
    std::vector<std::byte> storage;
    const TensorView out = dev.download_output(storage);
    std::vector<float> ref = testing::dense_reference(p);
    testing::expect_matches_reference(out, testing::reference_view(p, ref), DType::kFloat16,
                                      std::string("large cache ") + decode_algo_name(algo));
  }
}

// More sequences than a grid's y or z may hold (65535): the v2 merge kernel puts sequences on
// grid.x (decode_merge_grid), so the split-K path works for a batch of 70000 short decodes.
TEST(DecodeGpuLarge, MoreThan65535SequencesSplitK) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec spec;
  spec.dtype = DType::kFloat16;
  spec.head_dim = 64;
  spec.block_size = 16;
  spec.num_q_heads = 2;
  spec.num_kv_heads = 1;
  spec.spare_blocks = 0;
  for (int s = 0; s < 70000; ++s) spec.kv_lens.push_back(1 + s % 40);
  const AttentionProblem p(spec);
  DeviceProblem dev(p);
  const PagedAttentionArgs args = dev.args();
  const DecodePlan plan = make_decode_plan(decode_problem(args, p.batch().kv_lens), DecodeAlgo::kV2, 256);
  ASSERT_GT(decode_merge_grid(70000, 2).x, 65535);
  DeviceBuffer ws(plan.workspace_bytes);
  paged_decode(args, plan, ws.get(), ws.bytes(), nullptr);
  std::vector<std::byte> storage;
  const TensorView out = dev.download_output(storage);
  std::vector<float> ref = testing::dense_reference(p);
  testing::expect_matches_reference(out, testing::reference_view(p, ref), DType::kFloat16, "70000 sequences, v2");
}

// Validation happens on the host before any CUDA call: these run without a GPU.
TEST(DecodeGpuValidation, BadArgumentsThrowBeforeLaunch) {
  ProblemSpec spec;
  spec.dtype = DType::kFloat16;
  spec.head_dim = 64;
  spec.kv_lens = {5};
  const AttentionProblem p(spec);
  std::vector<std::byte> out(static_cast<std::size_t>(p.num_query_tokens() * 4 * 64 * 2));
  PagedAttentionArgs a = p.paged_args(TensorView::contiguous(out.data(), DType::kFloat16, {1, 4, 64}));
  const DecodePlan plan = make_decode_plan(decode_problem(a, p.batch().kv_lens), DecodeAlgo::kV1, 0);
  PagedAttentionArgs bad = a;
  bad.query.shape[2] = bad.out.shape[2] = bad.k_cache.shape[3] = bad.v_cache.shape[3] = 72;
  EXPECT_THROW(paged_decode(bad, plan, nullptr, 0, nullptr), KernelError);
  bad = a;
  bad.out.dtype = DType::kBFloat16;
  EXPECT_THROW(paged_decode(bad, plan, nullptr, 0, nullptr), KernelError);
  DecodePlan v2 = make_decode_plan(decode_problem(a, p.batch().kv_lens), DecodeAlgo::kV2, 256);
  try {
    paged_decode(a, v2, nullptr, 0, nullptr);  // no workspace
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("v2 needs a workspace"), std::string::npos) << e.what();
  }
  DecodePlan other = plan;
  other.head_groups = 3;
  EXPECT_THROW(paged_decode(a, other, nullptr, 0, nullptr), KernelError);
  a.query_starts = p.batch().query_starts_view();
  EXPECT_THROW(paged_decode(a, plan, nullptr, 0, nullptr), KernelError);  // prefill args
  EXPECT_THROW(decode_device_caps(DType::kInt32, 64, 1), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels
