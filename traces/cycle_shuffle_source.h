// CycleShuffleSource: the vLLM paper artifact's workload (generate_text_completion_requests
// in sosp-ae-astra benchmark/trace.py), step by step:
//   1. arrival times come from a process (the paper: poisson_quantum, 10 ms quanta); N is
//      the number of arrivals before duration_s (and at most max_requests);
//   2. the lengths table, already filtered to prompt + output < 2048 (load_lengths()), is
//      repeated until it has N rows and cut to N: row k of the table appears floor(N / T)
//      times, plus once more if k < N mod T (T rows in the table);
//   3. those N rows are shuffled (Fisher-Yates from the last position down, as Python's
//      random.shuffle) with an engine seeded by shuffle_seed;
//   4. request i gets arrival i and shuffled row i.
// With WorkloadRng::kPagesim these are the same steps with pagesim's generators; with
// kArtifact, also the same numbers: step 1 draws NumPy's legacy Poisson counts and step 3 is
// CPython's random.shuffle, both seeded as trace.py does (artifact_random.h). Memory: the table plus 4 bytes per request for the shuffled order (the
// arrival times are drawn twice from the same seed, to count and then to emit, rather than
// stored). Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "traces/arrival_process.h"
#include "traces/lengths_csv_reader.h"
#include "traces/request_source.h"
#include "traces/seed.h"

namespace pagesim::traces {

// Requests a CycleShuffleSource holds at most (40 MB of row indices).
inline constexpr std::uint64_t kMaxCycledRequests = 10'000'000;

class CycleShuffleSource final : public RequestSource {
 public:
  // duration_s: keep arrivals with time < duration_s (0 = no limit); max_requests: at most
  // this many (0 = no limit). rng kArtifact: arrival_seed and shuffle_seed are the
  // artifact's seed (np.random.seed and random.seed), arrival_seed < 2^32. Throws SpecError
  // if both limits are 0, if the table is empty, if the spec is invalid, or if kArtifact is
  // given another process than poisson_quantum or a seed >= 2^32.
  // REQUIRES: duration_s >= 0; table has fewer than 2^32 rows.
  CycleShuffleSource(LengthTable table, const ArrivalSpec& arrivals, std::uint64_t arrival_seed,
                     std::uint64_t shuffle_seed, double duration_s, std::uint64_t max_requests,
                     WorkloadRng rng = WorkloadRng::kPagesim);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;

  // N, the number of requests this source emits in all.
  std::uint64_t size() const { return order_.size(); }
  const LengthTable& table() const { return table_; }

 private:
  LengthTable table_;
  std::unique_ptr<ArrivalProcess> arrivals_;
  std::vector<std::uint32_t> order_;  // table row of request i
  std::uint64_t next_ = 0;
};

}  // namespace pagesim::traces
