#include "sim/metrics/slo.h"

namespace pagesim::sim {

double SloTracker::tbt_of(const Request& r, TbtMetric metric) {
  if (r.output_tokens <= 1) return 0;
  if (metric == TbtMetric::kMax) return r.max_token_gap_s;
  return (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1);
}

void SloTracker::on_request_finished(const Request& r) {
  ++counts_.requests_finished;
  const bool ttft_ok = settings_.ttft_s <= 0 || r.first_token_s - r.arrival_s <= settings_.ttft_s;
  const bool tbt_ok = settings_.tbt_s <= 0 || tbt_of(r, settings_.tbt) <= settings_.tbt_s;
  counts_.requests_meeting_ttft += ttft_ok;
  counts_.requests_meeting_tbt += tbt_ok;
  counts_.requests_meeting_both += ttft_ok && tbt_ok;
}

SloSummary SloTracker::finish(double sim_time_s) const {
  SloSummary s = counts_;
  s.ttft_s = settings_.ttft_s;
  s.tbt_s = settings_.tbt_s;
  s.attainment = s.requests_finished > 0
                     ? static_cast<double>(s.requests_meeting_both) / static_cast<double>(s.requests_finished)
                     : 0;
  s.goodput_rps = sim_time_s > 0 ? static_cast<double>(s.requests_meeting_both) / sim_time_s : 0;
  return s;
}

}  // namespace pagesim::sim
