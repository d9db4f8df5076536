// LatencySamples: every value of one per-request latency over a run (end-to-end, TTFT,
// TPOT, normalized) and their exact Distribution, in memory that does not grow with the run.
// LatencySpill: the temporary file that the samples of one run share.
//
// The Distribution is that of the values in ascending order: the mean sums them in that
// order from 0 and divides by the count, p50/p90/p99 interpolate linearly between the
// closest ranks (NumPy's default), max is the last. Up to `batch_values` values are held in
// memory; when the batch fills it is sorted (sort_doubles) and appended to an anonymous
// temporary file (output/spill_file.h) as a sorted run, and distribution() merges the runs
// and the last batch into one ascending stream. The figures come from that stream exactly as
// from one sorted vector of every value — the same additions in the same order, the same
// ranks — so they do not depend on the batch size. A cluster's thousands of samples (four
// per replica) share one LatencySpill, so that they hold one descriptor, and take smaller
// batches (Metrics), so that their memory is bounded by the replicas. (Values that compare equal but differ in
// bits, -0.0 and +0.0, may come out in either order; latencies, differences of times, are
// never -0.0. NaN is not a latency.) A run shorter than one batch touches no file.
// Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "sim/metrics/summary.h"
#include "sim/output/spill_file.h"

namespace pagesim::sim {

// One run's temporary file for sorted runs of samples, made at the first spill. Borrowed by
// the LatencySamples that share it, which it must outlive. Not thread-safe.
class LatencySpill {
 public:
  SpillFile& file() {
    if (!file_) file_.emplace("latency samples");
    return *file_;
  }

 private:
  std::optional<SpillFile> file_;
};

class LatencySamples {
 public:
  // The default batch: 2^18 values (2 MiB of doubles). Runs of up to 262,144 requests touch
  // no file; longer ones hold 2 MiB a latency, whatever their length, for a merge that costs
  // about what sorting them in memory would.
  static constexpr std::size_t kBatchValues = std::size_t{1} << 18;

  // REQUIRES: batch_values >= 1. `shared`: the file to spill to (null: a file of its own).
  explicit LatencySamples(std::size_t batch_values = kBatchValues, LatencySpill* shared = nullptr);

  void add(double v) {
    batch_.push_back(v);
    if (batch_.size() == batch_values_) spill();
  }
  std::int64_t size() const {
    return static_cast<std::int64_t>(runs_.size() * batch_values_ + batch_.size());
  }
  // Sorted runs written to the temporary file so far (0: all values are in memory).
  std::size_t spilled_runs() const { return runs_.size(); }

  // The distribution of every value added (all zero when none). Leaves no values behind.
  Distribution distribution();

 private:
  void spill();
  // Hands every value, in ascending order, to `take` a block at a time. Leaves batch_ moved from.
  void merge_runs(const std::function<void(std::span<const double>)>& take);

  LatencySpill& spill_file() { return shared_ ? *shared_ : own_; }

  std::size_t batch_values_;
  std::vector<double> batch_;   // the values since the last spill, in arrival order
  LatencySpill* shared_;        // null: own_
  LatencySpill own_;
  std::vector<std::uint64_t> runs_;  // where each sorted run of batch_values_ values starts in the file
};

}  // namespace pagesim::sim
