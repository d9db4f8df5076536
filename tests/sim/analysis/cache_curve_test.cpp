// compute_cache_curve: a hand-computed trace (tokens, partial blocks, the LRU grid and the
// direct runs), the bundled Mooncake conversation trace at infinite capacity against
// `pagesim trace stats`'s prefix reuse, one-pass LRU against direct LRU there, the CSV, and
// the errors of bad options, traces without hash ids and traces with no request.
#include "sim/analysis/cache_curve.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "temp_dir_test.h"
#include "traces/mooncake_reader.h"
#include "traces/trace_stats.h"
#include "traces/vector_source.h"

namespace pagesim::sim {
namespace {

const std::string kMooncake = std::string(PAGESIM_SOURCE_DIR) + "/traces/data/mooncake_conversation_trace.jsonl";

traces::TraceRequest request(double t, std::int64_t prompt, std::vector<std::uint64_t> ids) {
  traces::TraceRequest r;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = 1;
  r.hash_ids = std::move(ids);
  return r;
}

const CachePoint& point(const CacheCurve& c, IdealPolicy p, CurveMethod m, std::int64_t blocks) {
  for (const CachePoint& q : c.points)
    if (q.policy == p && q.method == m && q.capacity_blocks == blocks) return q;
  throw std::logic_error("no such point");
}

// Hash blocks of 4 tokens: [a b] (8 tokens), [a b c'] (10: c' holds 2), [d] (3 tokens, a
// partial block), [a b] again, and a request without ids (5 tokens, never a hit).
std::vector<traces::TraceRequest> small_trace() {
  return {request(0, 8, {1, 2}), request(1, 10, {1, 2, 3}), request(2, 3, {4}), request(3, 8, {1, 2}),
          request(4, 5, {})};
}

TEST(CacheCurve, HandComputedSmallTrace) {
  traces::VectorSource source(small_trace(), 4);
  CacheCurveOptions o;
  o.capacities_tokens = {4, 8, 12, 100};  // 1, 2, 3 and 25 blocks
  o.policies = {IdealPolicy::kLru, IdealPolicy::kFifo};
  const CacheCurve c = compute_cache_curve(source, o);
  EXPECT_EQ(c.block_size, 4);
  EXPECT_EQ(c.prompt_tokens, 34);
  EXPECT_EQ(c.prompt_blocks, 8);
  EXPECT_EQ(c.distinct_blocks, 4);
  // Request 2: a, b at rank 2 -> capacity 2; request 4: a, b at ranks 4 ({a b c' d}) and 3
  // ({b c' d}): prefix max 4. Capacity 2, 3: 8 tokens hit; 4 and up: 16.
  EXPECT_EQ(point(c, IdealPolicy::kLru, CurveMethod::kStack, 1).hit_tokens, 0);
  EXPECT_EQ(point(c, IdealPolicy::kLru, CurveMethod::kStack, 2).hit_tokens, 8);
  EXPECT_EQ(point(c, IdealPolicy::kLru, CurveMethod::kStack, 3).hit_tokens, 8);
  const CachePoint& inf = point(c, IdealPolicy::kLru, CurveMethod::kStack, 4);
  EXPECT_EQ(inf.hit_tokens, 16);
  EXPECT_EQ(inf.hit_blocks, 4);
  EXPECT_DOUBLE_EQ(inf.hit_rate, 16.0 / 34.0);
  EXPECT_DOUBLE_EQ(inf.block_hit_rate, 4.0 / 8.0);
  EXPECT_EQ(c.points.back().capacity_blocks, 25);  // the last direct run
  for (const std::int64_t b : {1, 2, 3, 25})
    EXPECT_EQ(point(c, IdealPolicy::kLru, CurveMethod::kDirect, b).hit_tokens,
              point(c, IdealPolicy::kLru, CurveMethod::kStack, b).hit_tokens)
        << b;
  // FIFO at 3 blocks: after request 3 the cache holds b c' d (a, inserted first, went for
  // d), so request 4 misses a at once.
  EXPECT_EQ(point(c, IdealPolicy::kFifo, CurveMethod::kDirect, 3).hit_tokens, 8);
  EXPECT_EQ(point(c, IdealPolicy::kFifo, CurveMethod::kDirect, 2).hit_tokens, 8);
  EXPECT_EQ(point(c, IdealPolicy::kFifo, CurveMethod::kDirect, 25).hit_tokens, 16);
}

TEST(CacheCurve, BlockSizeAndFullBlocksOnly) {
  // Blocks of 2 tokens, full only: [a b] = 4 blocks, [a b c'] = 5, [d] = 1 (3 tokens), [a b] = 4.
  traces::VectorSource source(small_trace(), 4);
  CacheCurveOptions o;
  o.block_size = 2;
  o.partial_tail = false;
  const CacheCurve c = compute_cache_curve(source, o);
  EXPECT_EQ(c.prompt_blocks, 14);
  EXPECT_EQ(c.distinct_blocks, 4 + 1 + 1);
  EXPECT_EQ(c.points.back().hit_tokens, 16);  // requests 2 and 4 reuse [a b]
  EXPECT_EQ(c.points.back().capacity_tokens, 12);
}

TEST(CacheCurve, InfiniteCapacityAgreesWithTraceStatsOnTheMooncakeTrace) {
  traces::MooncakeReader stats_source(kMooncake);
  const traces::TraceStats stats = traces::compute_stats(stats_source);
  traces::MooncakeReader source(kMooncake);
  const CacheCurve c = compute_cache_curve(source, {});
  const CachePoint& inf = c.points.back();
  ASSERT_EQ(inf.method, CurveMethod::kStack);
  EXPECT_EQ(inf.capacity_blocks, c.distinct_blocks);
  EXPECT_EQ(c.block_size, 512);
  EXPECT_EQ(c.prompt_blocks, static_cast<std::int64_t>(stats.hash_block_refs));
  EXPECT_EQ(c.distinct_blocks, static_cast<std::int64_t>(stats.distinct_hash_ids));
  EXPECT_EQ(inf.hit_blocks, static_cast<std::int64_t>(stats.repeated_hash_block_refs));
  EXPECT_DOUBLE_EQ(inf.block_hit_rate, stats.hash_reuse_fraction);
  EXPECT_EQ(c.prompt_tokens, stats.prompt.total);
  // Every curve point is a rate that never falls as the capacity grows.
  for (std::size_t i = 1; i < c.points.size() && c.points[i].method == CurveMethod::kStack; ++i)
    EXPECT_GE(c.points[i].hit_tokens, c.points[i - 1].hit_tokens);
}

TEST(CacheCurve, OnePassLruAgreesWithDirectLruOnTheMooncakeTrace) {
  traces::MooncakeReader source(kMooncake);
  CacheCurveOptions o;
  o.capacities_tokens = {512 * 10, 512 * 1000, 3'000'000, 512 * 20000, 50'000'000};
  o.policies = {IdealPolicy::kLru};
  const CacheCurve c = compute_cache_curve(source, o);
  int compared = 0;
  for (const CachePoint& d : c.points) {
    if (d.method != CurveMethod::kDirect) continue;
    const CachePoint& s = point(c, IdealPolicy::kLru, CurveMethod::kStack, d.capacity_blocks);
    EXPECT_EQ(d.hit_tokens, s.hit_tokens) << d.capacity_blocks;
    EXPECT_EQ(d.hit_blocks, s.hit_blocks) << d.capacity_blocks;
    ++compared;
  }
  EXPECT_EQ(compared, 5);
}

class CacheCurveCsv : public testing::TempDirTest {};

TEST_F(CacheCurveCsv, WritesEveryPoint) {
  traces::VectorSource source(small_trace(), 4);
  CacheCurveOptions o;
  o.capacities_tokens = {8};
  const CacheCurve c = compute_cache_curve(source, o);
  const auto path = dir_ / "curve.csv";
  write_cache_curve_csv(c, path);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "policy,method,capacity_blocks,capacity_tokens,hit_tokens,prompt_tokens,hit_rate,hit_blocks,"
                  "block_hit_rate");
  std::size_t rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, c.points.size());
  EXPECT_EQ(c.points.size(), 4u + 2u);  // stack 1..4 blocks; fifo and lfu at 2
}

TEST(CacheCurve, ErrorsNameTheOption) {
  auto message = [](CacheCurveOptions o, std::int64_t hash_block = 4, bool ids = true) {
    auto trace = small_trace();
    if (!ids)
      for (auto& r : trace) r.hash_ids.clear();
    traces::VectorSource source(trace, hash_block);
    try {
      compute_cache_curve(source, o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CacheCurveOptions bad;
  bad.capacities_tokens = {-1};
  EXPECT_NE(message(bad).find("--capacity"), std::string::npos);
  bad = {};
  bad.points_per_decade = 0;
  EXPECT_NE(message(bad).find("--points-per-decade"), std::string::npos);
  EXPECT_NE(message({}, 0).find("--hash-block-tokens"), std::string::npos);
  EXPECT_NE(message({}, 4, false).find("no request carries hash ids"), std::string::npos);
}

// A trace with no request has no curve: an error that says so, not "no hash ids".
TEST(CacheCurve, ATraceWithNoRequestIsAnError) {
  traces::VectorSource empty({}, 4);
  try {
    compute_cache_curve(empty, {});
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "0 requests in memory: the trace holds no request: expected at least one, with hash ids");
  }
}

}  // namespace
}  // namespace pagesim::sim
