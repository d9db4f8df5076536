// GlobalFetchCounters: what one replica fetched from its cluster's global cache
// (sim/cluster/global_cache_settings.h) since the run began. Monotonic counters, kept by the
// engine on each Replica and read by the cluster summary. A plain value.
#pragma once

#include <cstdint>

namespace pagesim::sim {

struct GlobalFetchCounters {
  std::int64_t blocks = 0;                  // blocks copied in
  std::int64_t hit_tokens = 0;              // first admissions' prompt tokens they served
  std::int64_t readmission_hit_tokens = 0;  // the same for re-admissions after preemption
  double bytes = 0;                         // blocks × block size × KV bytes per token
  double seconds = 0;                       // fetch time added to the replica's iterations
  std::int64_t iterations = 0;              // iterations that fetched
};

}  // namespace pagesim::sim
