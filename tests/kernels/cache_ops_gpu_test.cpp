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
class CacheOpsGpu : public ::testing::TestWithParam<Param> {};

TEST_P(CacheOpsGpu, ReshapeAndCacheWritesEverySlot) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, d, bs, layout] = GetParam();
  const AttentionProblem p(spec(dtype, d, bs, layout));
  // Start from an all-NaN cache (like the problem's unowned slots) and write every token,
  // plus one padding token (-1) and one out-of-range slot that must both be skipped.
  std::vector<std::byte> nan_cache(p.k_cache_bytes().size());
  testing::fill_nan(nan_cache.data(), dtype, p.k_cache_view().span_elements());
  DeviceBuffer k = testing::device_copy(nan_cache), v = testing::device_copy(nan_cache);
  std::vector<std::int64_t> slots = p.slot_mapping();
  const std::size_t n = slots.size();
  const std::size_t tok_bytes = 4 * static_cast<std::size_t>(d) * dtype_size(dtype);
  std::vector<std::byte> keys((n + 2) * tok_bytes), values((n + 2) * tok_bytes);
  std::memcpy(keys.data(), p.keys_view().data, n * tok_bytes);
  std::memcpy(values.data(), p.values_view().data, n * tok_bytes);
  slots.push_back(-1);
  slots.push_back(static_cast<std::int64_t>(p.num_blocks()) * bs + 5);
  DeviceBuffer dkeys = testing::device_copy(keys), dvalues = testing::device_copy(values), dslots = testing::device_copy(slots);
  const auto tokens = static_cast<std::int64_t>(n + 2);
  TensorView kc = p.k_cache_view(), vc = p.v_cache_view();
  kc.data = k.get();
  vc.data = v.get();
  reshape_and_cache({TensorView::contiguous(dkeys.get(), dtype, {tokens, 4, d}),
                     TensorView::contiguous(dvalues.get(), dtype, {tokens, 4, d}), kc, vc,
                     TensorView::contiguous(dslots.get(), DType::kInt64, {tokens})},
                    nullptr);
  std::vector<std::byte> got(p.k_cache_bytes().size());
  check_cuda(cudaDeviceSynchronize(), "test", "reshape_and_cache");
  k.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), p.k_cache_bytes().data(), got.size()), 0);
  v.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), p.v_cache_bytes().data(), got.size()), 0);
}

TEST_P(CacheOpsGpu, CopyBlocksMatchesReference) {
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
  DeviceBuffer k = testing::device_copy(p.k_cache_bytes()), v = testing::device_copy(p.v_cache_bytes());
  DeviceBuffer dpairs = testing::device_copy(pairs);
  kc.data = k.get();
  vc.data = v.get();
  copy_blocks({kc, vc, TensorView::contiguous(dpairs.get(), DType::kInt32, {np, 2})}, nullptr);
  std::vector<std::byte> got(hk.size());
  check_cuda(cudaDeviceSynchronize(), "test", "copy_blocks");
  k.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), hk.data(), got.size()), 0);
  v.download(got.data(), got.size());
  EXPECT_EQ(std::memcmp(got.data(), hv.data(), got.size()), 0);
}

TEST_P(CacheOpsGpu, SwapOutAndInRoundTrips) {
  PAGESIM_REQUIRE_GPU();
  const auto [dtype, d, bs, layout] = GetParam();
  const AttentionProblem p(spec(dtype, d, bs, layout));
  const std::int32_t nb = p.num_blocks();
  const std::size_t bytes = p.k_cache_bytes().size();
  const PinnedBuffer pinned_k(bytes), pinned_v(bytes);  // freed on every path, failures included
  char* host_k = pinned_k.get();
  char* host_v = pinned_v.get();
  std::memset(host_k, 0, bytes);
  std::memset(host_v, 0, bytes);
  DeviceBuffer k = testing::device_copy(p.k_cache_bytes()), v = testing::device_copy(p.v_cache_bytes());
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
  check_cuda(cudaDeviceSynchronize(), "test", "swap out");
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
  check_cuda(cudaDeviceSynchronize(), "test", "swap in");
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
}

std::string grid_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [t, d, b, l] = info.param;
  return std::string(dtype_name(t)) + "_d" + std::to_string(d) + "_b" + std::to_string(b) +
         (l == KvLayout::kHND ? "_hnd" : "_nhd");
}

INSTANTIATE_TEST_SUITE_P(Grid, CacheOpsGpu,
                         ::testing::Combine(::testing::Values(DType::kFloat16, DType::kBFloat16, DType::kFloat32),
                                            ::testing::Values(64, 80, 256), ::testing::Values(8, 16, 32),
                                            ::testing::Values(KvLayout::kHND, KvLayout::kNHD)),
                         grid_name);

