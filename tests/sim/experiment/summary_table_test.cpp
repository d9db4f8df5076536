// The run's closing table: its fixed columns as before, and the swapped, prefix-hit and
// sharing columns only when a result has them.
#include "sim/experiment/summary_table.h"

#include <gtest/gtest.h>

#include <cmath>

namespace pagesim::sim {
namespace {

PointResult point(const std::string& label) {
  PointResult p;
  p.label = label;
  p.summary.memory_pct.token_states = 90;
  p.summary.mean_batched_requests = 12.5;
  return p;
}

TEST(SummaryTable, PlainRunsKeepTheirColumns) {
  const std::string t = format_results_table({point("a")});
  EXPECT_NE(t.find("tokens%"), std::string::npos);
  EXPECT_NE(t.find("preempt\n"), std::string::npos) << t;  // the last column
  for (const char* c : {"swapped", "hit%", "shared%"}) EXPECT_EQ(t.find(c), std::string::npos) << c;
}

TEST(SummaryTable, OptionalColumnsWhenTheyApply) {
  PointResult swap = point("swap"), cache = point("cache"), beams = point("beams");
  swap.summary.swapped_bytes = 3 * std::pow(2.0, 30);
  cache.summary.prefix_cache.emplace();
  cache.summary.prefix_hit_rate = 0.425;
  beams.summary.sharing_saving_pct = 44.3;
  const std::string t = format_results_table({swap, cache, beams});
  EXPECT_NE(t.find("preempt  swapped    hit% shared%\n"), std::string::npos) << t;
  EXPECT_NE(t.find("    3.00       -     0.0\n"), std::string::npos) << t;  // swap: no prefix cache
  EXPECT_NE(t.find("    0.00    42.5     0.0\n"), std::string::npos) << t;
  EXPECT_NE(t.find("    0.00       -    44.3\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace pagesim::sim
