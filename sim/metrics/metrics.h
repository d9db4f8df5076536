// Metrics: collects what one run measures, fed by hooks from the engine.
//
// An IterationObserver of the simulation: on_arrival per request, on_iteration per
// iteration (at scheduling time) and on_request_finished per finished request; finish()
// closes the run and returns the Summary. Rows of requests.csv (RequestRecord) and
// iterations.csv (IterationSample), their columns generated from each record's field list,
// stream to the given sinks as they come (requests.csv in the order requests finish, not by
// id: sort by id for the workload's order; docs/outputs.md says so),
// so memory stays bounded by the per-request latency vectors (for exact percentiles:
// 4 doubles per request). Given an allocator that caches prefixes, it reads the allocator's
// prefix-cache counters at each iteration and adds the prefix-cache records
// (prefix_cache_records.h) to each output. The sinks and the allocator are borrowed and may
// be null. Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/tier/tier_stack.h"
#include "sim/core/iteration_observer.h"
#include "sim/core/iteration_sample.h"
#include "sim/core/request.h"
#include "sim/metrics/latency_samples.h"
#include "sim/metrics/layer_class_records.h"
#include "sim/metrics/memory_pct.h"
#include "sim/metrics/prefix_cache_records.h"
#include "sim/metrics/replica_iteration_row.h"
#include "sim/metrics/speculative_class_records.h"
#include "sim/metrics/request_record.h"
#include "sim/metrics/summary.h"
#include "sim/metrics/tier_records.h"

namespace pagesim::sim {

struct MetricsSettings {
  double window_start_s = 0;  // iterations starting in [start, end) count towards averages
  double window_end_s = std::numeric_limits<double>::infinity();
  std::int64_t iterations_stride = 1;  // write every Nth iteration to iterations.csv; 0: none
  double kv_bytes_per_token = 0;       // to turn swapped blocks into bytes
  std::int64_t block_size = 1;         // tokens per block, same purpose
  // iterations.csv opens with a `replica` column (ReplicaIterationRow): for runs of several
  // replicas, whose iterations interleave in one file. Off: the columns of one replica.
  bool replica_column = false;
  // The allocator's pool holds a heterogeneous model's KV: write the layer classes
  // (layer_class_records.h) to iterations.csv and summary.json.
  bool layer_classes = false;
  // LoRA adapters share the pool: write the adapter_weights class (adapter_records.h) to
  // iterations.csv and summary.json.
  bool adapter_class = false;
  // Speculative decoding holds proposed, lookahead and draft slots in the pool: write its four
  // classes (speculative_class_records.h) to iterations.csv and summary.json.
  bool speculative_classes = false;
  // A cluster's Metrics, beside one Metrics per replica: what it would add up over
  // iterations (IterationSums: counts, batches, memory averages, swaps, prefix and tier
  // sums) are the replicas' sums added in replica order (finish's `replicas`), so that each
  // replica's iterations are weighted by their own durations and measured in their own
  // model's bytes, whatever the interleaving. It reads iterations only to write
  // iterations.csv.
  bool iterations_of_replicas = false;
  // Values of each per-request latency held in memory before a sorted batch of them goes to
  // a temporary file (LatencySamples): the samples' memory stops growing there.
  std::size_t latency_samples_in_memory = LatencySamples::kBatchValues;
};

// What a Metrics adds up over the iterations it sees, for finish() to divide: counts, sums
// over the iterations starting in the window, integrals over time (each sample weighted by
// the part of its iteration inside the window: its duration but for the window's edges),
// and run totals. Those of several replicas add up, field by field, into a cluster's
// (operator+=).
struct IterationSums {
  std::int64_t iterations = 0;
  std::int64_t window_iterations = 0;
  double window_batched_requests = 0, window_batched_seqs = 0;
  MemoryPct window;                  // Σ of the samples' classes
  LayerClassPct window_layer;        // layer classes (MetricsSettings::layer_classes)
  double window_adapter = 0;         // adapter class (MetricsSettings::adapter_class)
  SpeculativeClassPct window_speculative;  // MetricsSettings::speculative_classes
  double window_sharing_ratio = 0;   // Σ logical / physical blocks ...
  std::int64_t sharing_samples = 0;  // ... over the samples with physical blocks
  MemoryPct time_weighted;           // Σ class × seconds
  LayerClassPct time_weighted_layer;
  double time_weighted_adapter = 0;
  SpeculativeClassPct time_weighted_speculative;
  double seconds = 0;  // Σ seconds
  std::int64_t preemptions = 0;
  double swapped_bytes = 0;
  std::int64_t window_prompt_tokens = 0, window_hit_tokens = 0;  // prefix cache, first admissions
  double tier_transfer_s = 0, tier_added_s = 0, tier_prefill_saved_s = 0;  // Σ TierCost
};
IterationSums& operator+=(IterationSums& sum, const IterationSums& x);

class Metrics final : public IterationObserver {
 public:
  // `allocators`: the allocator of each replica whose iterations this Metrics observes, by
  // replica index (one for a single replica, or for a per-replica Metrics fed on_iteration);
  // they must outlive the Metrics. Their prefix-cache counters are read if any caches
  // prefixes (then all must: one block size, one prefix cache per replica). `latency_spill`:
  // the run's file its latency samples spill to, which must outlive it (null: files of
  // their own).
  Metrics(const MetricsSettings& settings, std::ostream* requests_csv, std::ostream* iterations_csv,
          std::vector<const alloc::KvAllocator*> allocators = {}, LatencySpill* latency_spill = nullptr);

