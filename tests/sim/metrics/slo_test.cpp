// SloTracker: the per-request TBT (mean = vLLM's TPOT, or the longest gap), which requests
// meet which objective, attainment and goodput.
#include "sim/metrics/slo.h"

#include <gtest/gtest.h>

namespace pagesim::sim {
namespace {

Request finished(double arrival, double first_token, double finish, std::int64_t output, double max_gap) {
  Request r;
  r.arrival_s = arrival;
  r.first_token_s = first_token;
  r.finish_s = finish;
  r.output_tokens = output;
  r.max_token_gap_s = max_gap;
  return r;
}

TEST(Slo, TbtOfARequest) {
  const Request r = finished(0, 0.5, 2.5, 5, 1.0);  // 4 gaps over 2 s, the longest 1 s
  EXPECT_DOUBLE_EQ(SloTracker::tbt_of(r, TbtMetric::kMean), 0.5);
  EXPECT_DOUBLE_EQ(SloTracker::tbt_of(r, TbtMetric::kMax), 1.0);
  EXPECT_DOUBLE_EQ(SloTracker::tbt_of(finished(0, 1, 1, 1, 0), TbtMetric::kMean), 0);  // one token: no gap
}

TEST(Slo, CountsAttainmentAndGoodput) {
  SloSettings s;
  s.ttft_s = 1.0;
  s.tbt_s = 0.6;
  SloTracker mean(s);
  s.tbt = TbtMetric::kMax;
  SloTracker max(s);
  const Request requests[] = {
      finished(0, 0.5, 2.5, 5, 1.0),  // TTFT 0.5 ok; TBT mean 0.5 ok, max 1.0 not
      finished(1, 3.0, 3.4, 3, 0.2),  // TTFT 2.0 misses; TBT 0.2 ok
      finished(2, 2.2, 2.2, 1, 0),    // TTFT 0.2 ok; one token: meets any TBT
      finished(0, 1.0, 1.0, 0, 0),    // TTFT exactly at the target: met
  };
  for (const Request& r : requests) {
    mean.on_request_finished(r);
    max.on_request_finished(r);
  }
  const SloSummary a = mean.finish(10.0);
  EXPECT_EQ(a.requests_finished, 4);
  EXPECT_EQ(a.requests_meeting_ttft, 3);
  EXPECT_EQ(a.requests_meeting_tbt, 4);
  EXPECT_EQ(a.requests_meeting_both, 3);
  EXPECT_DOUBLE_EQ(a.attainment, 0.75);
  EXPECT_DOUBLE_EQ(a.goodput_rps, 0.3);
  EXPECT_DOUBLE_EQ(a.ttft_s, 1.0);
  const SloSummary b = max.finish(10.0);
  EXPECT_EQ(b.requests_meeting_tbt, 3);
  EXPECT_EQ(b.requests_meeting_both, 2);
  EXPECT_DOUBLE_EQ(b.goodput_rps, 0.2);
  EXPECT_DOUBLE_EQ(SloTracker(s).finish(0).goodput_rps, 0);
}

TEST(Slo, AnUnsetObjectiveIsMetByEveryone) {
  SloSettings s;
  s.tbt_s = 0.1;  // no TTFT objective
  SloTracker t(s);
  t.on_request_finished(finished(0, 100, 100.1, 3, 0.1));  // TBT 0.05
  EXPECT_EQ(t.finish(1).requests_meeting_both, 1);
}

}  // namespace
}  // namespace pagesim::sim
