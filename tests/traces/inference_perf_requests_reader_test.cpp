#include "traces/inference_perf_requests_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "test_util.h"
#include "traces/trace_format.h"

namespace pagesim::traces {
namespace {

using nlohmann::json;
using testing::ScratchDir;

// tests/traces/data/inference_perf_requests_small.json (inference-perf fc877d3's layout):
// five requests out of send order; one failed, one with no output token, one not streamed.
TEST(InferencePerfRequestsReader, ReadsTheFc877d3Layout) {
  const BenchmarkRequests b = read_inference_perf_requests(testing::fixture("inference_perf_requests_small.json"));
  EXPECT_EQ(b.tool, "inference-perf");
  EXPECT_EQ(b.total, 5u);
  EXPECT_EQ(b.failed, 1u);
  EXPECT_EQ(b.without_output, 1u);
  ASSERT_EQ(b.requests.size(), 3u);

  const MeasuredRequest& first = b.requests[0];  // entry 1, sent first
  EXPECT_EQ(first.source_index, 1u);
  EXPECT_EQ(first.arrival_s, 0.0);
  EXPECT_EQ(first.prompt_tokens, 580);
  EXPECT_EQ(first.output_tokens, 3);  // ignore_eos false: the client's count
  EXPECT_NEAR(first.e2e_s, 0.45, 1e-9);
  EXPECT_NEAR(first.ttft_s, 0.05, 1e-9);
  EXPECT_NEAR(first.tpot_s, (5012.45 - 5012.05) / 2, 1e-9);

  const MeasuredRequest& forced = b.requests[1];  // entry 0: ignore_eos with max_tokens 4
  EXPECT_EQ(forced.source_index, 0u);
  EXPECT_NEAR(forced.arrival_s, 0.5, 1e-9);
  EXPECT_EQ(forced.prompt_tokens, 591);
  EXPECT_EQ(forced.output_tokens, 4);  // the server generated max_tokens; the client counted 3
  EXPECT_NEAR(forced.tpot_s, (5013.10 - 5012.60) / 3, 1e-9);

  const MeasuredRequest& unary = b.requests[2];  // entry 3: no message times
  EXPECT_EQ(unary.source_index, 3u);
  EXPECT_NEAR(unary.arrival_s, 1.0, 1e-9);
  EXPECT_NEAR(unary.e2e_s, 0.4, 1e-9);
  EXPECT_TRUE(std::isnan(unary.ttft_s));
  EXPECT_TRUE(std::isnan(unary.tpot_s));
}

// inference-perf 7de5ef2 moved the counts into info.response_metrics and keeps the server's
// usage: its prompt_tokens and completion_tokens win over the client's counts.
TEST(InferencePerfRequestsReader, ReadsThe7de5ef2LayoutPreferringTheServersUsage) {
  const BenchmarkRequests b = read_inference_perf_requests(testing::fixture("inference_perf_requests_7de5ef2.json"));
  ASSERT_EQ(b.requests.size(), 2u);
  EXPECT_EQ(b.requests[0].prompt_tokens, 125);
  EXPECT_EQ(b.requests[0].output_tokens, 8);
  EXPECT_NEAR(b.requests[0].ttft_s, 0.1, 1e-9);
  EXPECT_NEAR(b.requests[0].tpot_s, 0.4 / 7, 1e-9);
  EXPECT_EQ(b.requests[1].prompt_tokens, 60);
  EXPECT_EQ(b.requests[1].output_tokens, 4);
  EXPECT_DOUBLE_EQ(b.requests[1].arrival_s, 0.25);
  EXPECT_TRUE(std::isnan(b.requests[1].ttft_s));
}

json good_entry(double start) {
  return {{"start_time", start},
          {"end_time", start + 0.5},
          {"request", "{\"max_tokens\": 3}"},
          {"response", nullptr},
          {"info", {{"input_tokens", 10}, {"output_tokens", 3}, {"output_token_times", {start + 0.1, start + 0.5}}}},
          {"error", nullptr}};
}

struct BadDoc {
  const char* name;
  std::function<void(json&)> change;
  const char* message;
};

TEST(InferencePerfRequestsReader, MalformedFilesNameTheRequestIndexAndKey) {
  const BadDoc cases[] = {
      {"no_start", [](json& d) { d[1].erase("start_time"); }, "[1]: expected a key 'start_time', found only the keys"},
      {"string_end", [](json& d) { d[0]["end_time"] = "soon"; }, "[0].end_time: expected a finite number"},
      {"end_before_start", [](json& d) { d[2]["end_time"] = 1.0; }, "[2].end_time: expected a time >= start_time = 3"},
      {"no_info", [](json& d) { d[1].erase("info"); }, "[1]: expected a key 'info'"},
      {"zero_prompt", [](json& d) { d[0]["info"]["input_tokens"] = 0; },
       "[0].info.input_tokens: expected a positive integer number of tokens, found '0'"},
      {"negative_output", [](json& d) { d[2]["info"]["output_tokens"] = -2; },
       "[2].info.output_tokens: expected a non-negative integer number of tokens, found '-2'"},
      {"times_not_array", [](json& d) { d[1]["info"]["output_token_times"] = 4; },
       "[1].info.output_token_times: expected an array, found '4'"},
      {"time_before_start", [](json& d) { d[1]["info"]["output_token_times"][0] = 0.5; },
       "[1].info.output_token_times[0]: expected a time >= start_time = 2"},
      {"bad_usage", [](json& d) {
         d[0]["info"]["response_metrics"] = {{"output_tokens", 3}, {"server_usage", {{"completion_tokens", "3"}}}};
       }, "[0].info.response_metrics.server_usage.completion_tokens: expected a non-negative integer"},
      {"bad_error", [](json& d) { d[2]["error"] = "boom"; },
       "[2].error: expected null or an object {error_type, error_msg}, found '\"boom\"'"},
      {"not_an_object", [](json& d) { d[1] = 7; }, "[1]: expected a request object"},
      {"summary", [](json& d) { d = {{"load_summary", {}}, {"successes", {}}}; },
       "found a summary report (stage_N_ or summary_lifecycle_metrics.json)"},
      {"empty", [](json& d) { d = json::array(); }, "found an empty array"},
  };
  ScratchDir dir;
  for (const BadDoc& c : cases) {
    SCOPED_TRACE(c.name);
    json d = json::array({good_entry(1.0), good_entry(2.0), good_entry(3.0)});
    c.change(d);
    const std::string path = dir.write(std::string(c.name) + ".json", d.dump(2));
    const auto e = testing::catch_trace_error([&] { read_inference_perf_requests(path); });
    ASSERT_TRUE(e);
    const std::string what = e->what();
    EXPECT_TRUE(what.starts_with(path + ": ")) << what;
    EXPECT_NE(what.find(c.message), std::string::npos) << "message: " << what << "\nwanted: " << c.message;
  }
}

TEST(InferencePerfRequestsReader, AnUnreadablePayloadFallsBackToTheClientsCount) {
  ScratchDir dir;
  json d = json::array({good_entry(0.0)});
  d[0]["request"] = "{not json";
  EXPECT_EQ(read_inference_perf_requests(dir.write("a.json", d.dump())).requests[0].output_tokens, 3);
  d[0]["request"] = "{\"max_tokens\": 9, \"ignore_eos\": \"yes\"}";
  EXPECT_EQ(read_inference_perf_requests(dir.write("b.json", d.dump())).requests[0].output_tokens, 3);
  d[0]["request"] = "{\"max_completion_tokens\": 9, \"ignore_eos\": true}";
  EXPECT_EQ(read_inference_perf_requests(dir.write("c.json", d.dump())).requests[0].output_tokens, 9);
}

TEST(InferencePerfRequestsReader, IsDetectedAndReplayedByOpenTrace) {
  const std::string path = testing::fixture("inference_perf_requests_small.json");
  EXPECT_EQ(detect_format(path), TraceFormat::kInferencePerfRequests);
  auto source = open_trace(path, testing::format_options(TraceFormat::kInferencePerfRequests));
  const auto rows = testing::drain(*source);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], (TraceRequest{1, 0.5, 591, 4, 1, 1, {}}));
  // A file of another format is not a benchmark result.
  const auto e = testing::catch_trace_error([] { read_benchmark_requests(testing::fixture("native_small.csv")); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("found a native trace"), std::string::npos) << e->what();
  // JSON lines that are not a benchmark result say what they hold, not "a mooncake trace".
  ScratchDir dir;
  const auto found = [&](const std::string& name, const std::string& text) {
    const auto err = testing::catch_trace_error([&] { read_benchmark_requests(dir.write(name, text)); });
    return err ? std::string(err->what()) : std::string("(read)");
  };
  EXPECT_NE(found("empty.jsonl", "{}\n").find("found line 1 an empty JSON object {}"), std::string::npos);
  EXPECT_NE(found("obj.jsonl", "{\"foo\": 1, \"bar\": 2}\n").find("with the fields \"bar\", \"foo\""),
            std::string::npos);
  const std::string moon = found("m.jsonl", "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 2}\n");
  EXPECT_NE(moon.find("(a mooncake trace)"), std::string::npos) << moon;
  EXPECT_NE(moon.find("expected a benchmark result"), std::string::npos) << moon;
}

}  // namespace
}  // namespace pagesim::traces