  bool holds_requests() const override { return false; }
  // With iterations_of_replicas, only to write iterations.csv, whose rows interleave replicas.
  bool reads_iterations() const override { return !settings_.iterations_of_replicas || writes_rows(); }
  bool reads_replica_order() const override { return !settings_.iterations_of_replicas || writes_rows(); }
  void on_arrival(const Request&) override { ++summary_.requests_arrived; }
  void on_iteration(const IterationSample& s, const IterationPlan& plan) override { on_iteration(s, &plan.tier); }
  void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) override {
    replica_ = replica;
    on_iteration(s, &plan.tier);
  }
  // `tier`: what the offload tiers cost the iteration (null: nothing).
  void on_iteration(const IterationSample& s, const TierCost* tier = nullptr);
  void on_request_finished(const Request& r) override;
  // Closes the run at virtual time sim_time_s. `replicas`: with iterations_of_replicas (and
  // only then), the replicas' sums() added in replica order, their runs closed.
  Summary finish(double sim_time_s, double wall_s, const IterationSums* replicas = nullptr);
  // The sums so far (those of a closed run after finish()); empty with iterations_of_replicas.
  const IterationSums& sums() const { return sums_; }

  // The CSV header lines (no newline), from RequestRecord's and IterationSample's fields
  // (after ReplicaIterationRow's `replica` with `replica_column`), followed by the
  // prefix-cache records' with `prefix_cache` (an allocator that caches prefixes), then the
  // offload-tier records' with `tiers` (tier_records.h).
  static std::string requests_csv_header(bool prefix_cache = false);
  // then the layer classes' with `layer_classes`.
  // then the adapter class's with `adapter_class`, then the speculative classes' with
  // `speculative_classes`.
  static std::string iterations_csv_header(bool prefix_cache = false, bool replica_column = false,
                                           bool tiers = false, bool layer_classes = false,
                                           bool adapter_class = false, bool speculative_classes = false);

 private:
  bool writes_rows() const { return iterations_csv_ && settings_.iterations_stride > 0; }
  // Time-weighted memory of the last sample over its iteration, up to t.
  void integrate_until(double t);
  // s's memory classes: the integral of the last sample up to it, then s's into the window sums.
  void record_memory(const IterationSample& s, bool in_window);
  // s into the run's sums (all but the prefix-cache and tier counters).
  void record_sums(const IterationSample& s, bool in_window);
  // on_iteration's rarer parts, out of its way: the prefix-cache and tier counters of the
  // iteration (into ps, ts and the window sums) and its iterations.csv row.
  // `window_sums`: add the first admissions to the window sums. `summed`: the tier cost to
  // add to the run's sums (null: none); `tier`: the row's.
  void record_prefix(bool window_sums, PrefixIterationSample& ps);
  void record_tiers(const PrefixIterationSample& ps, const TierCost* summed, const TierCost* tier,
                    TierIterationSample& ts);
  void write_iteration_row(const IterationSample& s, const PrefixIterationSample& ps, const TierIterationSample& ts);

  MetricsSettings settings_;
  std::ostream* requests_csv_;
  std::ostream* iterations_csv_;
  Summary summary_;
  std::int32_t replica_ = 0;  // of the iteration being recorded (on_replica_iteration)

  IterationSums sums_;
  bool have_last_ = false;  // the last sample, integrated up to the next one
  double last_time_ = 0;
  double last_duration_ = 0;
  MemoryPct last_pct_;

  // In memory up to settings_.latency_samples_in_memory values each.
  LatencySamples e2e_, ttft_, tpot_, normalized_;
  double generated_tokens_ = 0;

  // Prefix cache (prefix_ empty: off). Per replica, its allocator and the counters at its
  // last iteration, so that each iteration reports what its scheduling added.
  std::vector<const alloc::KvAllocator*> prefix_;
  std::vector<alloc::PrefixCacheStats> prefix_seen_;

  // Offload tiers (tiers_ false: none). Per replica, the tier counters by kind at its last
  // iteration.
  struct KindCounters {
    alloc::TierCounters cpu, disk;
  };
  static KindCounters tier_counters(const alloc::KvAllocator& a);
  bool tiers_ = false;
  std::vector<KindCounters> tier_seen_;

  // The last sample's layer classes (settings_.layer_classes) and adapter class (% of
  // capacity, settings_.adapter_class).
  LayerClassPct last_layer_;
  double last_adapter_ = 0;
  SpeculativeClassPct last_speculative_;
};

}  // namespace pagesim::sim
