#include "traces/cycle_shuffle_source.h"

#include <fmt/format.h>

#include <boost/random/uniform_int_distribution.hpp>
#include <cassert>
#include <limits>
#include <random>
#include <utility>

#include "traces/artifact_random.h"
#include "traces/trace_error.h"

namespace pagesim::traces {

CycleShuffleSource::CycleShuffleSource(LengthTable table, const ArrivalSpec& arrivals,
                                       std::uint64_t arrival_seed, std::uint64_t shuffle_seed,
                                       double duration_s, std::uint64_t max_requests,
                                       WorkloadRng rng)
    : table_(std::move(table)) {
  assert(duration_s >= 0.0);
  assert(table_.rows.size() < std::numeric_limits<std::uint32_t>::max());
  if (duration_s == 0.0 && max_requests == 0) {
    throw SpecError("duration_s", "a positive duration or max_requests > 0 (the cycled lengths "
                    "need a request count)", "neither");
  }
  if (table_.rows.empty()) {
    throw SpecError("lengths.path", "a lengths file with at least one row kept",
                    fmt::format("no rows in '{}' ({} read)", table_.path, table_.rows_read));
  }
  const bool artifact = rng == WorkloadRng::kArtifact;
  const auto make_arrivals = [&] {
    return artifact ? make_artifact_arrival_process(arrivals, arrival_seed)
                    : make_arrival_process(arrivals, arrival_seed);
  };
  // 1. Count the arrivals; the same seed replays the same times in next(). The cycled table
  // holds a row index per request, so the count is bounded (and counting stops there).
  if (max_requests > kMaxCycledRequests)
    throw SpecError("max_requests",
                    fmt::format("at most {} requests (cycle_shuffle keeps a row index per request; "
                                "lengths.kind empirical streams any number)",
                                kMaxCycledRequests),
                    std::to_string(max_requests));
  std::uint64_t n = 0;
  {
    auto counter = make_arrivals();
    while (max_requests == 0 || n < max_requests) {
      if (duration_s > 0.0 && counter->next() >= duration_s) break;
      if (n == kMaxCycledRequests)
        throw SpecError("duration_s",
                        fmt::format("a duration holding at most {} arrivals (cycle_shuffle keeps a row index per "
                                    "request), or max_requests",
                                    kMaxCycledRequests),
                        fmt::format("{} s, with more", duration_s));
      ++n;
    }
  }
  // 2. Cycle the table to n rows.
  const auto rows = static_cast<std::uint32_t>(table_.rows.size());
  order_.resize(n);
  for (std::uint64_t i = 0; i < n; ++i) order_[i] = static_cast<std::uint32_t>(i % rows);
  // 3. Shuffle.
  if (artifact) {
    CpythonRandom(shuffle_seed).shuffle(order_);
  } else {
    std::mt19937_64 engine(shuffle_seed);
    for (std::uint64_t i = n; i > 1; --i) {
      boost::random::uniform_int_distribution<std::uint64_t> pick(0, i - 1);
      std::swap(order_[i - 1], order_[pick(engine)]);
    }
  }
  arrivals_ = make_arrivals();
}

std::optional<TraceRequest> CycleShuffleSource::next() {
  if (next_ == order_.size()) return std::nullopt;
  TraceRequest r;
  r.id = next_;
  r.arrival_s = arrivals_->next();
  const LengthRow& row = table_.rows[order_[next_]];
  r.prompt_tokens = row.prompt_tokens;
  r.output_tokens = row.output_tokens;
  ++next_;
  // The next request's row is a random one of the table (a cache miss once the table
  // outgrows the caches, or the run's state evicts it): asked for now, read a request later.
  if (next_ < order_.size()) __builtin_prefetch(&table_.rows[order_[next_]]);
  return r;
}

std::string CycleShuffleSource::describe() const {
  return fmt::format("cycled and shuffled rows of '{}' ({} of {} rows kept), {} requests, "
                     "arrivals {}",
                     table_.path, table_.rows.size(), table_.rows_read, order_.size(),
                     arrivals_->describe());
}

}  // namespace pagesim::traces
