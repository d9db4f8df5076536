// The CPU reference: paged (block-table lookups, online softmax) against dense (logical
// contiguous, two-pass softmax) over a grid of awkward sizes, both against a plain
// one-query-at-a-time computation at lengths around their tile sizes, plus hand-computed
// cases and argument errors. Runs in CI; sizes are kept small.
#include "kernels/reference_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "attention_problem.h"
#include "kernels/element_access.h"
#include "kernels/half.h"
#include "kernels/kernel_error.h"

namespace pagesim::kernels {
namespace {

using testing::AttentionProblem;
using testing::ProblemSpec;

std::vector<float> run_paged(const AttentionProblem& p) {
  std::vector<float> out(static_cast<std::size_t>(p.num_query_tokens() * p.spec().num_q_heads * p.spec().head_dim),
                         std::numeric_limits<float>::quiet_NaN());
  reference_paged_attention(p.paged_args(TensorView::contiguous(
      out.data(), DType::kFloat32, {p.num_query_tokens(), p.spec().num_q_heads, p.spec().head_dim})));
  return out;
}

std::vector<float> run_dense(const AttentionProblem& p) {
  std::vector<float> out(static_cast<std::size_t>(p.num_query_tokens() * p.spec().num_q_heads * p.spec().head_dim),
                         std::numeric_limits<float>::quiet_NaN());
  reference_dense_attention(p.dense_args(TensorView::contiguous(
      out.data(), DType::kFloat32, {p.num_query_tokens(), p.spec().num_q_heads, p.spec().head_dim})));
  return out;
}

void expect_close(const std::vector<float>& a, const std::vector<float>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(std::isfinite(a[i])) << "element " << i;
    ASSERT_TRUE(std::isfinite(b[i])) << "element " << i;
    ASSERT_NEAR(a[i], b[i], tol * (1 + std::abs(b[i]))) << "element " << i;
  }
}

// (q heads, kv heads), block size, dtype, layout, alibi, prefill
using GridParam = std::tuple<std::pair<int, int>, int, DType, KvLayout, bool, bool>;

class ReferenceGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(ReferenceGrid, PagedMatchesDense) {
  const auto [heads, bs, dtype, layout, alibi, prefill] = GetParam();
  ProblemSpec spec;
  spec.num_q_heads = heads.first;
  spec.num_kv_heads = heads.second;
  spec.block_size = bs;
  spec.head_dim = 20;
  spec.dtype = dtype;
  spec.layout = layout;
  spec.alibi = alibi;
  spec.shared_prefix_blocks = 2;
  spec.query_magnitude = 3;
  spec.seed = static_cast<std::uint64_t>(bs * 131 + heads.first * 7 + heads.second + (alibi ? 1000 : 0));
  if (prefill) {
    // Lengths 1, block - 1, block, block + 1 and longer, with and without history.
    spec.kv_lens = {std::max(bs - 1, 1), bs, bs + 1, 1, 2 * bs + 5, 70};
    spec.query_lens = {std::max(bs - 1, 1), 1, bs + 1, 1, std::min(9, 2 * bs + 5), 33};
  } else {
    spec.kv_lens = {0, 1, std::max(bs - 1, 1), bs, bs + 1, 3 * bs + 2, 101};
  }
  const AttentionProblem p(spec);
  expect_close(run_paged(p), run_dense(p), 1e-6);
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  const auto [heads, bs, dtype, layout, alibi, prefill] = info.param;
  return "q" + std::to_string(heads.first) + "kv" + std::to_string(heads.second) + "_b" +
         std::to_string(bs) + "_" + dtype_name(dtype) + (layout == KvLayout::kHND ? "_hnd" : "_nhd") +
         (alibi ? "_alibi" : "") + (prefill ? "_prefill" : "_decode");
}

INSTANTIATE_TEST_SUITE_P(
    Grid, ReferenceGrid,
    ::testing::Combine(::testing::Values(std::pair{4, 4}, std::pair{8, 2}, std::pair{8, 1}),
                       ::testing::Values(1, 3, 8, 16, 32),
                       ::testing::Values(DType::kFloat32, DType::kFloat16, DType::kBFloat16),
                       ::testing::Values(KvLayout::kHND, KvLayout::kNHD), ::testing::Bool(),
                       ::testing::Bool()),
    grid_name);

// A one-token-per-block, single-head problem built by hand: K/V rows given explicitly.
struct Tiny {
  std::vector<float> q, k, v, out;
  std::vector<std::int32_t> table, lens, qstarts;
  std::vector<float> slopes;
  PagedAttentionArgs args(std::int64_t nq, std::int64_t d, std::int64_t keys) {
    PagedAttentionArgs a;
    out.assign(static_cast<std::size_t>(nq * d), -7.0f);
    a.query = TensorView::contiguous(q.data(), DType::kFloat32, {nq, 1, d});
    a.out = TensorView::contiguous(out.data(), DType::kFloat32, {nq, 1, d});
    a.k_cache = kv_cache_view(k.data(), DType::kFloat32, KvLayout::kHND, static_cast<std::int32_t>(keys), 1, 1,
                              static_cast<std::int32_t>(d));
    a.v_cache = kv_cache_view(v.data(), DType::kFloat32, KvLayout::kHND, static_cast<std::int32_t>(keys), 1, 1,
                              static_cast<std::int32_t>(d));
    a.block_table = TensorView::contiguous(table.data(), DType::kInt32,
                                           {static_cast<std::int64_t>(lens.size()), keys});
    a.kv_lens = TensorView::contiguous(lens.data(), DType::kInt32, {static_cast<std::int64_t>(lens.size())});
    if (!qstarts.empty()) {
      a.query_starts = TensorView::contiguous(qstarts.data(), DType::kInt32,
                                              {static_cast<std::int64_t>(qstarts.size())});
    }
    if (!slopes.empty()) a.alibi_slopes = TensorView::contiguous(slopes.data(), DType::kFloat32, {1});
    a.scale = 1.0f;
    return a;
  }
};

TEST(Reference, SingleKeyReturnsItsValue) {
  Tiny t{{1, 2}, {0.5f, -1}, {3, -4}, {}, {0}, {1}, {}, {}};
  reference_paged_attention(t.args(1, 2, 1));
  EXPECT_FLOAT_EQ(t.out[0], 3);
  EXPECT_FLOAT_EQ(t.out[1], -4);
}

TEST(Reference, EmptyContextWritesZeros) {
  Tiny t{{1, 2}, {0.5f, -1}, {3, -4}, {}, {0}, {0}, {}, {}};
  reference_paged_attention(t.args(1, 2, 1));
  EXPECT_EQ(t.out[0], 0.0f);
  EXPECT_EQ(t.out[1], 0.0f);
}

TEST(Reference, EqualScoresAverage) {
  // Keys orthogonal to q: equal scores, the output is the mean of the values. Blocks are
  // visited in table order 1, 0 (physical), so logical token 0 is physical block 1.
  Tiny t{{0, 1}, {1, 0, 1, 0}, {2, 0, 4, 6}, {}, {1, 0}, {2}, {}, {}};
  reference_paged_attention(t.args(1, 2, 2));
  EXPECT_FLOAT_EQ(t.out[0], 3);
  EXPECT_FLOAT_EQ(t.out[1], 3);
}

TEST(Reference, AlibiPenalisesDistanceFromTheQuery) {
  // q = 0, so only ALiBi: the query (position 1) sees key 0 at distance 1 (bias -slope) and
  // key 1 at distance 0.
  const float slope = 0.75f;
  Tiny t{{0}, {5, 9}, {1, 0}, {}, {0, 1}, {2}, {}, {slope}};
  reference_paged_attention(t.args(1, 1, 2));
  const double w0 = std::exp(-slope) / (std::exp(-slope) + 1.0);
  EXPECT_NEAR(t.out[0], w0, 1e-7);
}

TEST(Reference, CausalPrefillFirstRowSeesOnlyTheFirstKey) {
  // Prefill of 2 tokens, no history: row 0 sees key 0 only; row 1 both.
  Tiny t{{1, 1}, {0, 0}, {10, 20}, {}, {0, 1}, {2}, {0, 2}, {}};
  reference_paged_attention(t.args(2, 1, 2));
  EXPECT_FLOAT_EQ(t.out[0], 10);
  EXPECT_FLOAT_EQ(t.out[1], 15);
}

TEST(Reference, HistoryShiftsTheCausalLimit) {
  // 3 cached + 1 new token, query_len 2: rows at positions 2 and 3.
  Tiny t{{0, 0}, {0, 0, 0, 0}, {1, 2, 3, 4}, {}, {0, 1, 2, 3}, {4}, {0, 2}, {}};
  reference_paged_attention(t.args(2, 1, 4));
  EXPECT_FLOAT_EQ(t.out[0], 2);    // mean of 1, 2, 3
  EXPECT_FLOAT_EQ(t.out[1], 2.5);  // mean of 1..4
}

TEST(Reference, PeakySoftmaxAndFp16OutputAgree) {
  ProblemSpec spec;
  spec.kv_lens = {1, 15, 16, 17, 250};
  spec.num_q_heads = 8;
  spec.num_kv_heads = 2;
  spec.head_dim = 32;
  spec.query_magnitude = 12;  // scores spread over tens of units
  const AttentionProblem p(spec);
  expect_close(run_paged(p), run_dense(p), 1e-6);
  std::vector<Half> half_out(static_cast<std::size_t>(p.num_query_tokens() * 8 * 32));
  reference_paged_attention(p.paged_args(
      TensorView::contiguous(half_out.data(), DType::kFloat16, {p.num_query_tokens(), 8, 32})));
  const std::vector<float> ref = run_dense(p);
  for (std::size_t i = 0; i < ref.size(); ++i) {
    EXPECT_EQ(half_out[i].bits, Half(ref[i]).bits) << i;
  }
}

TEST(Reference, NanInPaddingSlotsNeverLeaks) {
  // AttentionProblem fills every unowned slot with NaN; lengths end mid-block.
  ProblemSpec spec;
  spec.kv_lens = {5, 17, 31};
  spec.query_lens = {2, 17, 1};
  spec.block_size = 16;
  spec.head_dim = 16;
  const AttentionProblem p(spec);
  for (float x : run_paged(p)) ASSERT_TRUE(std::isfinite(x));
}

TEST(Reference, LongContextStaysAccurate) {
  ProblemSpec spec;
  spec.kv_lens = {3000};
  spec.num_q_heads = 2;
  spec.num_kv_heads = 1;
  spec.head_dim = 16;
  spec.block_size = 32;
  spec.alibi = true;
  const AttentionProblem p(spec);
  expect_close(run_paged(p), run_dense(p), 1e-6);
}

// ---- tiles --------------------------------------------------------------------------------

// The plainest computation of attention_args.h's semantics, one query and head at a time over
// the logical K/V: every score, its maximum, then the weighted sum. Shares no code with the
// reference but element conversion and AttentionMask::visible.
std::vector<float> plain_attention(const AttentionProblem& p) {
  const ProblemSpec& spec = p.spec();
  const TensorView q = p.query_view(), keys = p.keys_view(), values = p.values_view();
  const PackedBatch& b = p.batch();
  const std::int32_t d = spec.head_dim, group = spec.num_q_heads / spec.num_kv_heads;
  const std::vector<float> slopes = spec.alibi ? testing::alibi_slopes(spec.num_q_heads) : std::vector<float>{};
  std::vector<float> out(static_cast<std::size_t>(p.num_query_tokens() * spec.num_q_heads * d));
  std::int64_t kv_start = 0;
  for (std::int32_t s = 0; s < b.num_seqs; ++s) {
    const std::int64_t kv_len = b.kv_lens[static_cast<std::size_t>(s)];
    const std::int64_t row0 = p.decode() ? s : b.query_starts[static_cast<std::size_t>(s)];
    const std::int64_t qlen = p.decode() ? 1 : b.query_starts[static_cast<std::size_t>(s) + 1] - row0;
    for (std::int64_t i = 0; i < qlen; ++i) {
      const std::int64_t pos = kv_len - qlen + i;
      for (std::int32_t h = 0; h < spec.num_q_heads; ++h) {
        const std::int32_t kvh = h / group;
        std::vector<double> score(static_cast<std::size_t>(kv_len), -std::numeric_limits<double>::infinity());
        double mx = -std::numeric_limits<double>::infinity();
        for (std::int64_t j = 0; j < kv_len; ++j) {
          if (!spec.mask.visible(j, pos)) continue;
          double dot = 0;
          for (std::int32_t x = 0; x < d; ++x) {
            dot += load_element(q, ((row0 + i) * spec.num_q_heads + h) * d + x) *
                   load_element(keys, ((kv_start + j) * spec.num_kv_heads + kvh) * d + x);
          }
          score[static_cast<std::size_t>(j)] = dot * static_cast<double>(p.scale()) +
              (slopes.empty() ? 0.0 : slopes[static_cast<std::size_t>(h)] * static_cast<double>(j - pos));
          mx = std::max(mx, score[static_cast<std::size_t>(j)]);
        }
        std::vector<double> acc(static_cast<std::size_t>(d), 0.0);
        double sum = 0;
        for (std::int64_t j = 0; j < kv_len && mx > -std::numeric_limits<double>::infinity(); ++j) {
          if (!spec.mask.visible(j, pos)) continue;
          const double w = std::exp(score[static_cast<std::size_t>(j)] - mx);
          sum += w;
          for (std::int32_t x = 0; x < d; ++x) {
            acc[static_cast<std::size_t>(x)] += w * load_element(values, ((kv_start + j) * spec.num_kv_heads + kvh) * d + x);
          }
        }
        for (std::int32_t x = 0; x < d; ++x) {
          out[static_cast<std::size_t>(((row0 + i) * spec.num_q_heads + h) * d + x)] =
              sum > 0 ? static_cast<float>(acc[static_cast<std::size_t>(x)] / sum) : 0.0f;
        }
      }
    }
    kv_start += kv_len;
  }
  return out;
}

// Lengths around the tiles: key tiles of reference_tile::kKeys, query tiles of kQueryRows rows
// (kQueryRows / G queries). The mask, ALiBi, GQA and block size vary; with a window, every
// block before the attended range is freed (-1) and must not be read.
struct TileCase {
  const char* name;
  std::int32_t q_heads, kv_heads, block_size;
  AttentionMask mask;
  bool alibi;
};

class ReferenceTiles : public ::testing::TestWithParam<TileCase> {};

TEST_P(ReferenceTiles, PagedAndDenseMatchAPlainComputation) {
  const TileCase& tc = GetParam();
  const std::int32_t keys = reference_tile::kKeys;
  const std::int32_t queries = std::max(1, reference_tile::kQueryRows / (tc.q_heads / tc.kv_heads));
  for (const bool prefill : {true, false}) {
    ProblemSpec spec;
    spec.num_q_heads = tc.q_heads;
    spec.num_kv_heads = tc.kv_heads;
    spec.head_dim = 6;
    spec.block_size = tc.block_size;
    spec.mask = tc.mask;
    spec.alibi = tc.alibi;
    spec.query_magnitude = 4;
    spec.seed = static_cast<std::uint64_t>(tc.q_heads * 31 + tc.block_size + (prefill ? 7 : 0));
    if (prefill && queries == 1) {  // one query per tile: a few tiles are enough
      spec.kv_lens = {keys + 1, 2};
      spec.query_lens = {3, 2};
    } else if (prefill) {
      // A whole prompt over two key tiles + 1; history with a tile of queries - 1 and + 1;
      // one query after a key tile.
      spec.kv_lens = {2 * keys + 1, keys + queries - 1, 3 * keys - 1, keys + 1};
      spec.query_lens = {2 * keys + 1, queries - 1, queries + 1, 1};
    } else {
      spec.kv_lens = {0, 1, keys - 1, keys, keys + 1, 2 * keys + 3};
    }
    const AttentionProblem p(spec);
    const std::vector<float> plain = plain_attention(p);
    const std::vector<float> dense = run_dense(p);
    expect_close(dense, plain, 1e-6);
    PackedBatch freed = p.batch();
    for (std::int32_t s = 0; s < freed.num_seqs; ++s) {
      const std::int64_t q = p.decode() ? 1 : freed.query_starts[static_cast<std::size_t>(s) + 1] -
                                                  freed.query_starts[static_cast<std::size_t>(s)];
      const BlockRange r = attended_blocks(spec.mask, freed.kv_lens[static_cast<std::size_t>(s)], q, tc.block_size);
      for (std::int64_t blk = 0; blk < r.first; ++blk)
        freed.block_table[static_cast<std::size_t>(s * freed.max_blocks_per_seq + blk)] = -1;
    }
    std::vector<float> out(plain.size(), std::numeric_limits<float>::quiet_NaN());
    PagedAttentionArgs a = p.paged_args(TensorView::contiguous(
        out.data(), DType::kFloat32, {p.num_query_tokens(), spec.num_q_heads, spec.head_dim}));
    a.block_table = freed.block_table_view();
    reference_paged_attention(a);
    expect_close(out, plain, 1e-6);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Lengths, ReferenceTiles,
    ::testing::Values(TileCase{"mha_causal", 1, 1, 16, {}, false},
                      TileCase{"gqa_causal_alibi", 4, 2, 16, {}, true},
                      TileCase{"gqa8_block1", 8, 1, 1, {}, false},
                      // G larger than a query tile: one query per tile.
                      TileCase{"mqa_group_over_a_tile", reference_tile::kQueryRows + 2, 1, 32, {}, true},
                      TileCase{"window_inside_a_key_tile", 4, 2, 16, {MaskKind::kSlidingWindow, 100}, true},
                      TileCase{"window_over_a_key_tile", 2, 1, 8, {MaskKind::kSlidingWindow, reference_tile::kKeys + 3}, false},
                      TileCase{"chunks_of_a_key_tile", 4, 2, 16, {MaskKind::kChunkedLocal, reference_tile::kKeys}, true},
                      TileCase{"chunks_across_tiles", 2, 2, 3, {MaskKind::kChunkedLocal, 100}, false}),
    [](const ::testing::TestParamInfo<TileCase>& param_info) { return std::string(param_info.param.name); });

TEST(Reference, BadTableEntriesAreNamed) {
  Tiny t{{1}, {1}, {1}, {}, {3}, {1}, {}, {}};
  try {
    reference_paged_attention(t.args(1, 1, 1));
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("block_table[0][0] = 3"), std::string::npos) << e.what();
  }
  Tiny longer{{1}, {1}, {1}, {}, {0}, {2}, {}, {}};  // kv_len 2 but one block of size 1
  EXPECT_THROW(reference_paged_attention(longer.args(1, 1, 1)), KernelError);
  Tiny too_many_queries{{1, 1}, {1}, {1}, {}, {0}, {1}, {0, 2}, {}};  // query_len 2 > kv_len 1
  try {
    reference_paged_attention(too_many_queries.args(2, 1, 1));
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("query_len 2"), std::string::npos) << e.what();
  }
  EXPECT_EQ(too_many_queries.out[0], -7.0f);  // nothing written
}

