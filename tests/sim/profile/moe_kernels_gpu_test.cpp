// The fused-MoE timing's small kernels (sim/profile/moe_kernels.h) against plain host
// references, fp16 and bf16, at awkward sizes (1 token, top-k = experts, widths that are not
// a multiple of the 16-byte vector, 0 rows). Needs a CUDA device: skips without one
// (PAGESIM_REQUIRE_GPU=1 makes that a failure).
#include "sim/profile/moe_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/half.h"

namespace pagesim::sim::detail {
namespace {

namespace pk = pagesim::kernels;
using pk::DeviceBuffer;

std::uint16_t bits(float f, bool bf16) { return bf16 ? pk::float_to_bf16_bits(f) : pk::float_to_half_bits(f); }
float value(std::uint16_t b, bool bf16) { return bf16 ? pk::bf16_bits_to_float(b) : pk::half_bits_to_float(b); }

// Values exactly representable in both formats' rounding of the inputs: random floats
// rounded through the element type, so host and device start from the same numbers.
std::vector<std::uint16_t> random_elems(std::size_t n, std::uint32_t seed, bool bf16) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.f, 2.f);
  std::vector<std::uint16_t> v(n);
  for (std::uint16_t& x : v) x = bits(d(rng), bf16);
  return v;
}

template <class T>
std::vector<T> download(const DeviceBuffer& b, std::size_t n) {
  std::vector<T> v(n);
  if (n > 0) b.download(v.data(), n * sizeof(T));
  return v;
}

class MoeKernels : public ::testing::TestWithParam<bool> {};  // bf16?

TEST_P(MoeKernels, TopkSoftmaxPicksTheLargestAndRenormalises) {
  PAGESIM_REQUIRE_GPU();
  const bool bf16 = GetParam();
  struct Case {
    int tokens, experts, top_k;
  };
  for (const Case c : {Case{1, 8, 2}, Case{5, 8, 8}, Case{33, 16, 1}, Case{7, 128, 8}, Case{3, 40, 3}}) {
    // Distinct logits per token so the top-k is unambiguous.
    std::vector<std::uint16_t> logits(static_cast<std::size_t>(c.tokens) * c.experts);
    std::mt19937 rng(static_cast<std::uint32_t>(c.experts * 31 + c.top_k));
    for (int t = 0; t < c.tokens; ++t) {
      std::vector<int> order(static_cast<std::size_t>(c.experts));
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      for (int e = 0; e < c.experts; ++e)
        logits[static_cast<std::size_t>(t) * c.experts + e] = bits(0.0625f * static_cast<float>(order[e]), bf16);
    }
    const DeviceBuffer d_logits = pk::testing::device_copy(logits);
    DeviceBuffer ids(static_cast<std::size_t>(c.tokens) * c.top_k * 4), w(static_cast<std::size_t>(c.tokens) * c.top_k * 4);
    moe_topk_softmax(d_logits.get(), c.tokens, c.experts, c.top_k, reinterpret_cast<std::int32_t*>(ids.get()),
                     reinterpret_cast<float*>(w.get()), bf16, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got_ids = download<std::int32_t>(ids, static_cast<std::size_t>(c.tokens) * c.top_k);
    const auto got_w = download<float>(w, got_ids.size());
    for (int t = 0; t < c.tokens; ++t) {
      std::vector<float> p(static_cast<std::size_t>(c.experts));
      for (int e = 0; e < c.experts; ++e) p[e] = value(logits[static_cast<std::size_t>(t) * c.experts + e], bf16);
      std::vector<int> order(p.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p[a] > p[b]; });
      double chosen = 0;
      for (int k = 0; k < c.top_k; ++k) chosen += std::exp(static_cast<double>(p[order[k]]));
      for (int k = 0; k < c.top_k; ++k) {
        const std::size_t a = static_cast<std::size_t>(t) * c.top_k + k;
        EXPECT_EQ(got_ids[a], order[k]) << "token " << t << " k " << k;
        EXPECT_NEAR(got_w[a], std::exp(static_cast<double>(p[order[k]])) / chosen, 1e-5);
      }
    }
  }
}

