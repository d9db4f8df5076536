#include "traces/inference_perf_requests_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <vector>

#include "traces/json_document.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

using json = JsonDocument::json;

constexpr const char* kExpected =
    "inference-perf's per-request report: a JSON array of requests (per_request_lifecycle_metrics.json, written "
    "with report.request_lifecycle.per_request: true)";

// The payload's max_tokens when it asks the server to ignore EOS (then exactly that many
// tokens are generated). The payload is the client's own text, not part of the report's
// contract: anything unexpected there means "not known".
std::optional<std::int64_t> forced_output_tokens(const json& object) {
  const auto it = object.find("request");
  if (it == object.end() || !it->is_string()) return std::nullopt;
  const json payload = json::parse(it->get<std::string>(), nullptr, /*allow_exceptions=*/false);
  if (!payload.is_object()) return std::nullopt;
  const auto ignore_eos = payload.find("ignore_eos");
  if (ignore_eos == payload.end() || *ignore_eos != true) return std::nullopt;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    const auto m = payload.find(key);
    if (m != payload.end() && m->is_number_integer() && m->get<std::int64_t>() >= 1) return m->get<std::int64_t>();
  }
  return std::nullopt;
}

}  // namespace

BenchmarkRequests read_inference_perf_requests(const std::string& path) {
  const JsonDocument doc(path, kExpected);
  const json& root = doc.root();
  if (!root.is_array()) {
    const bool summary = root.is_object() && (root.contains("successes") || root.contains("load_summary"));
    throw TraceError(path, 0, "", kExpected,
                     summary ? std::string("a summary report (stage_N_ or summary_lifecycle_metrics.json)")
                             : fmt::format("a JSON {}", root.type_name()));
  }
  if (root.empty()) throw TraceError(path, 0, "", kExpected, "an empty array");

  BenchmarkRequests b;
  b.path = path;
  b.tool = "inference-perf";
  b.arrivals = "from start_time (the client's send times)";
  b.total = root.size();
  for (std::size_t i = 0; i < root.size(); ++i) {
    const std::string at = JsonDocument::index("", i);
    const auto key = [&at](const char* k) { return JsonDocument::member(at, k); };
    const json& r = root[i];
    if (!r.is_object()) doc.fail(at, "a request object {start_time, end_time, info, error, ...}", r);
    const double start = doc.number(doc.at(r, at, "start_time"), key("start_time"), false);
    const double end = doc.number(doc.at(r, at, "end_time"), key("end_time"), false);
    if (!r.contains("error")) doc.at(r, at, "error");  // throws, listing the keys found
    if (const json* error = doc.find(r, at, "error")) {
      if (!error->is_object()) doc.fail(key("error"), "null or an object {error_type, error_msg}", *error);
      ++b.failed;
      continue;
    }
    if (end < start)
      throw TraceError(path, 0, key("end_time"), fmt::format("a time >= start_time = {}", start),
                       fmt::format("{}", end));
    const std::string info_at = key("info");
    const json& info = doc.at(r, at, "info");
    // 7de5ef2 moved the response's counts into info.response_metrics.
    const json* response = doc.find(info, info_at, "response_metrics");
    const std::string response_at = response ? JsonDocument::member(info_at, "response_metrics") : info_at;
    const json& counts = response ? *response : info;
    const json* usage = response ? doc.find(*response, response_at, "server_usage") : nullptr;
    const std::string usage_at = JsonDocument::member(response_at, "server_usage");

    MeasuredRequest m;
    m.source_index = i;
    m.arrival_s = start;
    const json* server_prompt = usage ? doc.find(*usage, usage_at, "prompt_tokens") : nullptr;
    m.prompt_tokens = server_prompt ? doc.tokens(*server_prompt, JsonDocument::member(usage_at, "prompt_tokens"), 1)
                                    : doc.tokens(doc.at(info, info_at, "input_tokens"),
                                                 JsonDocument::member(info_at, "input_tokens"), 1);
    const json* server_output = usage ? doc.find(*usage, usage_at, "completion_tokens") : nullptr;
    const std::int64_t client_output =
        doc.tokens(doc.at(counts, response_at, "output_tokens"), JsonDocument::member(response_at, "output_tokens"), 0);
    if (server_output) m.output_tokens = doc.tokens(*server_output, JsonDocument::member(usage_at, "completion_tokens"), 0);
    else m.output_tokens = forced_output_tokens(r).value_or(client_output);
    if (m.output_tokens == 0) {
      ++b.without_output;
      continue;
    }
    m.e2e_s = end - start;
    const std::string times_at = JsonDocument::member(response_at, "output_token_times");
    if (const json* times = doc.find(counts, response_at, "output_token_times")) {
      doc.array(*times, times_at);
      if (times->size() > 1) {  // streamed (reportgen/base.py: is_streamable)
        const double first = doc.number(times->front(), JsonDocument::index(times_at, 0), false);
        const double last = doc.number(times->back(), JsonDocument::index(times_at, times->size() - 1), false);
        if (first < start)
          throw TraceError(path, 0, JsonDocument::index(times_at, 0), fmt::format("a time >= start_time = {}", start),
                           fmt::format("{}", first));
        if (last < first)
          throw TraceError(path, 0, JsonDocument::index(times_at, times->size() - 1),
                           fmt::format("a time >= the first message's, {}", first), fmt::format("{}", last));
        m.ttft_s = first - start;
        if (m.output_tokens > 1) m.tpot_s = (last - first) / static_cast<double>(m.output_tokens - 1);
      }
    }
    b.requests.push_back(m);
  }
  sort_and_shift(b.requests);
  return b;
}

}  // namespace pagesim::traces