// Masks, by hand: one token per block, one head, q = 0 so every visible key weighs the same
// and the output is the mean of the visible values (1, 2, 3, ... for keys 0, 1, 2, ...).

TEST(ReferenceMask, SlidingWindowDecodeSeesTheLastWKeys) {
  // kv_len 4, decode at position 3, W = 2: keys 2 and 3. Blocks 0 and 1 were freed (-1).
  Tiny t{{0}, {0, 0, 0, 0}, {1, 2, 3, 4}, {}, {-1, -1, 2, 3}, {4}, {}, {}};
  PagedAttentionArgs a = t.args(1, 1, 4);
  a.mask = {MaskKind::kSlidingWindow, 2};
  reference_paged_attention(a);
  EXPECT_FLOAT_EQ(t.out[0], 3.5f);
  // W = 3: keys 1..3; W >= kv_len: the causal result.
  Tiny t3{{0}, {0, 0, 0, 0}, {1, 2, 3, 4}, {}, {-1, 1, 2, 3}, {4}, {}, {}};
  a = t3.args(1, 1, 4);
  a.mask = {MaskKind::kSlidingWindow, 3};
  reference_paged_attention(a);
  EXPECT_FLOAT_EQ(t3.out[0], 3.0f);
  Tiny all{{0}, {0, 0, 0, 0}, {1, 2, 3, 4}, {}, {0, 1, 2, 3}, {4}, {}, {}};
  a = all.args(1, 1, 4);
  a.mask = {MaskKind::kSlidingWindow, 9};
  reference_paged_attention(a);
  EXPECT_FLOAT_EQ(all.out[0], 2.5f);
}

