// Absorbed MLA on the host: fp8 E4M3 conversions, the argument checks of both backends, the
// CUDA kernel's plan, and the CPU reference against a direct evaluation of the definition
// (decode and causal query chunks, every query dtype, f16/bf16/fp8 caches, block sizes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels/fp8.h"
#include "kernels/kernel_error.h"
#include "kernels/latent_args.h"
#include "kernels/reference_latent_attention.h"
#include "latent_problem.h"

namespace pagesim::kernels {
namespace {

using testing::LatentSpec;
using testing::LatentTestProblem;

TEST(Fp8E4M3, EveryFiniteValueRoundTripsAndNaNIsTheAllOnesMantissa) {
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    const auto bits = static_cast<std::uint8_t>(b);
    const float f = fp8_e4m3_bits_to_float(bits);
    if ((b & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(f)) << b;
      continue;
    }
    ++finite;
    ASSERT_FALSE(std::isnan(f)) << b;
    // -0 and +0 both come back as themselves.
    EXPECT_EQ(float_to_fp8_e4m3_bits(f), bits) << b << " = " << f;
  }
  EXPECT_EQ(finite, 254);
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x01), 1.0f / 512.0f);  // smallest subnormal 2^-9
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x08), 1.0f / 64.0f);   // smallest normal 2^-6
  EXPECT_EQ(fp8_e4m3_bits_to_float(0x38), 1.0f);
}

TEST(Fp8E4M3, RoundsToNearestEvenAndSaturates) {
  // Against a search over the 127 non-negative finite values.
  std::vector<float> grid;
  for (int b = 0; b < 0x7f; ++b) grid.push_back(fp8_e4m3_bits_to_float(static_cast<std::uint8_t>(b)));
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mag(-11.0f, 9.0f);
  for (int i = 0; i < 20000; ++i) {
    const float x = std::ldexp(1.0f, 0) * std::exp2(mag(rng));
    if (x >= 448.0f) continue;
    std::size_t best = 0;
    for (std::size_t k = 1; k < grid.size(); ++k) {
      const double dk = std::fabs(grid[k] - static_cast<double>(x));
      const double db = std::fabs(grid[best] - static_cast<double>(x));
      if (dk < db || (dk == db && (k % 2 == 0))) best = k;  // ties: even mantissa (even code)
    }
    ASSERT_EQ(float_to_fp8_e4m3_bits(x), best) << x;
    ASSERT_EQ(float_to_fp8_e4m3_bits(-x), best | 0x80u) << -x;
  }
  // Exact ties: 1 + 1/16 lies between 1 (0x38) and 1.125 (0x39): even is 0x38; 1 + 3/16
  // between 0x39 and 0x3a: even is 0x3a.
  EXPECT_EQ(float_to_fp8_e4m3_bits(1.0625f), 0x38);
  EXPECT_EQ(float_to_fp8_e4m3_bits(1.1875f), 0x3a);
  EXPECT_EQ(float_to_fp8_e4m3_bits(1000.0f), 0x7e);
  EXPECT_EQ(float_to_fp8_e4m3_bits(-std::numeric_limits<float>::infinity()), 0xfe);
  EXPECT_EQ(float_to_fp8_e4m3_bits(std::numeric_limits<float>::quiet_NaN()), 0x7f);
}

struct ReferenceCase {
  std::string name;
  LatentSpec spec;
};

class LatentReference : public ::testing::TestWithParam<ReferenceCase> {};

