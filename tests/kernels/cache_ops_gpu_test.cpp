// CUDA reshape_and_cache, copy_blocks and swap_blocks against the CPU reference and the
// problem builder's cache, byte for byte. Skips where no GPU is present.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "kernels/cache_ops.h"
#include "kernels/kernel_error.h"
#include "kernels/reference_cache_ops.h"

namespace pagesim::kernels {
namespace {

using testing::AttentionProblem;
using testing::DeviceBuffer;
using testing::ProblemSpec;

ProblemSpec spec(DType dtype, int d, int bs, KvLayout layout) {
  ProblemSpec s;
  s.dtype = dtype;
  s.head_dim = d;
  s.block_size = bs;
  s.layout = layout;
  s.num_q_heads = 8;
  s.num_kv_heads = 4;
  s.kv_lens = {1, bs - 1, bs + 1, 3 * bs, 77};
  return s;
}

using Param = std::tuple<DType, int, int, KvLayout>;
class kernels_cache_ops_gpu : public ::testing::TestWithParam<Param> {};

TEST_P(kernels_cache_ops_gpu, ReshapeAndCacheWritesEverySlot) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, d, bs, layout] = GetParam();
  const AttentionProblem p(spec(dtype, d, bs, layout));
  // Start from an all-NaN cache (like the problem's unowned slots) and write every token,
  // plus one padding token (-1) and one out-of-range slot that must both be skipped.
  std::vector<std::byte> nan_cache(p.k_cache_bytes().size());
  testing::fill_nan(nan_cache.data(), dtype, p.k_cache_view().span_elements());
  DeviceBuffer k = DeviceBuffer::from(nan_cache), v = DeviceBuffer::from(nan_cache);
  std::vector<std::int64_t> slots = p.slot_mapping();
  const std::size_t n = slots.size();
  const std::size_t tok_bytes = 4 * static_cast<std::size_t>(d) * dtype_size(dtype);
  std::vector<std::byte> keys((n + 2) * tok_bytes), values((n + 2) * tok_bytes);
  std::memcpy(keys.data(), p.keys_view().data, n * tok_bytes);
  std::memcpy(values.data(), p.values_view().data, n * tok_bytes);
  slots.push_back(-1);
  slots.push_back(static_cast<std::int64_t>(p.num_blocks()) * bs + 5);
  DeviceBuffer dkeys = DeviceBuffer::from(keys), dvalues = DeviceBuffer::from(values), dslots = DeviceBuffer::from(slots);
  const auto tokens = static_cast<std::int64_t>(n + 2);
  TensorView kc = p.k_cache_view(), vc = p.v_cache_view();
  kc.data = k.get();
  vc.data = v.get();
  reshape_and_cache({TensorView::contiguous(dkeys.get(), dtype, {tokens, 4, d}),
                     TensorView::contiguous(dvalues.get(), dtype, {tokens, 4, d}), kc, vc,
                     TensorView::contiguous(dslots.get(), DType::kInt64, {tokens})},
                    nullptr);
  std::vector<std::byte> got(p.k_cache_bytes().size());
  testing::cuda_ok(cudaDeviceSynchronize(), "reshape_and_cache");
  k.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), p.k_cache_bytes().data(), got.size()), 0);
  v.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), p.v_cache_bytes().data(), got.size()), 0);
}

TEST_P(kernels_cache_ops_gpu, CopyBlocksMatchesReference) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, d, bs, layout] = GetParam();
  const AttentionProblem p(spec(dtype, d, bs, layout));
  // Copy the first half of the blocks onto the second half (disjoint sources/destinations).
  const std::int32_t half = p.num_blocks() / 2;
  std::vector<std::int32_t> pairs;
  for (std::int32_t b = 0; b < half; ++b) {
    pairs.push_back(b);
    pairs.push_back(p.num_blocks() - 1 - b);
  }
  const auto np = static_cast<std::int64_t>(half);
  std::vector<std::byte> hk = p.k_cache_bytes(), hv = p.v_cache_bytes();
  TensorView kc = p.k_cache_view(), vc = p.v_cache_view();
  kc.data = hk.data();
  vc.data = hv.data();
  reference_copy_blocks({kc, vc, TensorView::contiguous(pairs.data(), DType::kInt32, {np, 2})});
  DeviceBuffer k = DeviceBuffer::from(p.k_cache_bytes()), v = DeviceBuffer::from(p.v_cache_bytes());
  DeviceBuffer dpairs = DeviceBuffer::from(pairs);
  kc.data = k.get();
  vc.data = v.get();
  copy_blocks({kc, vc, TensorView::contiguous(dpairs.get(), DType::kInt32, {np, 2})}, nullptr);
  std::vector<std::byte> got(hk.size());
  testing::cuda_ok(cudaDeviceSynchronize(), "copy_blocks");
  k.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), hk.data(), got.size()), 0);
  v.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), hv.data(), got.size()), 0);
}

