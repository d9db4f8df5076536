// Service-level objectives: per-request TTFT and time-between-tokens targets, and the
// goodput of a run — finished requests per second that met every target set.
//
// Definitions, as the serving literature uses them:
//   TTFT  first token time - arrival (queueing and prefill included).
//   TBT   per request, by SloSettings::tbt:
//         mean  (finish - first token) / (output tokens - 1): vLLM's benchmark "TPOT"
//               (benchmarks/benchmark_serving.py, whose --goodput counts a request good
//               when it meets every SLO given) and DistServe's (Zhong et al., OSDI'24)
//               per-request TPOT SLO, the default;
//         max   the longest gap between two consecutive tokens of the request (the worst
//               stall a streaming user sees: preemptions and long prefills batched with it).
//         A request generating at most one token has no TBT and meets any TBT target.
//   goodput  requests meeting both targets / simulated time (the Summary's throughput
//            denominator), in requests per second; attainment is their share of finished
//            requests.
// SloTracker is an IterationObserver: it counts finished requests as they come. Not
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <utility>

#include "sim/core/iteration_observer.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

enum class TbtMetric { kMean, kMax };

inline constexpr std::array<std::pair<TbtMetric, std::string_view>, 2> kTbtMetricNames = {{
    {TbtMetric::kMean, "mean"},
    {TbtMetric::kMax, "max"},
}};

struct SloSettings {
  double ttft_s = 0;  // target TTFT, seconds; 0: no TTFT objective
  double tbt_s = 0;   // target time between tokens, seconds; 0: no TBT objective
  TbtMetric tbt = TbtMetric::kMean;  // which per-request TBT the target bounds
  bool enabled() const { return ttft_s > 0 || tbt_s > 0; }
};

// summary.json's "slo" object.
struct SloSummary {
  double ttft_s = 0;  // the objectives, echoed (0: none)
  double tbt_s = 0;
  std::int64_t requests_finished = 0;
  std::int64_t requests_meeting_ttft = 0;
  std::int64_t requests_meeting_tbt = 0;
  std::int64_t requests_meeting_both = 0;  // "good" requests
  double attainment = 0;                   // good / finished, in [0, 1]
  double goodput_rps = 0;                  // good / simulated seconds
};

template <>
struct RecordFields<SloSummary> {
  using S = SloSummary;
  static constexpr auto fields = std::tuple{
      Field{"ttft_s", &S::ttft_s},
      Field{"tbt_s", &S::tbt_s},
      Field{"requests_finished", &S::requests_finished},
      Field{"requests_meeting_ttft", &S::requests_meeting_ttft},
      Field{"requests_meeting_tbt", &S::requests_meeting_tbt},
      Field{"requests_meeting_both", &S::requests_meeting_both},
      Field{"attainment", &S::attainment},
      Field{"goodput_rps", &S::goodput_rps},
  };
};
static_assert(lists_every_member<SloSummary>());

class SloTracker final : public IterationObserver {
 public:
  explicit SloTracker(const SloSettings& settings) : settings_(settings) {}

  // The request's TBT under `metric` (see above); 0 when it generated at most one token.
  // REQUIRES: r finished.
  static double tbt_of(const Request& r, TbtMetric metric);

  // It reads each finished request once and counts it: it keeps no Request and no order.
  bool holds_requests() const override { return false; }
  bool reads_iterations() const override { return false; }
  bool reads_replica_order() const override { return false; }
  void on_request_finished(const Request& r) override;
  // The counts so far, with goodput over sim_time_s simulated seconds.
  SloSummary finish(double sim_time_s) const;

 private:
  SloSettings settings_;
  SloSummary counts_;
};

}  // namespace pagesim::sim