TEST(ReferenceMask, SlidingWindowPrefillMovesWithEachQuery) {
  // kv_len 4, 2 queries at positions 2, 3, W = 2: keys {1, 2} and {2, 3}; block 0 freed.
  Tiny t{{0, 0}, {0, 0, 0, 0}, {1, 2, 3, 4}, {}, {-1, 1, 2, 3}, {4}, {0, 2}, {}};
  PagedAttentionArgs a = t.args(2, 1, 4);
  a.mask = {MaskKind::kSlidingWindow, 2};
  reference_paged_attention(a);
  EXPECT_FLOAT_EQ(t.out[0], 2.5f);
  EXPECT_FLOAT_EQ(t.out[1], 3.5f);
}

TEST(ReferenceMask, ChunkedLocalSeesOnlyItsOwnChunk) {
  // kv_len 5, C = 2, 3 queries at positions 2, 3, 4: chunk [2, 4) for 2 and 3 (keys {2},
  // {2, 3}), chunk [4, 6) for 4 (key {4}). Blocks 0 and 1 (chunk 0) freed.
  Tiny t{{0, 0, 0}, {0, 0, 0, 0, 0}, {1, 2, 3, 4, 5}, {}, {-1, -1, 2, 3, 4}, {5}, {0, 3}, {}};
  PagedAttentionArgs a = t.args(3, 1, 5);
  a.mask = {MaskKind::kChunkedLocal, 2};
  reference_paged_attention(a);
  EXPECT_FLOAT_EQ(t.out[0], 3.0f);
  EXPECT_FLOAT_EQ(t.out[1], 3.5f);
  EXPECT_FLOAT_EQ(t.out[2], 5.0f);
}

