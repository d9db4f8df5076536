#include "traces/vllm_bench_reader.h"

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

// request_rate inf, max_concurrency 2; request 2 failed, request 4 has no output
// (tests/traces/data/vllm_bench_concurrency.json).
TEST(VllmBenchReader, RebuildsSendTimesUnderMaxConcurrencyAndLeavesOutFailures) {
  const std::string path = testing::fixture("vllm_bench_concurrency.json");
  const BenchmarkRequests b = read_vllm_bench(path, 0);
  EXPECT_EQ(b.tool, "vllm bench serve");
  EXPECT_EQ(b.total, 6u);
  EXPECT_EQ(b.failed, 1u);
  EXPECT_EQ(b.without_output, 1u);
  ASSERT_EQ(b.requests.size(), 4u);
  // Two in flight from 0 s: request 2 takes request 0's slot at 0.08 s (and fails at once),
  // request 3 the same slot at 0.08 s, request 4 request 1's at 0.14 s, request 5 request 4's
  // at 0.14 + 0.04 s.
  const double want_arrival[] = {0.0, 0.0, 0.08, 0.18};
  const std::uint64_t want_index[] = {0, 1, 3, 5};
  const std::int64_t want_prompt[] = {100, 200, 300, 80};
  const std::int64_t want_output[] = {4, 3, 2, 5};
  const double want_e2e[] = {0.08, 0.14, 0.23, 0.10};
  const double want_ttft[] = {0.05, 0.10, 0.20, 0.06};
  for (std::size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    const MeasuredRequest& m = b.requests[i];
    EXPECT_EQ(m.source_index, want_index[i]);
    EXPECT_NEAR(m.arrival_s, want_arrival[i], 1e-12);
    EXPECT_EQ(m.prompt_tokens, want_prompt[i]);
    EXPECT_EQ(m.output_tokens, want_output[i]);
    EXPECT_NEAR(m.ttft_s, want_ttft[i], 1e-12);
    EXPECT_NEAR(m.e2e_s, want_e2e[i], 1e-12);
    EXPECT_NEAR(m.tpot_s, (want_e2e[i] - want_ttft[i]) / static_cast<double>(want_output[i] - 1), 1e-12);
  }
  EXPECT_NE(describe(b).find("4 of 6 requests (1 failed, 1 without output tokens excluded)"), std::string::npos)
      << describe(b);
  EXPECT_NE(b.arrivals.find("at most 2 in flight"), std::string::npos) << b.arrivals;
}

TEST(VllmBenchReader, StartTimesGiveTheArrivalsInSendOrder) {
  const BenchmarkRequests b = read_vllm_bench(testing::fixture("vllm_bench_start_times.json"), 0);
  EXPECT_EQ(b.total, 4u);
  EXPECT_EQ(b.failed, 1u);
  ASSERT_EQ(b.requests.size(), 3u);
  EXPECT_EQ(b.requests[0].source_index, 0u);
  EXPECT_EQ(b.requests[1].source_index, 2u);  // sent before request 1
  EXPECT_EQ(b.requests[2].source_index, 1u);
  EXPECT_DOUBLE_EQ(b.requests[0].arrival_s, 0.0);
  EXPECT_NEAR(b.requests[1].arrival_s, 0.24, 1e-9);
  EXPECT_NEAR(b.requests[2].arrival_s, 0.41, 1e-9);
  EXPECT_TRUE(std::isnan(b.requests[1].tpot_s));  // one output token
  EXPECT_NEAR(b.requests[1].e2e_s, 0.09, 1e-12);
  EXPECT_NEAR(b.requests[0].tpot_s, 0.012, 1e-12);
  EXPECT_NEAR(b.requests[2].e2e_s, 0.022 + 15 * 0.011, 1e-12);
  EXPECT_EQ(b.arrivals, "from start_times (the client's send times)");
}

json rate_doc(std::size_t n, double rate, double burstiness) {
  json d = {{"request_rate", rate}, {"burstiness", burstiness}, {"max_concurrency", nullptr}};
  for (std::size_t i = 0; i < n; ++i) {
    d["input_lens"].push_back(10);
    d["output_lens"].push_back(2);
    d["ttfts"].push_back(0.01);
    d["itls"].push_back(json::array({0.01}));
    d["errors"].push_back("");
  }
  return d;
}

