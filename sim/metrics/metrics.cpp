#include "sim/metrics/metrics.h"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

namespace pagesim::sim {
namespace {

// Writes one CSV line of r, then of each `extra` given (not null), to os, formatted on the
// stack (no heap allocation).
template <Record R, Record... X>
void write_csv_line(std::ostream& os, const R& r, const X*... extra) {
  fmt::memory_buffer line;
  append_csv_row(line, r);
  ((extra ? append_csv_row(line, *extra, false) : void()), ...);
  line.push_back('\n');
  os.write(line.data(), static_cast<std::streamsize>(line.size()));
}

double ratio(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

Metrics::Metrics(const MetricsSettings& settings, std::ostream* requests_csv, std::ostream* iterations_csv,
                 std::vector<const alloc::KvAllocator*> allocators, LatencySpill* latency_spill)
    : settings_(settings),
      requests_csv_(requests_csv),
      iterations_csv_(iterations_csv),
      e2e_(settings.latency_samples_in_memory, latency_spill),
      ttft_(settings.latency_samples_in_memory, latency_spill),
      tpot_(settings.latency_samples_in_memory, latency_spill),
      normalized_(settings.latency_samples_in_memory, latency_spill) {
  if (std::any_of(allocators.begin(), allocators.end(),
                  [](const alloc::KvAllocator* a) { return a && a->caches_prefixes(); })) {
    prefix_ = std::move(allocators);
    for (const alloc::KvAllocator* a : prefix_) prefix_seen_.push_back(a->stats().prefix);
  }
  const bool prefix = !prefix_.empty();
  tiers_ = std::any_of(prefix_.begin(), prefix_.end(), [](const alloc::KvAllocator* a) { return a->tiers(); });
  if (tiers_)
    for (const alloc::KvAllocator* a : prefix_) tier_seen_.push_back(tier_counters(*a));
  if (requests_csv_) *requests_csv_ << requests_csv_header(prefix) << '\n';
  if (iterations_csv_ && settings_.iterations_stride > 0)
    *iterations_csv_ << iterations_csv_header(prefix, settings_.replica_column, tiers_, settings_.layer_classes,
                                              settings_.adapter_class, settings_.speculative_classes)
                     << '\n';
}

std::string Metrics::requests_csv_header(bool prefix_cache) {
  std::string h = csv_header<RequestRecord>();
  if (prefix_cache) append_csv_header<PrefixRequestRecord>(h, false);
  return h;
}

std::string Metrics::iterations_csv_header(bool prefix_cache, bool replica_column, bool tiers, bool layer_classes,
                                           bool adapter_class, bool speculative_classes) {
  std::string h = replica_column ? csv_header<ReplicaIterationRow>() : csv_header<IterationSample>();
  if (prefix_cache) append_csv_header<PrefixIterationSample>(h, false);
  if (tiers) append_csv_header<TierIterationSample>(h, false);
  if (layer_classes) append_csv_header<LayerClassIterationSample>(h, false);
  if (adapter_class) append_csv_header<AdapterIterationSample>(h, false);
  if (speculative_classes) append_csv_header<SpeculativeClassIterationSample>(h, false);
  return h;
}

Metrics::KindCounters Metrics::tier_counters(const alloc::KvAllocator& a) {
  KindCounters k;
  if (const alloc::TierStack* t = a.tiers())
    for (std::int32_t i = 0; i < t->num_tiers(); ++i)
      (t->tier(i).settings().kind == alloc::TierKind::kCpu ? k.cpu : k.disk) = t->counters(i);
  return k;
}

IterationSums& operator+=(IterationSums& sum, const IterationSums& x) {
  sum.iterations += x.iterations;
  sum.window_iterations += x.window_iterations;
  sum.window_batched_requests += x.window_batched_requests;
  sum.window_batched_seqs += x.window_batched_seqs;
  add(sum.window, x.window);
  add(sum.window_layer, x.window_layer);
  sum.window_adapter += x.window_adapter;
  add(sum.window_speculative, x.window_speculative);
  sum.window_sharing_ratio += x.window_sharing_ratio;
  sum.sharing_samples += x.sharing_samples;
  add(sum.time_weighted, x.time_weighted);
  add(sum.time_weighted_layer, x.time_weighted_layer);
  sum.time_weighted_adapter += x.time_weighted_adapter;
  add(sum.time_weighted_speculative, x.time_weighted_speculative);
  sum.seconds += x.seconds;
  sum.preemptions += x.preemptions;
  sum.swapped_bytes += x.swapped_bytes;
  sum.window_prompt_tokens += x.window_prompt_tokens;
  sum.window_hit_tokens += x.window_hit_tokens;
  sum.tier_transfer_s += x.tier_transfer_s;
  sum.tier_added_s += x.tier_added_s;
  sum.tier_prefill_saved_s += x.tier_prefill_saved_s;
  return sum;
}

// integrate_until, record_memory and record_sums are inline: on_iteration runs them once an
// iteration.
[[gnu::always_inline]] inline void Metrics::integrate_until(double t) {
  if (!have_last_) return;
  const double a = std::max(last_time_, settings_.window_start_s);
  // A sample stands for its own iteration; the GPU's idle time after it is not its state.
  const double b = std::min({t, last_time_ + last_duration_, settings_.window_end_s});
  if (b <= a) return;
  IterationSums& m = sums_;
  add_weighted(m.time_weighted, last_pct_, b - a);
  if (settings_.layer_classes) add_weighted(m.time_weighted_layer, last_layer_, b - a);
  m.time_weighted_adapter += last_adapter_ * (b - a);
  if (settings_.speculative_classes) add_weighted(m.time_weighted_speculative, last_speculative_, b - a);
  m.seconds += b - a;
}

[[gnu::always_inline]] inline void Metrics::record_memory(const IterationSample& s, bool in_window) {
  const MemoryPct pct = memory_pct_of(s);
  integrate_until(s.start_s);
  have_last_ = true;
  last_time_ = s.start_s;
  last_duration_ = s.duration_s;
  last_pct_ = pct;
  if (settings_.layer_classes) last_layer_ = layer_class_pct(s.memory);
  if (settings_.adapter_class) last_adapter_ = adapter_class_pct(s.memory);
  if (settings_.speculative_classes) last_speculative_ = speculative_class_pct(s.memory);
  if (!in_window) return;
  IterationSums& m = sums_;
  add(m.window, pct);
  if (settings_.layer_classes) add(m.window_layer, last_layer_);  // else the sums stay 0
  if (settings_.adapter_class) m.window_adapter += last_adapter_;  // else it stays 0
  if (settings_.speculative_classes) add(m.window_speculative, last_speculative_);
  if (s.physical_blocks > 0) {
    // Without sharing (most iterations) the ratio is exactly 1, so no division.
    m.window_sharing_ratio += s.logical_blocks == s.physical_blocks
                                  ? 1.0
                                  : static_cast<double>(s.logical_blocks) / static_cast<double>(s.physical_blocks);
    ++m.sharing_samples;
  }
}

[[gnu::always_inline]] inline void Metrics::record_sums(const IterationSample& s, bool in_window) {
  IterationSums& m = sums_;
  ++m.iterations;
  record_memory(s, in_window);
  if (in_window) {
    ++m.window_iterations;
    m.window_batched_requests += static_cast<double>(s.batch_requests);
    m.window_batched_seqs += static_cast<double>(s.batch_seqs);
  }
  m.preemptions += s.preemptions;
  if (const std::int64_t swapped = s.swap_out_blocks + s.swap_in_blocks; swapped != 0)  // else it adds +0
    m.swapped_bytes += static_cast<double>(swapped) * static_cast<double>(settings_.block_size) *
                       settings_.kv_bytes_per_token;
}

void Metrics::on_iteration(const IterationSample& s, const TierCost* tier) {
  const bool in_window = s.start_s >= settings_.window_start_s && s.start_s < settings_.window_end_s;
  // With iterations_of_replicas the replicas' Metrics add up all but the rows' own counters.
  const bool sums = !settings_.iterations_of_replicas;
  // Most iterations of a long run (a fleet's every decode repeat): no prefix cache, no tiers,
  // no row. Apart so that the sums' path keeps its values in registers.
  if (prefix_.empty() && !tiers_ && !writes_rows()) {
    if (sums) record_sums(s, in_window);
    return;
  }
  PrefixIterationSample ps;
  if (!prefix_.empty()) record_prefix(in_window && sums, ps);
  TierIterationSample ts;
  if (tiers_) record_tiers(ps, sums ? tier : nullptr, tier, ts);
  if (sums) record_sums(s, in_window);
  if (writes_rows() && s.index % settings_.iterations_stride == 0) write_iteration_row(s, ps, ts);
}

void Metrics::record_prefix(bool window_sums, PrefixIterationSample& ps) {
  const auto r = static_cast<std::size_t>(replica_);
  alloc::PrefixCacheStats& seen = prefix_seen_.at(r);
  const alloc::PrefixCacheStats now = prefix_.at(r)->stats().prefix;
  ps.prefix_prompt_tokens = now.prompt_tokens - seen.prompt_tokens;
  ps.prefix_hit_tokens = now.hit_tokens - seen.hit_tokens;
  ps.readmission_hit_tokens = now.readmission_hit_tokens - seen.readmission_hit_tokens;
  ps.evicted_blocks = now.evictions - seen.evictions;
  seen = now;
  if (window_sums) {
    sums_.window_prompt_tokens += ps.prefix_prompt_tokens;
    sums_.window_hit_tokens += ps.prefix_hit_tokens;
  }
}

void Metrics::record_tiers(const PrefixIterationSample& ps, const TierCost* summed, const TierCost* tier,
                           TierIterationSample& ts) {
  const auto r = static_cast<std::size_t>(replica_);
  KindCounters& seen = tier_seen_.at(r);
  const KindCounters now = tier_counters(*prefix_.at(r));
  const double bytes_per_block = static_cast<double>(settings_.block_size) * settings_.kv_bytes_per_token;
  ts.cpu_hit_tokens = now.cpu.hit_tokens - seen.cpu.hit_tokens;
  ts.disk_hit_tokens = now.disk.hit_tokens - seen.disk.hit_tokens;
  ts.gpu_hit_tokens = ps.prefix_hit_tokens - ts.cpu_hit_tokens - ts.disk_hit_tokens;
  ts.cpu_read_bytes = static_cast<double>(now.cpu.loaded_blocks - seen.cpu.loaded_blocks) * bytes_per_block;
  ts.cpu_write_bytes = static_cast<double>(now.cpu.stored_blocks - seen.cpu.stored_blocks) * bytes_per_block;
  ts.disk_read_bytes = static_cast<double>(now.disk.loaded_blocks - seen.disk.loaded_blocks) * bytes_per_block;
  ts.disk_write_bytes = static_cast<double>(now.disk.stored_blocks - seen.disk.stored_blocks) * bytes_per_block;
  seen = now;
  if (tier) {
    ts.tier_transfer_s = tier->transfer_s;
    ts.tier_added_s = tier->added_s;
    ts.prefill_saved_s = tier->prefill_saved_s;
  }
  if (summed) {
    sums_.tier_transfer_s += summed->transfer_s;
    sums_.tier_added_s += summed->added_s;
    sums_.tier_prefill_saved_s += summed->prefill_saved_s;
  }
}

void Metrics::write_iteration_row(const IterationSample& s, const PrefixIterationSample& ps,
                                  const TierIterationSample& ts) {
  const PrefixIterationSample* extra = prefix_.empty() ? nullptr : &ps;
  const TierIterationSample* tier_extra = tiers_ ? &ts : nullptr;
  const LayerClassIterationSample ls = layer_class_sample(s.memory);
  const LayerClassIterationSample* layer_extra = settings_.layer_classes ? &ls : nullptr;
  const AdapterIterationSample as{s.memory.adapter_weights};
  const AdapterIterationSample* adapter_extra = settings_.adapter_class ? &as : nullptr;
  const SpeculativeClassIterationSample ss = speculative_class_sample(s.memory);
  const SpeculativeClassIterationSample* speculative_extra = settings_.speculative_classes ? &ss : nullptr;
  if (settings_.replica_column)
    write_csv_line(*iterations_csv_, ReplicaIterationRow{replica_, s}, extra, tier_extra, layer_extra, adapter_extra,
                   speculative_extra);
  else write_csv_line(*iterations_csv_, s, extra, tier_extra, layer_extra, adapter_extra, speculative_extra);
}

void Metrics::on_request_finished(const Request& r) {
  ++summary_.requests_finished;
  summary_.recompute_preemptions += r.recomputes;
  summary_.swap_preemptions += r.preemptions - r.recomputes;
  generated_tokens_ += static_cast<double>(r.output_tokens) * r.width();
  RequestRecord rec;
  rec.id = r.id;
  rec.arrival_s = r.arrival_s;
  rec.prompt_tokens = r.prompt_tokens;
  rec.output_tokens = r.output_tokens;
  rec.n = r.n;
  rec.beam_width = r.beam_width;
  rec.first_scheduled_s = r.first_scheduled_s;
  rec.first_token_s = r.first_token_s;
  rec.finish_s = r.finish_s;
  rec.ttft_s = r.first_token_s - r.arrival_s;
  rec.tpot_s = r.output_tokens > 1 ? (r.finish_s - r.first_token_s) / static_cast<double>(r.output_tokens - 1) : 0;
  rec.e2e_s = r.finish_s - r.arrival_s;
  rec.normalized_latency_s_per_token = r.output_tokens > 0 ? rec.e2e_s / static_cast<double>(r.output_tokens) : 0;
  rec.preemptions = r.preemptions;
  rec.recomputes = r.recomputes;
  rec.swapped_bytes = static_cast<double>(r.swapped_blocks) * static_cast<double>(settings_.block_size) *
                      settings_.kv_bytes_per_token;
  rec.cached_tokens = r.cached_tokens;
  rec.recomputed_tokens = r.recomputed_tokens;
  e2e_.add(rec.e2e_s);
  ttft_.add(rec.ttft_s);
  if (r.output_tokens > 1) tpot_.add(rec.tpot_s);
  if (r.output_tokens > 0) normalized_.add(rec.normalized_latency_s_per_token);
  const PrefixRequestRecord prefix_rec{r.readmission_cached_tokens};
  if (requests_csv_) write_csv_line(*requests_csv_, rec, prefix_.empty() ? nullptr : &prefix_rec);
}

Summary Metrics::finish(double sim_time_s, double wall_s, const IterationSums* replicas) {
  assert((replicas != nullptr) == settings_.iterations_of_replicas);
  integrate_until(sim_time_s);
  Summary& s = summary_;
  const IterationSums& m = replicas ? *replicas : sums_;
  s.iterations = m.iterations;
  s.window_iterations = m.window_iterations;
  s.preemptions = m.preemptions;
  s.swapped_bytes = m.swapped_bytes;
  const auto n = static_cast<double>(m.window_iterations);
  const double seconds = m.seconds;
  s.memory_pct = divided(m.window, n);
  s.memory_pct_time_weighted = divided(m.time_weighted, seconds);
  // A pool that ran no iteration in the window held no request then: all of it was free
  // (so that the classes sum to 100% for every pool, an idle replica's included).
  if (n <= 0) s.memory_pct.free = 100.0;
  if (seconds <= 0) s.memory_pct_time_weighted.free = 100.0;
  if (settings_.layer_classes) {
    const auto mean = [](LayerClassPct sum, double denom) {
      if (denom <= 0) return LayerClassPct{};
      return LayerClassPct{sum.out_of_window / denom, sum.recurrent_state / denom, sum.unused_layers / denom};
    };
    s.layer_classes = LayerClassSummary{mean(m.window_layer, n), mean(m.time_weighted_layer, seconds)};
  }
  if (settings_.adapter_class)
    s.adapter_weights = AdapterClassSummary{n > 0 ? m.window_adapter / n : 0,
                                            seconds > 0 ? m.time_weighted_adapter / seconds : 0};
  if (settings_.speculative_classes)
    s.speculative_classes = SpeculativeClassSummary{mean_of(m.window_speculative, n),
                                                    mean_of(m.time_weighted_speculative, seconds)};
  s.mean_batched_requests = n > 0 ? m.window_batched_requests / n : 0;
  s.mean_batched_seqs = n > 0 ? m.window_batched_seqs / n : 0;
  s.sharing_saving_pct =
      m.sharing_samples > 0 ? 100.0 * (1.0 - static_cast<double>(m.sharing_samples) / m.window_sharing_ratio) : 0;
  s.sim_time_s = sim_time_s;
  s.throughput_rps = sim_time_s > 0 ? static_cast<double>(s.requests_finished) / sim_time_s : 0;
  s.throughput_tokens_per_s = sim_time_s > 0 ? generated_tokens_ / sim_time_s : 0;
  s.normalized_latency = normalized_.distribution();
  s.normalized_latency_s_per_token = s.normalized_latency.mean;
  s.e2e_s = e2e_.distribution();
  s.ttft_s = ttft_.distribution();
  s.tpot_s = tpot_.distribution();
  if (!prefix_.empty()) {
    // The run's totals from the allocators themselves, summed over replicas: admissions
    // after the last iteration (none in practice) count too.
    alloc::PrefixCacheStats st;
    for (const alloc::KvAllocator* a : prefix_) st += a->stats().prefix;
    PrefixCacheSummary p;
    p.prompt_tokens = st.prompt_tokens;
    p.hit_tokens = st.hit_tokens;
    p.hit_rate = st.hit_rate();
    p.window_prompt_tokens = m.window_prompt_tokens;
    p.window_hit_tokens = m.window_hit_tokens;
    p.window_hit_rate = ratio(m.window_hit_tokens, m.window_prompt_tokens);
    p.readmission_hit_tokens = st.readmission_hit_tokens;
    p.hit_blocks = st.hit_blocks;
    p.miss_blocks = st.miss_blocks;
    p.evicted_blocks = st.evictions;
    s.prefix_hit_rate = p.hit_rate;
    s.prefix_cache = p;
  }
  if (tiers_) {
    const double bytes_per_block = static_cast<double>(settings_.block_size) * settings_.kv_bytes_per_token;
    TierSummary t;
    t.transfer_s = m.tier_transfer_s;
    t.added_s = m.tier_added_s;
    t.prefill_saved_s = m.tier_prefill_saved_s;
    const std::int64_t prompt_tokens = s.prefix_cache->prompt_tokens;
    auto level = [&](TierLevelSummary& out, const alloc::TierCounters& c) {
      out.hit_tokens += c.hit_tokens;
      out.readmission_hit_tokens += c.readmission_hit_tokens;
      out.read_bytes += static_cast<double>(c.loaded_blocks) * bytes_per_block;
      out.write_bytes += static_cast<double>(c.stored_blocks) * bytes_per_block;
      out.loaded_blocks += c.loaded_blocks;
      out.stored_blocks += c.stored_blocks;
      out.evicted_blocks += c.evicted_blocks;
    };
    for (const alloc::KvAllocator* a : prefix_) {
      const KindCounters k = tier_counters(*a);
      level(t.cpu, k.cpu);
      level(t.disk, k.disk);
      if (const alloc::TierStack* st = a->tiers()) t.dropped_blocks += st->dropped_blocks();
    }
    t.cpu.hit_rate = ratio(t.cpu.hit_tokens, prompt_tokens);
    t.disk.hit_rate = ratio(t.disk.hit_tokens, prompt_tokens);
    t.gpu_hit_tokens = s.prefix_cache->hit_tokens - t.cpu.hit_tokens - t.disk.hit_tokens;
    t.gpu_hit_rate = ratio(t.gpu_hit_tokens, prompt_tokens);
    s.tiers = t;
  }
  s.wall_s = wall_s;
  s.sim_seconds_per_wall_second = wall_s > 0 ? sim_time_s / wall_s : 0;
  s.iterations_per_wall_second = wall_s > 0 ? static_cast<double>(s.iterations) / wall_s : 0;
  return s;
}

}  // namespace pagesim::sim
