#include "kernels/prefill_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "kernels/kernel_error.h"
#include "kernels/limits.h"

namespace pagesim::kernels {
namespace {

TEST(PrefillPlan, TensorCoreTilesForHalfTypes) {
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    for (std::int32_t d : limits::kHeadDims) {
      const PrefillTile tile = prefill_tile(t, d);
      EXPECT_TRUE(tile.tensor_cores);
      EXPECT_EQ(tile.rows, 16 * tile.m_tiles * tile.warps);
      EXPECT_EQ(tile.keys % 16, 0);
      EXPECT_EQ(d % 16, 0);  // mma k-steps of 16
      // Fits the 227 KB a Hopper CTA may use, leaving room for a second CTA up to d = 128.
      EXPECT_LE(prefill_smem_bytes(t, d), 227u * 1024u);
      if (d <= 128) {
        EXPECT_LE(prefill_smem_bytes(t, d), 113u * 1024u);
      }
    }
  }
  EXPECT_FALSE(prefill_tile(DType::kFloat32, 128).tensor_cores);
}

TEST(PrefillPlan, GridPacksQueryHeadsOfAGroup) {
  PrefillProblem p;
  p.num_seqs = 3;
  p.num_q_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.max_query_len = 4096;
  const PrefillPlan plan = plan_prefill(p);
  EXPECT_EQ(plan.row_tiles, 4096 * 4 / 128);
  EXPECT_EQ(plan.kv_heads, 8);
  EXPECT_EQ(plan.num_seqs, 3);
  EXPECT_EQ(plan.num_ctas(), 128LL * 8 * 3);
  EXPECT_EQ(plan.smem_bytes, prefill_smem_bytes(DType::kFloat16, 128));
  p.max_query_len = 0;
  EXPECT_EQ(plan_prefill(p).row_tiles, 0);
  p.max_query_len = 1;
  EXPECT_EQ(plan_prefill(p).row_tiles, 1);
}

// plan_prefill takes the Hopper kernel only where the problem says the device and build run
// it and the kernel has code for the shape; forced plans refuse kernels without code.
TEST(PrefillPlan, KernelChoice) {
  PrefillProblem p;
  p.num_seqs = 2;
  p.num_q_heads = 32;
  p.num_kv_heads = 8;
  p.head_dim = 128;
  p.max_query_len = 1000;
  EXPECT_EQ(plan_prefill(p).kernel, PrefillKernel::kMma);
  p.wgmma = true;
  const PrefillPlan w = plan_prefill(p);
  EXPECT_EQ(w.kernel, PrefillKernel::kWgmma);
  EXPECT_EQ(w.tile.rows, 128);
  EXPECT_EQ(w.row_tiles, (1000 * 4 + 127) / 128);
  EXPECT_EQ(w.smem_bytes, prefill_wgmma_smem_bytes(128));
  EXPECT_LE(w.smem_bytes, 227u * 1024u);
  const PrefillPlan m = make_prefill_plan(p, PrefillKernel::kMma);
  EXPECT_EQ(m.kernel, PrefillKernel::kMma);
  EXPECT_EQ(m.smem_bytes, prefill_smem_bytes(DType::kFloat16, 128));
  EXPECT_THROW(make_prefill_plan(p, PrefillKernel::kCudaCores), KernelError);  // 16-bit on CUDA cores
  p.head_dim = 64;
  EXPECT_EQ(plan_prefill(p).kernel, PrefillKernel::kMma);  // no wgmma code at d 64
  EXPECT_THROW(make_prefill_plan(p, PrefillKernel::kWgmma), KernelError);
  p.head_dim = 128;
  p.dtype = DType::kFloat32;
  EXPECT_EQ(plan_prefill(p).kernel, PrefillKernel::kCudaCores);
  EXPECT_THROW(make_prefill_plan(p, PrefillKernel::kWgmma), KernelError);
  EXPECT_THROW(make_prefill_plan(p, PrefillKernel::kMma), KernelError);
  p.dtype = DType::kBFloat16;
  p.wgmma = false;
  try {
    make_prefill_plan(p, PrefillKernel::kWgmma);
    FAIL() << "expected KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("compute capability 9.0"), std::string::npos) << e.what();
  }
}

TEST(PrefillPlan, BadInputsThrow) {
  PrefillProblem p;
  p.num_seqs = 1;
  p.num_q_heads = 6;
  p.num_kv_heads = 4;
  p.head_dim = 64;
  EXPECT_THROW(plan_prefill(p), KernelError);
  p.num_kv_heads = 2;
  p.num_seqs = 70000;
  EXPECT_THROW(plan_prefill(p), KernelError);
}

}  // namespace
}  // namespace pagesim::kernels
