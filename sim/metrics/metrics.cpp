#include "sim/metrics/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace pagesim::sim {
namespace {

// Linear interpolation between closest ranks (numpy's default). REQUIRES: sorted, non-empty.
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

Distribution distribution(std::vector<double>& v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  d.p50 = quantile(v, 0.50);
  d.p90 = quantile(v, 0.90);
  d.p99 = quantile(v, 0.99);
  d.max = v.back();
  return d;
}

MemoryPct to_pct(const double (&a)[7], double denom) {
  MemoryPct m;
  if (denom <= 0) return m;
  m.token_states = a[0] / denom;
  m.reserved = a[1] / denom;
  m.over_reserved = a[2] / denom;
  m.rounding = a[3] / denom;
  m.free = a[4] / denom;
  m.unusable_free = a[5] / denom;
  m.cached_free = a[6] / denom;
  return m;
}

}  // namespace

Metrics::Metrics(const MetricsSettings& settings, std::ostream* requests_csv, std::ostream* iterations_csv)
    : settings_(settings), requests_csv_(requests_csv), iterations_csv_(iterations_csv) {
  if (requests_csv_) *requests_csv_ << requests_csv_header() << '\n';
  if (iterations_csv_ && settings_.iterations_stride > 0) *iterations_csv_ << iterations_csv_header() << '\n';
}

const char* Metrics::requests_csv_header() {
  return "id,arrival_s,prompt_tokens,output_tokens,n,beam_width,first_scheduled_s,first_token_s,finish_s,"
         "ttft_s,tpot_s,e2e_s,normalized_latency_s_per_token,preemptions,recomputes,swapped_bytes,"
         "cached_tokens,recomputed_tokens";
}

const char* Metrics::iterations_csv_header() {
  return "index,start_s,duration_s,batch_requests,batch_seqs,prefill_tokens,decode_tokens,waiting,running,"
         "swapped,token_states,reserved,over_reserved,rounding,free,cached_free,unusable_free,logical_blocks,"
         "physical_blocks,swap_out_blocks,swap_in_blocks,preemptions";
}

void Metrics::integrate_until(double t) {
  if (!have_last_) return;
  const double a = std::max(last_time_, settings_.window_start_s);
  // A sample stands for its own iteration; the GPU's idle time after it is not its state.
  const double b = std::min({t, last_time_ + last_duration_, settings_.window_end_s});
  if (b <= a) return;
  for (int i = 0; i < 7; ++i) tw_pct_[i] += last_pct_[i] * (b - a);
  tw_seconds_ += b - a;
}

void Metrics::on_iteration(const IterationSample& s) {
  ++summary_.iterations;
  const alloc::MemoryBreakdown& m = s.memory;
  const double cap = static_cast<double>(m.total());
  const double pct[7] = {100.0 * static_cast<double>(m.token_states) / cap,
                         100.0 * static_cast<double>(m.reserved) / cap,
                         100.0 * static_cast<double>(m.over_reserved) / cap,
                         100.0 * static_cast<double>(m.rounding) / cap,
                         100.0 * static_cast<double>(m.free) / cap,
                         100.0 * static_cast<double>(s.unusable_free) / cap,
                         100.0 * static_cast<double>(m.cached_free) / cap};
  integrate_until(s.start_s);
  have_last_ = true;
  last_time_ = s.start_s;
  last_duration_ = s.duration_s;
  std::copy(std::begin(pct), std::end(pct), last_pct_);

  if (s.start_s >= settings_.window_start_s && s.start_s < settings_.window_end_s) {
    ++summary_.window_iterations;
    for (int i = 0; i < 7; ++i) sum_pct_[i] += pct[i];
    sum_batched_requests_ += static_cast<double>(s.batch_requests);
    sum_batched_seqs_ += static_cast<double>(s.batch_seqs);
    if (s.physical_blocks > 0) {
      sum_sharing_ratio_ += static_cast<double>(s.logical_blocks) / static_cast<double>(s.physical_blocks);
      ++sharing_samples_;
    }
  }
  summary_.preemptions += s.preemptions;
  summary_.swapped_bytes += static_cast<double>(s.swap_out_blocks + s.swap_in_blocks) *
                            static_cast<double>(settings_.block_size) * settings_.kv_bytes_per_token;

  if (iterations_csv_ && settings_.iterations_stride > 0 && s.index % settings_.iterations_stride == 0) {
    fmt::print(*iterations_csv_, "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.index,
               s.start_s, s.duration_s, s.batch_requests, s.batch_seqs, s.prefill_tokens, s.decode_tokens, s.waiting,
               s.running, s.swapped, m.token_states, m.reserved, m.over_reserved, m.rounding, m.free, m.cached_free,
               s.unusable_free, s.logical_blocks, s.physical_blocks, s.swap_out_blocks, s.swap_in_blocks,
               s.preemptions);
  }
}