TEST_P(kernels_cache_ops_gpu, SwapOutAndInRoundTrips) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, d, bs, layout] = GetParam();
  const AttentionProblem p(spec(dtype, d, bs, layout));
  const std::int32_t nb = p.num_blocks();
  const std::size_t bytes = p.k_cache_bytes().size();
  void* host_k = nullptr;
  void* host_v = nullptr;
  testing::cuda_ok(cudaMallocHost(&host_k, bytes), "cudaMallocHost");
  testing::cuda_ok(cudaMallocHost(&host_v, bytes), "cudaMallocHost");
  std::memset(host_k, 0, bytes);
  std::memset(host_v, 0, bytes);
  DeviceBuffer k = DeviceBuffer::from(p.k_cache_bytes()), v = DeviceBuffer::from(p.v_cache_bytes());
  auto view = [&](void* data) {
    return kv_cache_view(data, dtype, layout, nb, 4, bs, d);
  };
  // Out: device block b -> host block (b + 3) % nb; a run of consecutive pairs plus singles.
  std::vector<std::int32_t> out_pairs, in_pairs;
  for (std::int32_t b = 0; b < nb; ++b) {
    out_pairs.push_back(b);
    out_pairs.push_back((b + 3) % nb);
    in_pairs.push_back((b + 3) % nb);
    in_pairs.push_back(b);
  }
  const auto np = static_cast<std::int64_t>(nb);
  swap_blocks({view(k.get()), view(v.get()), view(host_k), view(host_v),
               TensorView::contiguous(out_pairs.data(), DType::kInt32, {np, 2})},
              nullptr);
  testing::cuda_ok(cudaDeviceSynchronize(), "swap out");
  // Reference on the host: the same moves between two host caches.
  std::vector<std::byte> ref_k(bytes), ref_v(bytes);
  reference_swap_blocks({p.k_cache_view(), p.v_cache_view(), view(ref_k.data()), view(ref_v.data()),
                         TensorView::contiguous(out_pairs.data(), DType::kInt32, {np, 2})});
  EXPECT_EQ(std::memcmp(host_k, ref_k.data(), bytes), 0);
  EXPECT_EQ(std::memcmp(host_v, ref_v.data(), bytes), 0);
  // In: back to a cleared device cache.
  k.fill_bytes(0);
  v.fill_bytes(0);
  swap_blocks({view(host_k), view(host_v), view(k.get()), view(v.get()),
               TensorView::contiguous(in_pairs.data(), DType::kInt32, {np, 2})},
              nullptr);
  testing::cuda_ok(cudaDeviceSynchronize(), "swap in");
  std::vector<std::byte> got(bytes);
  k.download(got.data(), bytes);
  EXPECT_EQ(std::memcmp(got.data(), p.k_cache_bytes().data(), bytes), 0);
  v.download(got.data(), bytes);
  EXPECT_EQ(std::memcmp(got.data(), p.v_cache_bytes().data(), bytes), 0);
  // Pageable host memory is refused.
  std::vector<std::byte> pageable(bytes);
  EXPECT_THROW(swap_blocks({view(k.get()), view(v.get()), view(pageable.data()), view(pageable.data()),
                            TensorView::contiguous(out_pairs.data(), DType::kInt32, {np, 2})},
                           nullptr),
               KernelError);
  cudaFreeHost(host_k);
  cudaFreeHost(host_v);
}

std::string grid_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [t, d, b, l] = info.param;
  return std::string(dtype_name(t)) + "_d" + std::to_string(d) + "_b" + std::to_string(b) +
         (l == KvLayout::kHND ? "_hnd" : "_nhd");
}

INSTANTIATE_TEST_SUITE_P(Grid, kernels_cache_ops_gpu,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(64, 80, 256), ::testing::Values(8, 16, 32),
                                            ::testing::Values(KvLayout::kHND, KvLayout::kNHD)),
                         grid_name);

TEST(kernels_cache_ops_gpu_validation, BadArgumentsThrowBeforeLaunch) {
  std::vector<std::byte> cache(64 * 1024);
  const TensorView kc = kv_cache_view(cache.data(), DType::kFloat16, KvLayout::kHND, 4, 2, 8, 64);
  std::vector<std::byte> keys(3 * 2 * 64 * 2);
  std::vector<std::int64_t> slots(3, 0);
  ReshapeAndCacheArgs a{TensorView::contiguous(keys.data(), DType::kFloat16, {3, 2, 64}),
                        TensorView::contiguous(keys.data(), DType::kFloat16, {3, 2, 64}), kc, kc,
                        TensorView::contiguous(slots.data(), DType::kInt64, {3})};
  ReshapeAndCacheArgs bad = a;
  bad.key.dtype = bad.value.dtype = DType::kBFloat16;
  EXPECT_THROW(reshape_and_cache(bad, nullptr), KernelError);
  bad = a;
  bad.slot_mapping.dtype = DType::kInt32;
  EXPECT_THROW(reshape_and_cache(bad, nullptr), KernelError);
  std::vector<std::int32_t> pairs{0, 9};
  EXPECT_THROW(swap_blocks({kc, kc, kc, kc, TensorView::contiguous(pairs.data(), DType::kInt32, {1, 2})}, nullptr),
               KernelError);  // block 9 out of range, checked on the host
}

}  // namespace
}  // namespace pagesim::kernels
