#include "sim/metrics/client_stream_metrics.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace pagesim::sim {
namespace {

nlohmann::ordered_json summary_json(const SampleSet& s) {
  const std::optional<StatSummary> v = s.summarize();
  return v ? record_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

ClientStreamMetrics::ClientStreamMetrics(const ClientSettings& settings, std::vector<ClientStage> stages)
    : settings_(settings), stages_(std::move(stages)), acc_(stages_.size()) {
  assert(!stages_.empty());
  assert(settings_.stream_events_per_token >= 1 && settings_.stream_final_events >= 0 && settings_.latency_s >= 0);
}

std::optional<std::size_t> ClientStreamMetrics::stage_of(std::uint64_t id) const {
  // The last stage starting at or before id, if id is inside it.
  auto it = std::upper_bound(stages_.begin(), stages_.end(), id,
                             [](std::uint64_t v, const ClientStage& s) { return v < s.first_id; });
  if (it == stages_.begin()) return std::nullopt;
  --it;
  if (id - it->first_id >= it->count) return std::nullopt;
  return static_cast<std::size_t>(it - stages_.begin());
}

void ClientStreamMetrics::on_arrival(const Request& r) {
  const std::optional<std::size_t> s = stage_of(r.id);
  if (!s) return;
  if (*s > latest_stage_) {
    const Accumulator& before = acc_[*s - 1];
    if (before.arrived > before.finished) overlaps_.push_back({*s - 1, before.arrived - before.finished, r.arrival_s});
    latest_stage_ = *s;
  }
  ++acc_[*s].arrived;
}

void ClientStreamMetrics::on_token(const Request& r, double t, double previous_s) {
  if (previous_s < 0) return;  // the first token: its gaps are counted when the request finishes
  const std::optional<std::size_t> s = stage_of(r.id);
  if (!s) return;
  // The gap between the previous token's last message and this token's first, from the
  // message times as the client takes them.
  const double l = settings_.latency_s;
  acc_[*s].itl.add((t + l) - (previous_s + l));
}

void ClientStreamMetrics::on_request_finished(const Request& r) {
  const std::optional<std::size_t> s = stage_of(r.id);
  if (!s) return;
  Accumulator& a = acc_[*s];
  ++a.finished;
  const double l = settings_.latency_s;
  const std::int64_t n = r.output_tokens;  // every one generated: the request finished
  const std::int64_t e = settings_.stream_events_per_token, f = settings_.stream_final_events;
  const std::int64_t messages = e * n + f;
  const double start = r.arrival_s;
  const double first = r.first_token_s + l, last = r.last_token_s + l;
  const double end = last;  // the final messages come with the last token
  a.request_latency.add(end - start);
  a.ntpot.add(n > 0 ? (end - start) / static_cast<double>(n) : 0.0);
  if (messages > 1) {  // "streamable" (reportgen/base.py:279)
    a.ttft.add(first - start);
    a.tpot.add((last - first) / static_cast<double>(messages - 1));
    // The gaps between messages of one instant: e - 1 per token and f after the last (the
    // gaps between tokens came through on_token).
    a.itl.add_zeros(n > 0 ? n * (e - 1) + f : f - 1);
  }
  a.prompt_len.add(static_cast<double>(r.prompt_tokens));
  a.output_len.add(static_cast<double>(n));
  if (a.ok == 0) {
    a.min_start = a.max_start = start;
    a.max_end = end;
  }
  a.min_start = std::min(a.min_start, start);
  a.max_start = std::max(a.max_start, start);
  a.max_end = std::max(a.max_end, end);
  a.input_tokens += static_cast<double>(r.prompt_tokens);
  a.output_tokens += static_cast<double>(n);
  ++a.ok;
}

void ClientStreamMetrics::Accumulator::merge(const Accumulator& o) {
  for (auto [mine, theirs] : {std::pair{&request_latency, &o.request_latency}, std::pair{&ttft, &o.ttft},
                              std::pair{&tpot, &o.tpot}, std::pair{&itl, &o.itl}, std::pair{&ntpot, &o.ntpot},
                              std::pair{&prompt_len, &o.prompt_len}, std::pair{&output_len, &o.output_len}})
    mine->merge(*theirs);
  if (o.ok > 0) {
    min_start = ok > 0 ? std::min(min_start, o.min_start) : o.min_start;
    max_start = ok > 0 ? std::max(max_start, o.max_start) : o.max_start;
    max_end = ok > 0 ? std::max(max_end, o.max_end) : o.max_end;
  }
  ok += o.ok;
  arrived += o.arrived;
  finished += o.finished;
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
}

void ClientStreamMetrics::stage_json(const Accumulator& a, nlohmann::ordered_json& j) {
  j["requests_ok"] = a.ok;
  // load_summary's achieved_rate and the throughput (reportgen/base.py:239-259, 318-341),
  // over the finished requests (inference-perf: all sent; they are the same here).
  const double send_duration = a.max_start - a.min_start;
  const double total_time = a.max_end - a.min_start;
  const double ok = static_cast<double>(a.ok);
  j["achieved_rate_per_s"] = send_duration > 0 ? ok / send_duration : 0.0;
  j["prompt_len"] = summary_json(a.prompt_len);
  j["output_len"] = summary_json(a.output_len);
  nlohmann::ordered_json t;
  t["input_tokens_per_sec"] = total_time > 0 ? a.input_tokens / total_time : 0.0;
  t["output_tokens_per_sec"] = total_time > 0 ? a.output_tokens / total_time : 0.0;
  t["total_tokens_per_sec"] = total_time > 0 ? (a.input_tokens + a.output_tokens) / total_time : 0.0;
  t["requests_per_sec"] = total_time > 0 ? ok / total_time : 0.0;
  j["throughput"] = t;
  nlohmann::ordered_json l;
  l["request_latency"] = summary_json(a.request_latency);
  l["normalized_time_per_output_token"] = summary_json(a.ntpot);
  l["time_per_output_token"] = summary_json(a.tpot);
  l["time_to_first_token"] = summary_json(a.ttft);
  l["inter_token_latency"] = summary_json(a.itl);
  j["latency_s"] = l;
}

nlohmann::ordered_json ClientStreamMetrics::to_json() const {
  nlohmann::ordered_json j;
  nlohmann::ordered_json c;
  c["kind"] = "inference_perf";
  c["stream_events_per_token"] = settings_.stream_events_per_token;
  c["stream_final_events"] = settings_.stream_final_events;
  c["latency_s"] = settings_.latency_s;
  j["client"] = c;
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  Accumulator all;
  for (std::size_t k = 0; k < stages_.size(); ++k) {
    nlohmann::ordered_json s;
    s["stage"] = k;
    s["rate_per_s"] = stages_[k].rate_per_s ? nlohmann::ordered_json(*stages_[k].rate_per_s) : nullptr;
    s["duration_s"] = stages_[k].duration_s ? nlohmann::ordered_json(*stages_[k].duration_s) : nullptr;
    stage_json(acc_[k], s);
    stages.push_back(std::move(s));
    all.merge(acc_[k]);
  }
  j["stages"] = std::move(stages);
  nlohmann::ordered_json pooled;
  stage_json(all, pooled);
  j["all_stages"] = std::move(pooled);
  return j;
}

}  // namespace pagesim::sim