TEST(ReferenceMask, FirstVisibleKeyAndAttendedBlocks) {
  const AttentionMask w{MaskKind::kSlidingWindow, 4};
  EXPECT_EQ(w.first_visible_key(2), 0);
  EXPECT_EQ(w.first_visible_key(3), 0);
  EXPECT_EQ(w.first_visible_key(4), 1);
  EXPECT_EQ(w.first_visible_key(10), 7);
  EXPECT_TRUE(w.visible(7, 10));
  EXPECT_FALSE(w.visible(6, 10));
  EXPECT_FALSE(w.visible(11, 10));
  const AttentionMask c{MaskKind::kChunkedLocal, 4};
  EXPECT_EQ(c.first_visible_key(3), 0);
  EXPECT_EQ(c.first_visible_key(4), 4);
  EXPECT_EQ(c.first_visible_key(10), 8);
  EXPECT_EQ(AttentionMask{}.first_visible_key(1000), 0);
  // Decode at position 40 (kv_len 41), W = 4, blocks of 8: keys 37..40 are in block 4 and 5.
  EXPECT_EQ(attended_blocks(w, 41, 1, 8).first, 4);
  EXPECT_EQ(attended_blocks(w, 41, 1, 8).end, 6);
  // A prefill of 10 tokens after 31 cached: the first query (31) sees from 28, block 3.
  EXPECT_EQ(attended_blocks(w, 41, 10, 8).first, 3);
  // Chunk of 16 holding position 40 starts at 32: block 4.
  EXPECT_EQ(attended_blocks({MaskKind::kChunkedLocal, 16}, 41, 1, 8).first, 4);
  EXPECT_EQ(attended_blocks(w, 0, 1, 8).end, 0);
}

