// Metrics: collects what one run measures, fed by hooks from the engine.
//
// An IterationObserver of the simulation: on_arrival per request, on_iteration per
// iteration (at scheduling time) and on_request_finished per finished request; finish()
// closes the run and returns the Summary. Rows of requests.csv (RequestRecord) and
// iterations.csv (IterationSample), their columns generated from each record's field list,
// stream to the given sinks as they come,
// so memory stays bounded by the per-request latency vectors (for exact percentiles:
// 4 doubles per request). The sinks are borrowed and may be null. Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "sim/core/iteration_observer.h"
#include "sim/core/iteration_sample.h"
#include "sim/core/request.h"
#include "sim/metrics/memory_pct.h"
#include "sim/metrics/replica_iteration_row.h"
#include "sim/metrics/request_record.h"
#include "sim/metrics/summary.h"

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
};

class Metrics final : public IterationObserver {
 public:
  Metrics(const MetricsSettings& settings, std::ostream* requests_csv, std::ostream* iterations_csv);

  void on_arrival(const Request&) override { ++summary_.requests_arrived; }
  void on_iteration(const IterationSample& s, const IterationPlan&) override { on_iteration(s); }
  void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan&) override {
    replica_ = replica;
    on_iteration(s);
  }
  void on_iteration(const IterationSample& s);
  void on_request_finished(const Request& r) override;
  // Closes the run at virtual time sim_time_s. prefix_hit_rate comes from the allocator.
  Summary finish(double sim_time_s, double wall_s, double prefix_hit_rate);

  // The CSV header lines (no newline), from RequestRecord's and IterationSample's fields.
  static std::string requests_csv_header() { return csv_header<RequestRecord>(); }
  static std::string iterations_csv_header() { return csv_header<IterationSample>(); }
  static std::string replica_iterations_csv_header() { return csv_header<ReplicaIterationRow>(); }

 private:
  // Time-weighted memory of the last sample over its iteration, up to t.
  void integrate_until(double t);

  MetricsSettings settings_;
  std::ostream* requests_csv_;
  std::ostream* iterations_csv_;
  Summary summary_;
  std::int32_t replica_ = 0;  // of the iteration being recorded (on_replica_iteration)

  // Window sums over iterations (the paper's per-iteration average).
  MemoryPct sum_pct_;
  double sum_batched_requests_ = 0, sum_batched_seqs_ = 0;
  double sum_sharing_ratio_ = 0;
  std::int64_t sharing_samples_ = 0;
  // Time-weighted integrals of the last sample's classes.
  MemoryPct tw_pct_;
  double tw_seconds_ = 0;
  bool have_last_ = false;
  double last_time_ = 0;
  double last_duration_ = 0;
  MemoryPct last_pct_;

  std::vector<double> e2e_, ttft_, tpot_, normalized_;
  double generated_tokens_ = 0;
};

}  // namespace pagesim::sim
