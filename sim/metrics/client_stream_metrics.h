// ClientStreamMetrics: the latencies a streaming load generator measures, per load stage and
// over all stages, as inference-perf (kubernetes-sigs/inference-perf, commit fc877d3)
// defines them; written to client_metrics.json. An IterationObserver fed by the engine's
// token hook.
//
// The client model. A request starts at its arrival (inference-perf: just before the POST,
// client/modelserver/openai_client.py:172). The engine emits all tokens of an iteration at
// its end; the client sees, per token, `stream_events_per_token` SSE messages at that time,
// then `stream_final_events` more at the last token's time (the usage chunk of
// stream_options.include_usage and "data: [DONE]", apis/completion.py:48), every message
// `latency_s` later (HTTP, detokenization, network: a fitted constant). inference-perf takes
// one timestamp per "\n\n"-separated message, [DONE] included (apis/completion.py:58-67), and
// the request ends after the last one (openai_client.py:175-183). From those message times
// (reportgen/base.py:271-298, summarize at :39-50):
//   request_latency   end - start
//   time_to_first_token   first message - start           } only for requests with more
//   time_per_output_token (last - first message) / (M - 1) } than one message (M: messages)
//   inter_token_latency   every gap between consecutive messages, all requests pooled
//   normalized_time_per_output_token   (end - start) / output tokens (0 without any)
// and prompt_len, output_len: the request's prompt tokens and generated tokens (inference-perf
// counts both by re-tokenizing text, apis/completion.py:79-80; here the simulated counts).
// Each is summarised as np.mean, np.min, np.percentile 1, 10, 50, 90, 99 and np.max
// (numpy_stats.h). Only finished requests count (inference-perf summarises successes); in a
// completed simulation every request that arrived has finished.
//
// Stages: request ids [first_id, first_id + count) form a stage (the inference_perf workload's
// ids, traces::inference_perf_stages()). When a stage's first request arrives while requests
// of the stage before are still in flight, stage_overlaps() records it: inference-perf
// would have waited for them (loadgen/load_generator.py:339).
// Memory: the non-zero gaps between tokens (one double per token) and six doubles per
// finished request. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/iteration_observer.h"
#include "sim/metrics/numpy_stats.h"

namespace pagesim::sim {

// Which client's definitions: inference-perf's (the only one so far).
enum class ClientKind { kInferencePerf };

inline constexpr std::array<std::pair<ClientKind, std::string_view>, 1> kClientKindNames = {{
    {ClientKind::kInferencePerf, "inference_perf"},
}};

// Bound on the message counts (a client sees a handful per token).
inline constexpr std::int64_t kMaxStreamEvents = 1'000'000;

// The config's `client` section.
struct ClientSettings {
  bool enabled = false;  // the section is given: client_metrics.json is written
  ClientKind kind = ClientKind::kInferencePerf;
  // Messages the client receives per generated token, in [1, kMaxStreamEvents], all at the token's time. vLLM's
  // OpenAI server sends 1; the measured runs show 2 ((E2E - TTFT) / TPOT = 2 * output + 1).
  std::int64_t stream_events_per_token = 1;
  // Messages after the last token, at its time, in [0, kMaxStreamEvents]: the usage chunk and [DONE] (2).
  std::int64_t stream_final_events = 2;
  // Seconds added to every message time (not to the start), finite, >= 0: client-side and network
  // time a real client sees and the engine does not simulate.
  double latency_s = 0;
};

// A load stage as the metrics see it.
struct ClientStage {
  std::optional<double> rate_per_s;  // as configured (none for workloads without stages)
  std::optional<double> duration_s;
  std::uint64_t first_id = 0;        // its requests' ids: [first_id, first_id + count)
  std::uint64_t count = 0;
};

// Stage `stage` still had `in_flight` requests when stage + 1's first request arrived at
// `at_s`.
struct StageOverlap {
  std::size_t stage = 0;
  std::int64_t in_flight = 0;
  double at_s = 0;
};

class ClientStreamMetrics final : public IterationObserver {
 public:
  // REQUIRES: stages non-empty, in id order, not overlapping; settings within their ranges
  // (the config checks them).
  ClientStreamMetrics(const ClientSettings& settings, std::vector<ClientStage> stages);

  bool holds_requests() const override { return false; }
  void on_arrival(const Request& r) override;
  void on_token(const Request& r, double t, double previous_s) override;
  void on_request_finished(const Request& r) override;

  const std::vector<StageOverlap>& stage_overlaps() const { return overlaps_; }

  // client_metrics.json: {"client": settings, "stages": [...], "all_stages": {...}}; each
  // stage {"stage", "rate_per_s", "duration_s", "requests_ok", "achieved_rate_per_s",
  // "prompt_len", "output_len", "throughput", "latency_s": {the five distributions}}, a
  // distribution null when it holds no value (inference-perf's summarize() gives None).
  nlohmann::ordered_json to_json() const;

 private:
  struct Accumulator {
    SampleSet request_latency, ttft, tpot, itl, ntpot, prompt_len, output_len;
    std::int64_t ok = 0;
    std::int64_t arrived = 0, finished = 0;  // for the in-flight count
    double min_start = 0, max_start = 0, max_end = 0;  // of finished requests
    double input_tokens = 0, output_tokens = 0;
    void merge(const Accumulator& o);
  };
  // The stage of request `id`, or nullopt when no stage holds it.
  std::optional<std::size_t> stage_of(std::uint64_t id) const;
  // Adds a's requests_ok, achieved_rate_per_s, prompt_len, ..., latency_s to `j`.
  static void stage_json(const Accumulator& a, nlohmann::ordered_json& j);

  ClientSettings settings_;
  std::vector<ClientStage> stages_;
  std::vector<Accumulator> acc_;
  std::vector<StageOverlap> overlaps_;
  std::size_t latest_stage_ = 0;  // the stage of the latest arrival
};

}  // namespace pagesim::sim