TEST_P(MoeKernels, GatherSiluAndCombineMatchTheReference) {
  PAGESIM_REQUIRE_GPU();
  const bool bf16 = GetParam();
  const double tol = bf16 ? 2e-2 : 2e-3;
  for (const int width : {8, 13, 64}) {  // 13: the 2-byte path; 8, 64: 16-byte vectors
    const int tokens = 5, top_k = 2;
    const int rows = tokens * top_k;
    const auto in = random_elems(static_cast<std::size_t>(tokens) * width, 1, bf16);
    std::vector<std::int32_t> src(static_cast<std::size_t>(rows)), slot(static_cast<std::size_t>(rows));
    for (int a = 0; a < rows; ++a) src[a] = (a * 3) % tokens;
    for (int a = 0; a < rows; ++a) slot[a] = (a * 7) % rows;  // a permutation (7 coprime with 10)
    const DeviceBuffer d_in = pk::testing::device_copy(in), d_src = pk::testing::device_copy(src),
                       d_slot = pk::testing::device_copy(slot);
    DeviceBuffer gathered(static_cast<std::size_t>(rows) * width * 2);
    moe_gather_rows(d_in.get(), reinterpret_cast<const std::int32_t*>(d_src.get()), rows, width, gathered.get(),
                    nullptr);
    moe_gather_rows(d_in.get(), nullptr, 0, width, nullptr, nullptr);  // 0 rows: nothing launched
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto g = download<std::uint16_t>(gathered, static_cast<std::size_t>(rows) * width);
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < width; ++c)
        ASSERT_EQ(g[static_cast<std::size_t>(r) * width + c], in[static_cast<std::size_t>(src[r]) * width + c]);

    for (const bool gated : {true, false}) {
      const int in_width = gated ? 2 * width : width;
      const auto act_in = random_elems(static_cast<std::size_t>(rows) * in_width, 2, bf16);
      const DeviceBuffer d_act_in = pk::testing::device_copy(act_in);
      DeviceBuffer act(static_cast<std::size_t>(rows) * width * 2);
      moe_silu_and_mul(d_act_in.get(), rows, width, gated, act.get(), bf16, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got = download<std::uint16_t>(act, static_cast<std::size_t>(rows) * width);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < width; ++c) {
          const double x = value(act_in[static_cast<std::size_t>(r) * in_width + c], bf16);
          double want = x / (1 + std::exp(-x));
          if (gated) want *= value(act_in[static_cast<std::size_t>(r) * in_width + width + c], bf16);
          EXPECT_NEAR(value(got[static_cast<std::size_t>(r) * width + c], bf16), want, tol * (1 + std::abs(want)));
        }
      }
    }

    const auto add = random_elems(static_cast<std::size_t>(tokens) * width, 3, bf16);
    std::vector<float> weights(static_cast<std::size_t>(rows));
    for (int a = 0; a < rows; ++a) weights[a] = 0.25f + 0.05f * static_cast<float>(a);
    const DeviceBuffer d_add = pk::testing::device_copy(add), d_w = pk::testing::device_copy(weights);
    for (const bool with_add : {false, true}) {
      DeviceBuffer out(static_cast<std::size_t>(tokens) * width * 2);
      moe_combine(gathered.get(), reinterpret_cast<const std::int32_t*>(d_slot.get()),
                  reinterpret_cast<const float*>(d_w.get()), tokens, top_k, width, with_add ? d_add.get() : nullptr,
                  out.get(), bf16, nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got = download<std::uint16_t>(out, static_cast<std::size_t>(tokens) * width);
      for (int t = 0; t < tokens; ++t) {
        for (int c = 0; c < width; ++c) {
          double want = with_add ? value(add[static_cast<std::size_t>(t) * width + c], bf16) : 0.0;
          for (int j = 0; j < top_k; ++j) {
            const int a = t * top_k + j;
            want += weights[a] * value(g[static_cast<std::size_t>(slot[a]) * width + c], bf16);
          }
          EXPECT_NEAR(value(got[static_cast<std::size_t>(t) * width + c], bf16), want, tol * (1 + std::abs(want)));
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, MoeKernels, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "bf16" : "f16"; });

}  // namespace
}  // namespace pagesim::sim::detail