TEST_P(LatentReference, MatchesTheDefinition) {
  const LatentTestProblem p(GetParam().spec);
  std::vector<float> out(p.out_elements(), std::numeric_limits<float>::quiet_NaN());
  const TensorView ov = TensorView::contiguous(out.data(), DType::kFloat32,
                                               {p.num_query_tokens(), p.spec().num_heads, p.spec().value_dim});
  reference_latent_attention(p.args(ov));
  const std::vector<double> want = p.direct();
  ASSERT_EQ(want.size(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    ASSERT_NEAR(out[i], want[i], 1e-6) << "element " << i;
  }
}

// latent_spec with the latent and value widths last (the CPU reference takes any).
LatentSpec spec(std::vector<std::int32_t> kv, std::vector<std::int32_t> q, std::int32_t heads, std::int32_t block,
                DType dtype, DType cache, float cache_scale = 1.0f, std::int32_t latent = 576, std::int32_t value = 512) {
  return testing::latent_spec(std::move(kv), std::move(q), heads, block, dtype, cache, cache_scale, 1, latent, value);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LatentReference,
    ::testing::Values(
        ReferenceCase{"decode_bf16_b64", spec({1, 63, 64, 65, 200, 0}, {}, 4, 64, DType::kBFloat16, DType::kBFloat16)},
        ReferenceCase{"decode_f16_b16", spec({17, 90}, {}, 3, 16, DType::kFloat16, DType::kFloat16)},
        ReferenceCase{"decode_fp8_scaled", spec({70, 5}, {}, 2, 64, DType::kBFloat16, DType::kFloat8E4M3, 1.0f / 16)},
        ReferenceCase{"chunk_bf16", spec({40, 130}, {40, 7}, 2, 64, DType::kBFloat16, DType::kBFloat16)},
        ReferenceCase{"chunk_f32_small_dims", spec({9, 33}, {3, 33}, 2, 8, DType::kFloat32, DType::kFloat32, 1.0f, 24, 16)},
        ReferenceCase{"chunk_fp8_f16", spec({50}, {4}, 5, 1, DType::kFloat16, DType::kFloat8E4M3, 0.25f)}),
    [](const ::testing::TestParamInfo<ReferenceCase>& i) { return i.param.name; });

TEST(LatentArgs, TheCudaBackendNamesWhatItCannotRun) {
  const LatentTestProblem p(spec({10}, {}, 2, 64, DType::kFloat32, DType::kFloat32, 1.0f, 24, 16));
  std::vector<float> out(p.out_elements());
  const TensorView ov = TensorView::contiguous(out.data(), DType::kFloat32, {1, 2, 16});
  EXPECT_NO_THROW(check_latent_attention_args(p.args(ov), "t", Backend::kReference));
  try {
    check_latent_attention_args(p.args(ov), "t", Backend::kCuda);
    FAIL() << "f32 accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("f16 or bf16"), std::string::npos) << e.what();
  }
  const LatentTestProblem q(spec({10}, {}, 2, 64, DType::kBFloat16, DType::kBFloat16, 1.0f, 24, 16));
  std::vector<std::uint16_t> out16(q.out_elements());
  const TensorView ov16 = TensorView::contiguous(out16.data(), DType::kBFloat16, {1, 2, 16});
  try {
    check_latent_attention_args(q.args(ov16), "t", Backend::kCuda);
    FAIL() << "latent_dim 24 accepted";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 576 and 512"), std::string::npos) << e.what();
  }
}

TEST(LatentArgs, RefusesAScaleOnANonFp8CacheAndAValueWiderThanTheLatent) {
  const LatentTestProblem p(spec({10}, {}, 2, 64, DType::kFloat32, DType::kFloat32, 1.0f, 24, 16));
  std::vector<float> out(64);
  LatentAttentionArgs a = p.args(TensorView::contiguous(out.data(), DType::kFloat32, {1, 2, 16}));
  a.cache_scale = 0.5f;
  EXPECT_THROW(check_latent_attention_args(a, "t", Backend::kReference), KernelError);
  a = p.args(TensorView::contiguous(out.data(), DType::kFloat32, {1, 2, 32}));
  EXPECT_THROW(check_latent_attention_args(a, "t", Backend::kReference), KernelError);
}

TEST(LatentPlan, SplitsFewLongSequencesAndLeavesFullGridsWhole) {
  // 64 sequences x 128 heads: 128 CTAs on 132 SMs, one partition.
  LatentPlan plan = plan_latent_attention({64, 128, 1, 4096}, 132);
  EXPECT_EQ(plan.row_chunks, 2);
  EXPECT_EQ(plan.partitions, 1);
  EXPECT_EQ(plan.partition_tokens, 0);
  EXPECT_EQ(plan.workspace_bytes, 0u);
  EXPECT_EQ(plan.grid, (LaunchGrid{2, 64, 1}));
  // One 64k sequence: 2 CTAs, split until about 132 (66 partitions of 993 tokens, rounded up
  // to whole 32-key tiles: 64 of 1024).
  plan = plan_latent_attention({1, 128, 1, 65536}, 132);
  EXPECT_EQ(plan.partitions, 64);
  EXPECT_EQ(plan.partition_tokens, 1024);
  EXPECT_EQ(plan.partition_tokens % latent_tile::kKeys, 0);
  EXPECT_GE(static_cast<std::int64_t>(plan.partition_tokens) * plan.partitions, 65536);
  EXPECT_GT(plan.workspace_bytes, 0u);
  // Short sequences are never cut below kMinPartitionTokens.
  plan = plan_latent_attention({1, 16, 1, 300}, 132);
  EXPECT_EQ(plan.partitions, 1);
  // Forced (tests): capped by the tiles (100 keys: 3), then whole tiles per partition (64).
  plan = plan_latent_attention({2, 16, 3, 100}, 132, 7);
  EXPECT_EQ(plan.partitions, 2);
  EXPECT_EQ(plan.partition_tokens, 64);
  EXPECT_EQ(plan.row_chunks, 1);
  EXPECT_THROW(plan_latent_attention({-1, 16, 1, 10}, 132), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels
