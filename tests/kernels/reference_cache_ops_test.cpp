#include "kernels/reference_cache_ops.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "attention_problem.h"
#include "kernels/half.h"
#include "kernels/kernel_error.h"

namespace pagesim::kernels {
namespace {

using testing::AttentionProblem;
using testing::ProblemSpec;

ProblemSpec spec(KvLayout layout) {
  ProblemSpec s;
  s.kv_lens = {5, 16, 33};
  s.num_q_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 8;
  s.block_size = 8;
  s.dtype = DType::kFloat16;
  s.layout = layout;
  return s;
}

class ReferenceCacheOps : public ::testing::TestWithParam<KvLayout> {};

TEST_P(ReferenceCacheOps, ReshapeAndCacheRebuildsTheProblemsCache) {
  const AttentionProblem p(spec(GetParam()));
  const std::int64_t elems = p.k_cache_view().span_elements();
  std::vector<Half> k(static_cast<std::size_t>(elems)), v(k.size());
  testing::fill_nan(k.data(), DType::kFloat16, elems);
  testing::fill_nan(v.data(), DType::kFloat16, elems);
  TensorView kc = p.k_cache_view(), vc = p.v_cache_view();
  kc.data = k.data();
  vc.data = v.data();
  // Every token, plus a padding token (-1) that must be skipped.
  std::vector<std::int64_t> slots = p.slot_mapping();
  const auto n = static_cast<std::int64_t>(slots.size());
  ReshapeAndCacheArgs a{p.keys_view(), p.values_view(), kc, vc,
                        TensorView::contiguous(slots.data(), DType::kInt64, {n})};
  slots[1] = -1;
  reference_reshape_and_cache(a);
  slots[1] = p.slot_mapping()[1];
  EXPECT_NE(std::memcmp(k.data(), p.k_cache_bytes().data(), p.k_cache_bytes().size()), 0);
  reference_reshape_and_cache(a);
  EXPECT_EQ(std::memcmp(k.data(), p.k_cache_bytes().data(), p.k_cache_bytes().size()), 0);
  EXPECT_EQ(std::memcmp(v.data(), p.v_cache_bytes().data(), p.v_cache_bytes().size()), 0);

  slots[2] = static_cast<std::int64_t>(p.num_blocks()) * 8;  // one past the last slot
  try {
    reference_reshape_and_cache(a);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("slot_mapping[2]"), std::string::npos) << e.what();
  }
}

TEST_P(ReferenceCacheOps, CopyBlocksDuplicatesWholeBlocks) {
  const AttentionProblem p(spec(GetParam()));
  std::vector<std::byte> k = p.k_cache_bytes(), v = p.v_cache_bytes();
  TensorView kc = p.k_cache_view(), vc = p.v_cache_view();
  kc.data = k.data();
  vc.data = v.data();
  const std::int32_t src = p.batch().block_table[0];  // sequence 0's only block
  const std::int32_t dst = (src + 1) % p.num_blocks();
  std::vector<std::int32_t> pairs{src, dst};
  reference_copy_blocks({kc, vc, TensorView::contiguous(pairs.data(), DType::kInt32, {1, 2})});
  const KvCacheGeometry g = kv_cache_geometry(kc, "test");
  for (std::int32_t h = 0; h < 2; ++h) {
    for (std::int32_t s = 0; s < 8; ++s) {
      EXPECT_EQ(std::memcmp(k.data() + 2 * g.offset(dst, h, s), p.k_cache_bytes().data() + 2 * g.offset(src, h, s), 16), 0);
      EXPECT_EQ(std::memcmp(v.data() + 2 * g.offset(dst, h, s), p.v_cache_bytes().data() + 2 * g.offset(src, h, s), 16), 0);
    }
  }
  std::vector<std::int32_t> twice{src, dst, (src + 2) % p.num_blocks(), dst};
  EXPECT_THROW(reference_copy_blocks({kc, vc, TensorView::contiguous(twice.data(), DType::kInt32, {2, 2})}),
               KernelError);
  std::vector<std::int32_t> chain{src, dst, dst, (dst + 1) % p.num_blocks()};
  EXPECT_THROW(reference_copy_blocks({kc, vc, TensorView::contiguous(chain.data(), DType::kInt32, {2, 2})}),
               KernelError);
}

TEST_P(ReferenceCacheOps, SwapMovesBlocksBetweenPools) {
  const AttentionProblem p(spec(GetParam()));
  // A second pool of 4 blocks.
  const std::int64_t elems = kv_cache_elements(4, 2, 8, 8);
  std::vector<Half> k(static_cast<std::size_t>(elems)), v(k.size());
  const TensorView dk = kv_cache_view(k.data(), DType::kFloat16, GetParam(), 4, 2, 8, 8);
  const TensorView dv = kv_cache_view(v.data(), DType::kFloat16, GetParam(), 4, 2, 8, 8);
  const std::int32_t src = p.batch().block_table[0];
  std::vector<std::int32_t> pairs{src, 3};
  reference_swap_blocks({p.k_cache_view(), p.v_cache_view(), dk, dv,
                         TensorView::contiguous(pairs.data(), DType::kInt32, {1, 2})});
  const KvCacheGeometry sg = kv_cache_geometry(p.k_cache_view(), "t");
  const KvCacheGeometry dg = kv_cache_geometry(dk, "t");
  for (std::int32_t h = 0; h < 2; ++h) {
    for (std::int32_t s = 0; s < 8; ++s) {
      EXPECT_EQ(std::memcmp(&k[static_cast<std::size_t>(dg.offset(3, h, s))],
                            p.k_cache_bytes().data() + 2 * sg.offset(src, h, s), 16), 0);
    }
  }
  pairs[1] = 4;
  EXPECT_THROW(reference_swap_blocks({p.k_cache_view(), p.v_cache_view(), dk, dv,
                                      TensorView::contiguous(pairs.data(), DType::kInt32, {1, 2})}),
               KernelError);
}

INSTANTIATE_TEST_SUITE_P(Layouts, ReferenceCacheOps,
                         ::testing::Values(KvLayout::kHND, KvLayout::kNHD));

}  // namespace
}  // namespace pagesim::kernels
