#include "traces/vllm_bench_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/gamma_distribution.hpp>
#include <cmath>
#include <functional>
#include <numeric>
#include <queue>
#include <random>
#include <vector>

#include "traces/json_document.h"
#include "traces/seed.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

using json = JsonDocument::json;

constexpr const char* kExpected =
    "a vLLM serving benchmark result: one JSON object written by `vllm bench serve` (or benchmark_serving.py) with "
    "--save-result --save-detailed (one result: a file grown by --append-result holds one per line)";

// The recorded traffic settings (serve.py main_async(): result_json's Traffic keys).
struct Traffic {
  bool infinite_rate = true;
  double rate = 0;  // requests/s when finite
  double burstiness = 1.0;
  std::int64_t max_concurrency = 0;  // 0: none
  enum class RampUp { kNone, kLinear, kExponential } ramp_up = RampUp::kNone;
  double ramp_start = 0, ramp_end = 0;  // requests/s
};

Traffic read_traffic(const JsonDocument& doc) {
  const json& root = doc.root();
  Traffic t;
  if (const json* b = doc.find(root, "", "burstiness")) {
    t.burstiness = doc.number(*b, "burstiness", true);
    if (t.burstiness <= 0) doc.fail("burstiness", "a burstiness factor > 0", *b);
  }
  if (const json* c = doc.find(root, "", "max_concurrency")) {
    if (!c->is_number_integer() || c->get<std::int64_t>() < 1)
      doc.fail("max_concurrency", "null or a positive integer number of requests", *c);
    t.max_concurrency = c->get<std::int64_t>();
  }
  if (const json* s = doc.find(root, "", "ramp_up_strategy")) {
    if (*s == "linear") t.ramp_up = Traffic::RampUp::kLinear;
    else if (*s == "exponential") t.ramp_up = Traffic::RampUp::kExponential;
    else doc.fail("ramp_up_strategy", "null, \"linear\" or \"exponential\"", *s);
    t.ramp_start = doc.number(doc.at(root, "", "ramp_up_start_rps"), "ramp_up_start_rps", true);
    t.ramp_end = doc.number(doc.at(root, "", "ramp_up_end_rps"), "ramp_up_end_rps", true);
    if (t.ramp_start <= 0 && t.ramp_up == Traffic::RampUp::kExponential)
      doc.fail("ramp_up_start_rps", "a rate > 0 requests/s (an exponential ramp-up starts above 0)",
               root.at("ramp_up_start_rps"));
    return t;
  }
  if (!doc.find(root, "", "request_rate"))
    throw TraceError(doc.path(), 0, "key 'request_rate'",
                     "the send times (start_times) or the traffic they were drawn from (request_rate, burstiness, "
                     "max_concurrency)",
                     "neither");
  // serve.py writes "inf" for its default rate; a result dumped by other means writes Python's
  // Infinity literal. Both: every request sent at once.
  const json& rate = doc.root().at("request_rate");
  if (rate == "inf" || rate == "Infinity") return t;
  if (!rate.is_number() || !std::isfinite(rate.get<double>()) || rate.get<double>() <= 0)
    doc.fail("request_rate", "a rate > 0 requests/s, \"inf\" or Infinity", rate);
  t.infinite_rate = false;
  t.rate = rate.get<double>();
  return t;
}

// When serve.py's get_request() releases request i of n (seconds from the first delay's
// start), drawn from `seed`.
std::vector<double> dispatch_times(const Traffic& t, std::size_t n, std::uint64_t seed) {
  std::vector<double> d(n, 0.0);
  if (t.infinite_rate && t.ramp_up == Traffic::RampUp::kNone) return d;
  std::mt19937_64 engine(derive_seed(seed, SeedStream::kArrivals));
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    double rate = t.rate;
    if (t.ramp_up != Traffic::RampUp::kNone) {  // _get_current_request_rate()
      const double progress = static_cast<double>(i) / static_cast<double>(std::max<std::size_t>(n - 1, 1));
      rate = t.ramp_up == Traffic::RampUp::kLinear ? t.ramp_start + (t.ramp_end - t.ramp_start) * progress
                                                   : t.ramp_start * std::pow(t.ramp_end / t.ramp_start, progress);
    }
    // A linear ramp from 0 gives request 0 rate 0, which serve.py asserts against; it leaves at once here.
    if (rate > 0) {
      boost::random::gamma_distribution<double> gap(t.burstiness, 1.0 / (rate * t.burstiness));
      sum += gap(engine);
    }
    d[i] = sum;
  }
  if (t.ramp_up == Traffic::RampUp::kNone && sum > 0) {
    const double scale = (static_cast<double>(n) / t.rate) / sum;  // target_total_delay_s / delay_ts[-1]
    for (double& x : d) x *= scale;
  }
  return d;
}

