// ClientStreamMetrics on a scripted example worked out by hand: two requests whose tokens
// come out at known times, 2 messages per token and 2 final messages, a client latency;
// TTFT, TPOT = (last - first message) / (2N + 1), the pooled inter-token gaps with their
// zeros, NTPOT, stage membership by request id, a stage with no request, and the overlap of
// a stage still in flight when the next begins.
#include "sim/metrics/client_stream_metrics.h"

#include <gtest/gtest.h>

#include <vector>

namespace pagesim::sim {
namespace {

// Feeds `r` through the observer as the engine would: arrival (unless it already arrived),
// tokens at `times`, finish.
void play(ClientStreamMetrics& m, Request r, const std::vector<double>& times, bool arrive = true) {
  if (arrive) m.on_arrival(r);
  double previous = -1;
  for (double t : times) {
    ++r.generated;
    if (r.first_token_s < 0) r.first_token_s = t;
    r.last_token_s = t;
    m.on_token(r, t, previous);
    previous = t;
  }
  r.finish_s = r.last_token_s;
  m.on_request_finished(r);
}

Request request(std::uint64_t id, double arrival, std::int64_t prompt, std::int64_t output) {
  Request r;
  r.id = id;
  r.arrival_s = arrival;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

ClientSettings two_and_two(double latency) {
  ClientSettings s;
  s.enabled = true;
  s.stream_events_per_token = 2;
  s.stream_final_events = 2;
  s.latency_s = latency;
  return s;
}

TEST(ClientStreamMetrics, ScriptedTwoRequestsByHand) {
  ClientStreamMetrics m(two_and_two(0.25), {ClientStage{5.0, 1.0, 0, 2}, ClientStage{10.0, 2.0, 2, 3}});
  // A: arrives at 0, tokens at 1.0, 1.5, 2.5. Messages (+0.25): 1.25 x2, 1.75 x2, 2.75 x4: M = 8.
  play(m, request(0, 0.0, 10, 3), {1.0, 1.5, 2.5});
  // B: arrives at 0.5, one token at 2.0. Messages: 2.25 x4: M = 4.
  play(m, request(1, 0.5, 20, 1), {2.0});
  const nlohmann::ordered_json j = m.to_json();
  const auto& s0 = j["stages"][0];
  EXPECT_EQ(s0["stage"], 0);
  EXPECT_EQ(s0["rate_per_s"], 5.0);
  EXPECT_EQ(s0["requests_ok"], 2);
  const auto& l = s0["latency_s"];
  // request_latency = last message - arrival: 2.75 and 1.75.
  EXPECT_DOUBLE_EQ(l["request_latency"]["mean"].get<double>(), 2.25);
  EXPECT_DOUBLE_EQ(l["request_latency"]["max"].get<double>(), 2.75);
  // TTFT = first message - arrival: 1.25 and 1.75.
  EXPECT_DOUBLE_EQ(l["time_to_first_token"]["min"].get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(l["time_to_first_token"]["max"].get<double>(), 1.75);
  // TPOT = (last - first message) / (M - 1): 1.5 / 7 and 0 / 3.
  EXPECT_DOUBLE_EQ(l["time_per_output_token"]["max"].get<double>(), 1.5 / 7);
  EXPECT_EQ(l["time_per_output_token"]["min"].get<double>(), 0.0);
  // NTPOT = (end - start) / output tokens: 2.75 / 3 and 1.75.
  EXPECT_DOUBLE_EQ(l["normalized_time_per_output_token"]["min"].get<double>(), 2.75 / 3);
  EXPECT_DOUBLE_EQ(l["normalized_time_per_output_token"]["max"].get<double>(), 1.75);
  // ITL, pooled: A's 7 gaps 0, .5, 0, 1, 0, 0, 0 and B's 3 zeros: [0 x8, 0.5, 1].
  const auto& itl = l["inter_token_latency"];
  EXPECT_DOUBLE_EQ(itl["mean"].get<double>(), 0.15);
  EXPECT_EQ(itl["min"].get<double>(), 0.0);
  EXPECT_EQ(itl["p10"].get<double>(), 0.0);
  EXPECT_EQ(itl["median"].get<double>(), 0.0);          // index 4.5
  EXPECT_DOUBLE_EQ(itl["p90"].get<double>(), 0.55);     // index 8.1: 0.5 + 0.5 * 0.1
  EXPECT_DOUBLE_EQ(itl["p99"].get<double>(), 0.955);    // index 8.91
  EXPECT_EQ(itl["max"].get<double>(), 1.0);
  // (E2E - TTFT) / TPOT = M - 1 = 2N + 1 for A: (2.75 - 1.25) / (1.5 / 7) = 7.
  EXPECT_DOUBLE_EQ(s0["prompt_len"]["mean"].get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(s0["output_len"]["max"].get<double>(), 3.0);
  // Stage 1 saw no request: inference-perf's summarize() gives None.
  const auto& s1 = j["stages"][1];
  EXPECT_EQ(s1["requests_ok"], 0);
  EXPECT_TRUE(s1["latency_s"]["request_latency"].is_null());
  EXPECT_TRUE(s1["prompt_len"].is_null());
  // All stages pooled.
  EXPECT_EQ(j["all_stages"]["requests_ok"], 2);
  EXPECT_DOUBLE_EQ(j["all_stages"]["latency_s"]["inter_token_latency"]["mean"].get<double>(), 0.15);
  EXPECT_EQ(j["client"]["stream_events_per_token"], 2);
  EXPECT_TRUE(m.stage_overlaps().empty());
}

TEST(ClientStreamMetrics, OneMessagePerTokenAndNoFinalIsNotStreamableForOneToken) {
  ClientSettings s;
  s.enabled = true;
  s.stream_final_events = 0;
  ClientStreamMetrics m(s, {ClientStage{std::nullopt, std::nullopt, 0, 10}});
  play(m, request(0, 0.0, 5, 1), {0.5});        // one message: no TTFT, TPOT, ITL
  play(m, request(1, 1.0, 5, 3), {1.5, 2.0, 3.0});  // 3 messages: gaps 0.5, 1.0
  const auto j = m.to_json();
  const auto& l = j["stages"][0]["latency_s"];
  EXPECT_EQ(j["stages"][0]["requests_ok"], 2);
  EXPECT_TRUE(j["stages"][0]["rate_per_s"].is_null());
  EXPECT_DOUBLE_EQ(l["time_to_first_token"]["mean"].get<double>(), 0.5);  // request 1 only
  EXPECT_DOUBLE_EQ(l["time_per_output_token"]["mean"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(l["inter_token_latency"]["mean"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(l["request_latency"]["min"].get<double>(), 0.5);
}

TEST(ClientStreamMetrics, AStageStillInFlightWhenTheNextBeginsIsRecorded) {
  ClientStreamMetrics m(two_and_two(0), {ClientStage{1.0, 1.0, 0, 2}, ClientStage{1.0, 1.0, 2, 1}});
  Request a = request(0, 0.0, 10, 2), b = request(1, 0.5, 10, 2), c = request(2, 1.5, 10, 2);
  m.on_arrival(a);
  m.on_arrival(b);
  play(m, a, {0.2, 0.4}, false);
  m.on_arrival(c);  // b is still in flight
  ASSERT_EQ(m.stage_overlaps().size(), 1u);
  EXPECT_EQ(m.stage_overlaps()[0].stage, 0u);
  EXPECT_EQ(m.stage_overlaps()[0].in_flight, 1);
  EXPECT_EQ(m.stage_overlaps()[0].at_s, 1.5);
}

}  // namespace
}  // namespace pagesim::sim
