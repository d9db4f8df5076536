// The test support itself: the comparison that GPU tests rely on must catch NaN, unwritten
// and wrong elements; generated problems must put NaN exactly in unowned slots and give
// shared blocks one content.
#include "attention_problem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernels/element_access.h"

namespace pagesim::kernels::testing {
namespace {

TEST(AttentionProblem, ComparisonCatchesNanAndErrors) {
  std::vector<float> ref{1, -2, 0.5f, 0}, out = ref;
  const TensorView o = TensorView::contiguous(out.data(), DType::kFloat32, {2, 2});
  const TensorView r = TensorView::contiguous(ref.data(), DType::kFloat32, {2, 2});
  const Tolerance tol{1e-3, 1e-3, 1e-3};
  EXPECT_TRUE(within(o, r, tol, nullptr));
  out[2] = std::numeric_limits<float>::quiet_NaN();
  Comparison c;
  EXPECT_FALSE(within(o, r, tol, &c));
  EXPECT_EQ(c.nonfinite, 1);
  EXPECT_EQ(c.worst_index, 2);
  out[2] = 0.5f;
  out[3] = 0.01f;  // one element off by 0.01: rel L2 small, element bound broken
  EXPECT_FALSE(within(o, r, {1e-3, 1e-3, 1.0}, &c));
  EXPECT_NEAR(c.max_abs_error, 0.01, 1e-7);
  EXPECT_EQ(c.worst_index, 3);
  EXPECT_TRUE(within(o, r, {2e-2, 0, 1.0}, nullptr));
  EXPECT_NEAR(compare(o, r).rel_l2_error, 0.01 / std::sqrt(1 + 4 + 0.25), 1e-6);
}

TEST(AttentionProblem, ToleranceOrdersByPrecision) {
  EXPECT_LT(tolerance_for(DType::kFloat32).atol, tolerance_for(DType::kFloat16).atol);
  EXPECT_LT(tolerance_for(DType::kFloat16).atol, tolerance_for(DType::kBFloat16).atol);
}

TEST(AttentionProblem, NanExactlyInUnownedSlotsAndSharedBlocksAgree) {
  ProblemSpec spec;
  spec.kv_lens = {40, 37, 5};
  spec.block_size = 8;
  spec.num_kv_heads = 2;
  spec.head_dim = 8;
  spec.dtype = DType::kFloat16;
  spec.shared_prefix_blocks = 2;
  spec.spare_blocks = 2;
  const AttentionProblem p(spec);
  // Blocks: 5 + (5 - 2) + 1 + 2 spares = 11.
  EXPECT_EQ(p.num_blocks(), 11);
  const PackedBatch& b = p.batch();
  EXPECT_EQ(b.block_table[0], b.block_table[static_cast<std::size_t>(b.max_blocks_per_seq)]);
  EXPECT_EQ(b.block_table[1], b.block_table[static_cast<std::size_t>(b.max_blocks_per_seq) + 1]);
  EXPECT_NE(b.block_table[2], b.block_table[static_cast<std::size_t>(b.max_blocks_per_seq) + 2]);
  const TensorView k = p.k_cache_view();
  const KvCacheGeometry g = kv_cache_geometry(k, "test");
  std::vector<int> owned(static_cast<std::size_t>(g.num_slots()), 0);
  for (std::int64_t s : p.slot_mapping()) owned[static_cast<std::size_t>(s)] = 1;
  for (std::int64_t slot = 0; slot < g.num_slots(); ++slot) {
    for (std::int32_t h = 0; h < 2; ++h) {
      const double x = load_element(k, g.offset(slot / 8, h, slot % 8));
      EXPECT_EQ(std::isnan(x), owned[static_cast<std::size_t>(slot)] == 0) << "slot " << slot;
    }
  }
  // Logical keys of the shared prefix are identical.
  const TensorView keys = p.keys_view();
  for (std::int64_t e = 0; e < 16 * 2 * 8; ++e) {
    EXPECT_EQ(load_element(keys, e), load_element(keys, 40 * 2 * 8 + e));
  }
}

}  // namespace
}  // namespace pagesim::kernels::testing