// Send times under a FIFO limit of `limit` requests in flight, each holding its slot for
// `held[i]` seconds from its send.
std::vector<double> limit_in_flight(const std::vector<double>& dispatch, const std::vector<double>& held,
                                    std::int64_t limit) {
  std::vector<double> send(dispatch.size());
  std::priority_queue<double, std::vector<double>, std::greater<>> ends;  // of the requests in flight
  for (std::size_t i = 0; i < dispatch.size(); ++i) {
    while (!ends.empty() && ends.top() <= dispatch[i]) ends.pop();
    send[i] = dispatch[i];
    if (static_cast<std::int64_t>(ends.size()) >= limit) {
      send[i] = std::max(dispatch[i], ends.top());
      ends.pop();
    }
    ends.push(send[i] + held[i]);
  }
  return send;
}

}  // namespace

BenchmarkRequests read_vllm_bench(const std::string& path, std::uint64_t seed) {
  const JsonDocument doc(path, kExpected);
  const json& root = doc.root();
  if (!root.is_object()) doc.fail("top level", kExpected, root);
  if (!root.contains("input_lens")) {
    if (root.contains("mean_ttft_ms") || root.contains("completed"))
      throw TraceError(path, 0, "key 'input_lens'",
                       "per-request results (run the benchmark with --save-result --save-detailed)",
                       "a summary without per-request arrays");
    doc.at(root, "", "input_lens");  // throws, listing the keys found
  }
  const json& inputs = doc.array(doc.at(root, "", "input_lens"), "input_lens");
  const std::size_t n = inputs.size();
  if (n == 0) throw TraceError(path, 0, "input_lens", "at least one request", "an empty array");
  const auto length = static_cast<std::int64_t>(n);
  const json& outputs = doc.array(doc.at(root, "", "output_lens"), "output_lens", length);
  const json& ttfts = doc.array(doc.at(root, "", "ttfts"), "ttfts", length);
  const json& itls = doc.array(doc.at(root, "", "itls"), "itls", length);
  const json& errors = doc.array(doc.at(root, "", "errors"), "errors", length);
  const json* starts = doc.find(root, "", "start_times");
  if (starts) doc.array(*starts, "start_times", length);

  BenchmarkRequests b;
  b.path = path;
  b.tool = "vllm bench serve";
  b.total = n;
  std::vector<bool> kept(n, false);
  std::vector<double> held(n, 0.0);  // seconds from send to the last chunk
  std::vector<MeasuredRequest> all(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto at = [i](const char* key) { return JsonDocument::index(key, i); };
    const json& error = errors[i];
    if (!error.is_string()) doc.fail(at("errors"), "a string (\"\" for a successful request)", error);
    const json& gaps = itls[i];
    if (!gaps.is_array()) doc.fail(at("itls"), "an array of seconds between streamed chunks", gaps);
    const double ttft = doc.number(ttfts[i], at("ttfts"), true);
    double e2e = ttft;
    for (std::size_t k = 0; k < gaps.size(); ++k)
      e2e += doc.number(gaps[k], JsonDocument::index(at("itls"), k), true);
    held[i] = e2e;
    MeasuredRequest& m = all[i];
    m.source_index = i;
    if (starts) m.arrival_s = doc.number((*starts)[i], at("start_times"), false);
    if (!error.get<std::string>().empty()) {
      ++b.failed;
      continue;
    }
    m.prompt_tokens = doc.tokens(inputs[i], at("input_lens"), 1);
    m.output_tokens = doc.tokens(outputs[i], at("output_lens"), 0);
    if (m.output_tokens == 0) {
      ++b.without_output;
      continue;
    }
    m.ttft_s = ttft;
    m.e2e_s = e2e;
    if (m.output_tokens > 1) m.tpot_s = (e2e - ttft) / static_cast<double>(m.output_tokens - 1);
    kept[i] = true;
  }

  if (starts) {
    b.arrivals = "from start_times (the client's send times)";
  } else {
    const Traffic t = read_traffic(doc);
    const std::vector<double> dispatch = dispatch_times(t, n, seed);
    const std::vector<double> send =
        t.max_concurrency > 0 ? limit_in_flight(dispatch, held, t.max_concurrency) : dispatch;
    for (std::size_t i = 0; i < n; ++i) all[i].arrival_s = send[i];
    if (t.ramp_up != Traffic::RampUp::kNone)
      b.arrivals = fmt::format("drawn with seed {}: {} ramp-up {} -> {} req/s, burstiness {}", seed,
                               t.ramp_up == Traffic::RampUp::kLinear ? "linear" : "exponential", t.ramp_start,
                               t.ramp_end, t.burstiness);
    else if (t.infinite_rate)
      b.arrivals = "all at 0 s (request_rate inf)";
    else
      b.arrivals = fmt::format("drawn with seed {} at {} req/s, burstiness {} (the file records no send times)",
                               seed, t.rate, t.burstiness);
    if (t.max_concurrency > 0)
      b.arrivals += fmt::format(", then at most {} in flight: send times rebuilt from the measured latencies",
                                t.max_concurrency);
  }
  for (std::size_t i = 0; i < n; ++i)
    if (kept[i]) b.requests.push_back(all[i]);
  sort_and_shift(b.requests);
  return b;
}

}  // namespace pagesim::traces