// Coefficient of variation of the gaps between successive arrivals.
double gap_cv(const BenchmarkRequests& b, double* mean_gap) {
  std::vector<double> gaps;
  for (std::size_t i = 1; i < b.requests.size(); ++i)
    gaps.push_back(b.requests[i].arrival_s - b.requests[i - 1].arrival_s);
  double mean = 0, var = 0;
  for (double g : gaps) mean += g / static_cast<double>(gaps.size());
  for (double g : gaps) var += (g - mean) * (g - mean) / static_cast<double>(gaps.size());
  *mean_gap = mean;
  return std::sqrt(var) / mean;
}

TEST(VllmBenchReader, WithoutSendTimesDrawsTheRecordedRateAndBurstinessFromTheSeed) {
  ScratchDir dir;
  const std::string poisson = dir.write("p.json", rate_doc(2000, 8.0, 1.0).dump());
  const std::string smooth = dir.write("s.json", rate_doc(2000, 8.0, 16.0).dump());
  const BenchmarkRequests a = read_vllm_bench(poisson, 7);
  const BenchmarkRequests again = read_vllm_bench(poisson, 7);
  const BenchmarkRequests other = read_vllm_bench(poisson, 8);
  ASSERT_EQ(a.requests.size(), 2000u);
  for (std::size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].arrival_s, again.requests[i].arrival_s);
    if (i > 0) {
      EXPECT_GE(a.requests[i].arrival_s, a.requests[i - 1].arrival_s);
    }
  }
  EXPECT_NE(a.requests[1000].arrival_s, other.requests[1000].arrival_s);
  // serve.py scales the running sum so the last request leaves at n / rate; the first leaves
  // one gap in, and the times count from it.
  EXPECT_LT(a.requests.back().arrival_s, 2000 / 8.0);
  EXPECT_GT(a.requests.back().arrival_s, 2000 / 8.0 - 2.0);
  double mean = 0;
  EXPECT_NEAR(gap_cv(a, &mean), 1.0, 0.1);  // exponential gaps
  EXPECT_NEAR(mean, 1 / 8.0, 0.002);
  EXPECT_NEAR(gap_cv(read_vllm_bench(smooth, 7), &mean), 0.25, 0.05);  // gamma: cv = 1 / sqrt(burstiness)
  EXPECT_NE(a.arrivals.find("drawn with seed 7 at 8 req/s, burstiness 1"), std::string::npos) << a.arrivals;
}

TEST(VllmBenchReader, InfiniteRateSendsEverythingAtOnce) {
  ScratchDir dir;
  json d = rate_doc(3, 1.0, 1.0);
  d["request_rate"] = "inf";
  const BenchmarkRequests b = read_vllm_bench(dir.write("inf.json", d.dump()), 0);
  ASSERT_EQ(b.requests.size(), 3u);
  for (const MeasuredRequest& m : b.requests) EXPECT_EQ(m.arrival_s, 0.0);
}

