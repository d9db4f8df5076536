#include "traces/trace_stats.h"

#include <gtest/gtest.h>

#include "test_util.h"
#include "traces/vector_source.h"

namespace pagesim::traces {
namespace {

TEST(TraceStats, SmallTraceExactly) {
  std::vector<TraceRequest> rs;
  for (int i = 1; i <= 10; ++i) {
    rs.push_back(TraceRequest{static_cast<std::uint64_t>(i), 2.0 + i, i * 10, 100 - i,
                              i == 10 ? 3 : 1, i == 1 ? 4 : 1, {}});
  }
  VectorSource source(rs);
  const TraceStats s = compute_stats(source);
  EXPECT_EQ(s.requests, 10u);
  EXPECT_EQ(s.first_arrival_s, 3.0);
  EXPECT_EQ(s.last_arrival_s, 12.0);
  EXPECT_EQ(s.duration_s, 9.0);
  EXPECT_DOUBLE_EQ(s.mean_rate, 10.0 / 9.0);
  EXPECT_EQ(s.prompt.total, 550);
  EXPECT_DOUBLE_EQ(s.prompt.mean, 55.0);
  EXPECT_EQ(s.prompt.min, 10);
  EXPECT_EQ(s.prompt.p50, 50);  // nearest rank: ceil(0.5 * 10) = 5th smallest
  EXPECT_EQ(s.prompt.p90, 90);
  EXPECT_EQ(s.prompt.p99, 100);
  EXPECT_EQ(s.prompt.max, 100);
  EXPECT_EQ(s.output.min, 90);
  EXPECT_EQ(s.output.p50, 94);
  EXPECT_EQ(s.output.max, 99);
  EXPECT_EQ(s.output.total, 945);
  EXPECT_EQ(s.total_tokens, 1495);
  EXPECT_DOUBLE_EQ(s.mean_n, 1.2);
  EXPECT_DOUBLE_EQ(s.mean_beam_width, 1.3);
  EXPECT_EQ(s.hash_block_refs, 0u);
  EXPECT_EQ(s.hash_reuse_fraction, 0.0);
}

TEST(TraceStats, PercentilesOfOneHundredValues) {
  StatsAccumulator acc;
  for (int i = 100; i >= 1; --i) acc.add(TraceRequest{0, 0.0, i, 0});
  const TraceStats s = acc.finish();
  EXPECT_EQ(s.prompt.p50, 50);
  EXPECT_EQ(s.prompt.p90, 90);
  EXPECT_EQ(s.prompt.p99, 99);
  EXPECT_EQ(s.duration_s, 0.0);
  EXPECT_EQ(s.mean_rate, 0.0);
}

TEST(TraceStats, PrefixReuseCountsRepeatedReferences) {
  // Refs: [0 1 2] [0 1 3] [0 4] [] [5 5] -> 10 refs; repeats: 0, 1, 0, the second 5 -> 4.
  VectorSource source({{0, 0.0, 3, 1, 1, 1, {0, 1, 2}},
                       {1, 1.0, 3, 1, 1, 1, {0, 1, 3}},
                       {2, 2.0, 2, 1, 1, 1, {0, 4}},
                       {3, 3.0, 2, 1, 1, 1, {}},
                       {4, 4.0, 2, 1, 1, 1, {5, 5}}},
                      1);
  const TraceStats s = compute_stats(source);
  EXPECT_EQ(s.hash_block_tokens, 1);
  EXPECT_EQ(s.requests_with_hash_ids, 4u);
  EXPECT_EQ(s.hash_block_refs, 10u);
  EXPECT_EQ(s.repeated_hash_block_refs, 4u);
  EXPECT_EQ(s.distinct_hash_ids, 6u);
  EXPECT_DOUBLE_EQ(s.hash_reuse_fraction, 0.4);
}

TEST(TraceStats, EmptySource) {
  VectorSource source({});
  const TraceStats s = compute_stats(source);
  EXPECT_EQ(s.requests, 0u);
  EXPECT_EQ(s.prompt.mean, 0.0);
  EXPECT_FALSE(format_stats_table(s).empty());
}

TEST(TraceStats, TableAndJson) {
  VectorSource source({{0, 0.0, 3, 1, 1, 1, {0, 1}}, {1, 2.0, 5, 7, 2, 1, {0, 2}}}, 512);
  const TraceStats s = compute_stats(source);
  const std::string table = format_stats_table(s);
  EXPECT_NE(table.find("requests              2\n"), std::string::npos) << table;
  EXPECT_NE(table.find("mean rate             1.000 req/s"), std::string::npos) << table;
  EXPECT_NE(table.find("  mean                          4.00          4.00\n"), std::string::npos)
      << table;
  EXPECT_NE(table.find("prefix reuse          25.00% of refs repeat an earlier id (1)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("hash block            512 tokens"), std::string::npos) << table;
  const nlohmann::json j = stats_to_json(s);
  EXPECT_EQ(j["requests"], 2);
  EXPECT_EQ(j["duration_s"], 2.0);
  EXPECT_EQ(j["prompt_tokens"]["max"], 5);
  EXPECT_EQ(j["output_tokens"]["total"], 8);
  EXPECT_EQ(j["mean_n"], 1.5);
  EXPECT_EQ(j["prefix_reuse"]["fraction"], 0.25);
  EXPECT_EQ(j["prefix_reuse"]["hash_block_tokens"], 512);
  EXPECT_EQ(j["total_tokens"], 16);
}

}  // namespace
}  // namespace pagesim::traces