// reshape_and_cache and copy_blocks on the top blocks of caches of more than 2^31 elements:
// slot ids and byte offsets need 64 bits. ~4.9 GB per cache (f16, kNHD).
TEST(CacheOpsGpuLarge, OffsetsBeyond2Pow31Elements) {
  PAGESIM_REQUIRE_GPU();
  ProblemSpec s;
  s.dtype = DType::kFloat16;
  s.head_dim = 128;
  s.block_size = 16;
  s.layout = KvLayout::kNHD;
  s.num_q_heads = 4;
  s.num_kv_heads = 2;
  s.kv_lens = {100, 37, 64};
  s.spare_blocks = 0;
  const AttentionProblem p(s);
  testing::LargeCaches big = testing::large_caches(p, 600000);
  const std::int64_t bs = s.block_size;
  ASSERT_GT(static_cast<std::int64_t>(big.base) * bs * 2 * 128, (1LL << 31));
  const std::size_t small = p.k_cache_bytes().size();
  const std::size_t top = big.k.bytes() - small;
  // Reshape: the top blocks start all-NaN and must end as the problem's caches.
  std::vector<std::byte> nan_cache(small);
  testing::fill_nan(nan_cache.data(), s.dtype, p.k_cache_view().span_elements());
  check_cuda(cudaMemcpy(big.k.get() + top, nan_cache.data(), small, cudaMemcpyHostToDevice), "test", "NaN K");
  check_cuda(cudaMemcpy(big.v.get() + top, nan_cache.data(), small, cudaMemcpyHostToDevice), "test", "NaN V");
  std::vector<std::int64_t> slots = p.slot_mapping();
  for (std::int64_t& slot : slots) slot += static_cast<std::int64_t>(big.base) * bs;
  const auto tokens = static_cast<std::int64_t>(slots.size());
  const std::size_t token_bytes = 2 * 128 * 2;
  std::vector<std::byte> keys(slots.size() * token_bytes), values(slots.size() * token_bytes);
  std::memcpy(keys.data(), p.keys_view().data, keys.size());
  std::memcpy(values.data(), p.values_view().data, values.size());
  DeviceBuffer dkeys = testing::device_copy(keys), dvalues = testing::device_copy(values);
  DeviceBuffer dslots = testing::device_copy(slots);
  reshape_and_cache({TensorView::contiguous(dkeys.get(), s.dtype, {tokens, 2, 128}),
                     TensorView::contiguous(dvalues.get(), s.dtype, {tokens, 2, 128}), big.k_view, big.v_view,
                     TensorView::contiguous(dslots.get(), DType::kInt64, {tokens})},
                    nullptr);
  check_cuda(cudaDeviceSynchronize(), "test", "reshape_and_cache");
  std::vector<std::byte> got(small);
  check_cuda(cudaMemcpy(got.data(), big.k.get() + top, small, cudaMemcpyDeviceToHost), "test", "download K");
  EXPECT_EQ(std::memcmp(got.data(), p.k_cache_bytes().data(), small), 0) << "reshape_and_cache K";
  check_cuda(cudaMemcpy(got.data(), big.v.get() + top, small, cudaMemcpyDeviceToHost), "test", "download V");
  EXPECT_EQ(std::memcmp(got.data(), p.v_cache_bytes().data(), small), 0) << "reshape_and_cache V";
  // Copy: the first half of the top blocks onto the second half, against the reference.
  const std::int32_t nb = p.num_blocks();
  std::vector<std::int32_t> pairs, big_pairs;
  for (std::int32_t b = 0; b < nb / 2; ++b) {
    pairs.insert(pairs.end(), {b, nb - 1 - b});
    big_pairs.insert(big_pairs.end(), {big.base + b, big.base + nb - 1 - b});
  }
  const auto np = static_cast<std::int64_t>(nb / 2);
  std::vector<std::byte> hk = p.k_cache_bytes(), hv = p.v_cache_bytes();
  TensorView kc = p.k_cache_view(), vc = p.v_cache_view();
  kc.data = hk.data();
  vc.data = hv.data();
  reference_copy_blocks({kc, vc, TensorView::contiguous(pairs.data(), DType::kInt32, {np, 2})});
  DeviceBuffer dpairs = testing::device_copy(big_pairs);
  copy_blocks({big.k_view, big.v_view, TensorView::contiguous(dpairs.get(), DType::kInt32, {np, 2})}, nullptr);
  check_cuda(cudaDeviceSynchronize(), "test", "copy_blocks");
  check_cuda(cudaMemcpy(got.data(), big.k.get() + top, small, cudaMemcpyDeviceToHost), "test", "download K");
  EXPECT_EQ(std::memcmp(got.data(), hk.data(), small), 0) << "copy_blocks K";
  check_cuda(cudaMemcpy(got.data(), big.v.get() + top, small, cudaMemcpyDeviceToHost), "test", "download V");
  EXPECT_EQ(std::memcmp(got.data(), hv.data(), small), 0) << "copy_blocks V";
}

TEST(CacheOpsGpuValidation, BadArgumentsThrowBeforeLaunch) {
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