// Issue 41: Python's json writes Infinity and NaN (not JSON) for non-finite floats. An
// infinite request_rate means what "inf" does; a NaN where pagesim reads nothing (a summary
// metric) is no obstacle; one where it reads a time is refused by name.
TEST(VllmBenchReader, PythonsInfinityAndNanAreReadWhereTheyMeanSomething) {
  ScratchDir dir;
  std::string text = rate_doc(3, 1.0, 1.0).dump();
  const auto set_rate = [](std::string t, const std::string& literal) {
    const std::size_t at = t.find("\"request_rate\":") + std::string("\"request_rate\":").size();
    return t.substr(0, at) + literal + t.substr(t.find_first_of(",}", at));
  };
  text = set_rate(text, "Infinity");
  text.insert(1, "\"std_ttft_ms\": NaN, \"note\": \"NaN and Infinity in a string stay text\", ");
  const BenchmarkRequests b = read_vllm_bench(dir.write("inf.json", text), 0);
  ASSERT_EQ(b.requests.size(), 3u);
  for (const MeasuredRequest& m : b.requests) EXPECT_EQ(m.arrival_s, 0.0);
  EXPECT_EQ(b.arrivals, "all at 0 s (request_rate inf)");

  json d = rate_doc(3, 1.0, 1.0);
  std::string bad = d.dump();
  const std::size_t ttfts = bad.find("\"ttfts\":[") + std::string("\"ttfts\":[").size();
  bad = bad.substr(0, ttfts) + "Infinity" + bad.substr(bad.find_first_of(",]", ttfts));
  const auto e = testing::catch_trace_error([&] { read_vllm_bench(dir.write("bad.json", bad), 0); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("ttfts[0]: expected a finite number >= 0, found Infinity"), std::string::npos)
      << e->what();
  const auto negative = testing::catch_trace_error(
      [&] { read_vllm_bench(dir.write("neg.json", set_rate(rate_doc(3, 1.0, 1.0).dump(), "-Infinity")), 0); });
  ASSERT_TRUE(negative);
  EXPECT_NE(std::string(negative->what()).find("request_rate: expected a rate > 0 requests/s, \"inf\" or Infinity, "
                                               "found -Infinity"),
            std::string::npos)
      << negative->what();
}

TEST(VllmBenchReader, LinearRampUpRaisesTheRateRequestByRequest) {
  ScratchDir dir;
  json d = rate_doc(3000, 1.0, 1.0);
  d["request_rate"] = "inf";  // serve.py refuses a rate with a ramp-up
  d["ramp_up_strategy"] = "linear";
  d["ramp_up_start_rps"] = 1;
  d["ramp_up_end_rps"] = 20;
  const BenchmarkRequests b = read_vllm_bench(dir.write("ramp.json", d.dump()), 3);
  ASSERT_EQ(b.requests.size(), 3000u);
  const double first = b.requests[300].arrival_s - b.requests[0].arrival_s;  // rates 1 .. 2.9
  const double last = b.requests[2999].arrival_s - b.requests[2699].arrival_s;  // rates 18.1 .. 20
  EXPECT_GT(first / last, 5.0);
}

// A malformed variant of a good document: its change and a fragment of the error.
struct BadDoc {
  const char* name;
  std::function<void(json&)> change;
  const char* message;
};

TEST(VllmBenchReader, MalformedFilesNameTheKeyAndRequestIndex) {
  const BadDoc cases[] = {
      {"negative_prompt", [](json& d) { d["input_lens"][1] = -1; },
       "input_lens[1]: expected a positive integer number of tokens, found '-1'"},
      {"float_output", [](json& d) { d["output_lens"][2] = 2.5; },
       "output_lens[2]: expected a non-negative integer number of tokens, found '2.5'"},
      {"string_ttft", [](json& d) { d["ttfts"][0] = "0.1"; },
       "ttfts[0]: expected a finite number >= 0, found '\"0.1\"'"},
      {"itl_not_a_list", [](json& d) { d["itls"][2] = 0.5; },
       "itls[2]: expected an array of seconds between streamed chunks, found '0.5'"},
      {"negative_itl", [](json& d) { d["itls"][1][0] = -0.01; },
       "itls[1][0]: expected a finite number >= 0, found '-0.01'"},
      {"error_not_string", [](json& d) { d["errors"][0] = nullptr; },
       "errors[0]: expected a string (\"\" for a successful request), found null"},
      {"short_array", [](json& d) { d["ttfts"].erase(d["ttfts"].begin()); },
       "ttfts: expected an array of 3 values (one per request), found 2 values"},
      {"missing_key", [](json& d) { d.erase("itls"); }, "expected a key 'itls', found only the keys"},
      {"no_detail", [](json& d) { d = {{"completed", 3}, {"mean_ttft_ms", 12.0}}; },
       "key 'input_lens': expected per-request results (run the benchmark with --save-result --save-detailed), "
       "found a summary without per-request arrays"},
      {"no_rate", [](json& d) { d.erase("request_rate"); },
       "key 'request_rate': expected the send times (start_times) or the traffic they were drawn from"},
      {"bad_rate", [](json& d) { d["request_rate"] = 0; }, "request_rate: expected a rate > 0 requests/s, \"inf\" or Infinity"},
      {"bad_burstiness", [](json& d) { d["burstiness"] = 0; }, "burstiness: expected a burstiness factor > 0"},
      {"bad_concurrency", [](json& d) { d["max_concurrency"] = 0; },
       "max_concurrency: expected null or a positive integer number of requests, found '0'"},
      {"bad_start_time", [](json& d) { d["start_times"] = {1.0, "x", 2.0}; },
       "start_times[1]: expected a finite number, found '\"x\"'"},
      {"no_requests", [](json& d) {
         for (const char* k : {"input_lens", "output_lens", "ttfts", "itls", "errors"}) d[k] = json::array();
       }, "input_lens: expected at least one request, found an empty array"},
      {"not_an_object", [](json& d) { d = json::array({1, 2}); }, "top level: expected a vLLM serving benchmark"},
  };
  ScratchDir dir;
  for (const BadDoc& c : cases) {
    SCOPED_TRACE(c.name);
    json d = rate_doc(3, 2.0, 1.0);
    c.change(d);
    const std::string path = dir.write(std::string(c.name) + ".json", d.dump());
    const auto e = testing::catch_trace_error([&] { read_vllm_bench(path, 0); });
    ASSERT_TRUE(e);
    const std::string what = e->what();
    EXPECT_TRUE(what.starts_with(path + ": ")) << what;
    EXPECT_NE(what.find(c.message), std::string::npos) << "message: " << what << "\nwanted: " << c.message;
  }
}

TEST(VllmBenchReader, MalformedJsonAndAppendedResultsAreRefused) {
  ScratchDir dir;
  const std::string two = rate_doc(2, 1.0, 1.0).dump() + "\n" + rate_doc(2, 1.0, 1.0).dump() + "\n";
  for (const std::string& content : {std::string("{\"input_lens\": [1,"), two}) {
    const std::string path = dir.write("x.json", content);
    const auto e = testing::catch_trace_error([&] { read_vllm_bench(path, 0); });
    ASSERT_TRUE(e);
    EXPECT_NE(std::string(e->what()).find("found malformed JSON (parse error at line"), std::string::npos)
        << e->what();
  }
  const auto e = testing::catch_trace_error([&] { read_vllm_bench(dir.path("missing.json"), 0); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("expected a readable file"), std::string::npos) << e->what();
}

TEST(VllmBenchReader, ReplaysThroughOpenTraceWithTheFormatDetected) {
  EXPECT_EQ(detect_format(testing::fixture("vllm_bench_concurrency.json")), TraceFormat::kVllmBench);
  EXPECT_EQ(detect_format(testing::fixture("vllm_bench_start_times.json")), TraceFormat::kVllmBench);  // indented
  EXPECT_EQ(detect_format(testing::fixture("mooncake_small.jsonl")), TraceFormat::kMooncake);
  auto source = open_trace(testing::fixture("vllm_bench_concurrency.json"));
  const auto rows = testing::drain(*source);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2].id, 2u);
  EXPECT_EQ(rows[2].prompt_tokens, 300);
  EXPECT_EQ(rows[2].output_tokens, 2);
  EXPECT_NEAR(rows[3].arrival_s, 0.18, 1e-12);
  EXPECT_TRUE(rows[3].hash_ids.empty());
  EXPECT_NE(source->describe().find("vllm bench serve"), std::string::npos);
}

TEST(VllmBenchReader, AFileWithoutASuccessfulRequestCannotBeReplayed) {
  ScratchDir dir;
  json d = rate_doc(2, 1.0, 1.0);
  d["errors"] = {"timeout", "timeout"};
  const std::string path = dir.write("failed.json", d.dump());
  const auto e = testing::catch_trace_error([&] { open_trace(path, testing::format_options(TraceFormat::kVllmBench)); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()), path + ": expected at least one successful request with output tokens, found "
                                           "none of 2 (2 failed, 0 without output tokens)");
}

}  // namespace
}  // namespace pagesim::traces