void Metrics::on_request_finished(const Request& r) {
  ++summary_.requests_finished;
  summary_.recompute_preemptions += r.recomputes;
  summary_.swap_preemptions += r.preemptions - r.recomputes;
  generated_tokens_ += static_cast<double>(r.output_tokens) * r.width();
  const double e2e = r.finish_s - r.arrival_s;
  const double ttft = r.first_token_s - r.arrival_s;
  const double tpot = r.output_tokens > 1 ? (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1) : 0;
  const double norm = r.output_tokens > 0 ? e2e / static_cast<double>(r.output_tokens) : 0;
  e2e_.push_back(e2e);
  ttft_.push_back(ttft);
  if (r.output_tokens > 1) tpot_.push_back(tpot);
  if (r.output_tokens > 0) normalized_.push_back(norm);
  if (requests_csv_) {
    const double swapped = static_cast<double>(r.swapped_blocks) * static_cast<double>(settings_.block_size) *
                           settings_.kv_bytes_per_token;
    fmt::print(*requests_csv_, "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.id, r.arrival_s,
               r.prompt_tokens, r.output_tokens, r.n, r.beam_width, r.first_scheduled_s, r.first_token_s, r.finish_s,
               ttft, tpot, e2e, norm, r.preemptions, r.recomputes, swapped, r.cached_tokens, r.recomputed_tokens);
  }
}

Summary Metrics::finish(double sim_time_s, double wall_s, double prefix_hit_rate) {
  integrate_until(sim_time_s);
  Summary& s = summary_;
  const auto n = static_cast<double>(s.window_iterations);
  s.memory_pct = to_pct(sum_pct_, n);
  s.memory_pct_time_weighted = to_pct(tw_pct_, tw_seconds_);
  s.mean_batched_requests = n > 0 ? sum_batched_requests_ / n : 0;
  s.mean_batched_seqs = n > 0 ? sum_batched_seqs_ / n : 0;
  s.sharing_saving_pct =
      sharing_samples_ > 0 ? 100.0 * (1.0 - static_cast<double>(sharing_samples_) / sum_sharing_ratio_) : 0;
  s.sim_time_s = sim_time_s;
  s.throughput_rps = sim_time_s > 0 ? static_cast<double>(s.requests_finished) / sim_time_s : 0;
  s.throughput_tokens_per_s = sim_time_s > 0 ? generated_tokens_ / sim_time_s : 0;
  s.normalized_latency = distribution(normalized_);
  s.normalized_latency_s_per_token = s.normalized_latency.mean;
  s.e2e_s = distribution(e2e_);
  s.ttft_s = distribution(ttft_);
  s.tpot_s = distribution(tpot_);
  s.prefix_hit_rate = prefix_hit_rate;
  s.wall_s = wall_s;
  s.sim_seconds_per_wall_second = wall_s > 0 ? sim_time_s / wall_s : 0;
  s.iterations_per_wall_second = wall_s > 0 ? static_cast<double>(s.iterations) / wall_s : 0;
  return s;
}

}  // namespace pagesim::sim