// Random problems: paged with each mask matches dense with the same mask, and blocks before
// the attended range, freed (-1) or pointing at NaN-filled blocks, are never read.
class ReferenceMaskGrid : public ::testing::TestWithParam<std::tuple<MaskKind, int, int, bool>> {};

TEST_P(ReferenceMaskGrid, PagedMatchesDenseAndSkipsFreedBlocks) {
  const auto [kind, window, bs, prefill] = GetParam();
  ProblemSpec spec;
  spec.num_q_heads = 4;
  spec.num_kv_heads = 2;
  spec.head_dim = 12;
  spec.block_size = bs;
  spec.mask = {kind, window};
  spec.query_magnitude = 3;
  spec.seed = static_cast<std::uint64_t>(window * 17 + bs + (prefill ? 500 : 0));
  if (prefill) {
    spec.kv_lens = {1, window, window + 1, 3 * window + 2, 70};
    spec.query_lens = {1, 1, 2, window + 1, 5};
  } else {
    spec.kv_lens = {0, 1, window - 1 > 0 ? window - 1 : 1, window, window + 1, 2 * window + 3, 101};
  }
  const AttentionProblem p(spec);
  const std::vector<float> dense = run_dense(p);
  expect_close(run_paged(p), dense, 1e-6);

  // Free every block before the attended range: the same output, no error.
  PackedBatch freed = p.batch();
  for (std::int32_t s = 0; s < freed.num_seqs; ++s) {
    const std::int64_t q = p.decode() ? 1 : freed.query_starts[static_cast<std::size_t>(s) + 1] -
                                                freed.query_starts[static_cast<std::size_t>(s)];
    const BlockRange r = attended_blocks(spec.mask, freed.kv_lens[static_cast<std::size_t>(s)], q, bs);
    for (std::int64_t b = 0; b < r.first; ++b)
      freed.block_table[static_cast<std::size_t>(s * freed.max_blocks_per_seq + b)] = -1;
  }
  std::vector<float> out(dense.size(), std::numeric_limits<float>::quiet_NaN());
  PagedAttentionArgs a = p.paged_args(TensorView::contiguous(
      out.data(), DType::kFloat32, {p.num_query_tokens(), spec.num_q_heads, spec.head_dim}));
  a.block_table = freed.block_table_view();
  reference_paged_attention(a);
  expect_close(out, dense, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Masks, ReferenceMaskGrid,
                         ::testing::Combine(::testing::Values(MaskKind::kSlidingWindow, MaskKind::kChunkedLocal),
                                            ::testing::Values(1, 4, 7, 16), ::testing::Values(1, 3, 8),
                                            ::testing::Bool()));

TEST(ReferenceMask, BadWindowsAndFreedBlocksInTheWindowAreRefused) {
  Tiny t{{1}, {1}, {1}, {}, {0}, {1}, {}, {}};
  PagedAttentionArgs a = t.args(1, 1, 1);
  a.mask = {MaskKind::kSlidingWindow, 0};
  try {
    reference_paged_attention(a);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("mask.window is 0, expected >= 1"), std::string::npos) << e.what();
  }
  a.mask = {MaskKind::kCausal, 3};
  EXPECT_THROW(reference_paged_attention(a), KernelError);
  a.mask = {MaskKind::kChunkedLocal, 4};  // the CUDA kernels take masks too: only the head_dim is refused
  try {
    (void)check_paged_attention_args(a, "cuda_paged_attention", Backend::kCuda);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim 1 is not supported"), std::string::npos) << e.what();
  }
  // A freed block inside the window is still an error, named.
  Tiny w{{0}, {0, 0}, {1, 2}, {}, {0, -1}, {2}, {}, {}};
  a = w.args(1, 1, 2);
  a.mask = {MaskKind::kSlidingWindow, 2};
  try {
    reference_paged_attention(a);
    FAIL();
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("block_table[0][1] = -1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagesim::kernels
