// GlobalCacheSummary: summary.json's "global_cache" object of a cluster run with
// replicas.global_cache — per replica (replicas[i].global_cache) and summed over the
// replicas (cluster.global_cache). Written only with a global cache, so other runs keep
// their bytes. A plain value with its field list (record_fields.h).
//
// Hit rates are over first admissions' prompt tokens (as prefix_cache.hit_rate):
// local_hit_rate + remote_hit_rate == prefix_cache.hit_rate. A remote hit is a prompt token
// served by a block fetched from the global cache; a local one, by a block the replica held
// (GPU or its offload tiers).
#pragma once

#include <cstdint>
#include <tuple>

#include "sim/core/global_fetch.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct GlobalCacheSummary {
  std::int64_t prompt_tokens = 0;           // first admissions' prompt tokens
  std::int64_t local_hit_tokens = 0;        // of those, served by the replica's own cache
  std::int64_t remote_hit_tokens = 0;       // of those, served by fetched blocks
  double local_hit_rate = 0;                // local_hit_tokens / prompt_tokens
  double remote_hit_rate = 0;               // remote_hit_tokens / prompt_tokens
  std::int64_t readmission_remote_hit_tokens = 0;  // fetched for re-admitted requests
  std::int64_t fetched_blocks = 0;
  double fetched_bytes = 0;
  double fetch_s = 0;                       // time the fetches added to iterations
  std::int64_t fetch_iterations = 0;        // iterations that fetched

  // From a replica's counters and its prefix cache's first-admission totals.
  static GlobalCacheSummary of(const GlobalFetchCounters& f, std::int64_t prompt_tokens, std::int64_t hit_tokens) {
    GlobalCacheSummary s;
    s.prompt_tokens = prompt_tokens;
    s.remote_hit_tokens = f.hit_tokens;
    s.local_hit_tokens = hit_tokens - f.hit_tokens;
    s.readmission_remote_hit_tokens = f.readmission_hit_tokens;
    s.fetched_blocks = f.blocks;
    s.fetched_bytes = f.bytes;
    s.fetch_s = f.seconds;
    s.fetch_iterations = f.iterations;
    s.set_rates();
    return s;
  }
  // Adds another replica's totals (the rates are made again from the sums).
  GlobalCacheSummary& operator+=(const GlobalCacheSummary& o) {
    prompt_tokens += o.prompt_tokens;
    local_hit_tokens += o.local_hit_tokens;
    remote_hit_tokens += o.remote_hit_tokens;
    readmission_remote_hit_tokens += o.readmission_remote_hit_tokens;
    fetched_blocks += o.fetched_blocks;
    fetched_bytes += o.fetched_bytes;
    fetch_s += o.fetch_s;
    fetch_iterations += o.fetch_iterations;
    set_rates();
    return *this;
  }
  void set_rates() {
    const double p = static_cast<double>(prompt_tokens);
    local_hit_rate = prompt_tokens > 0 ? static_cast<double>(local_hit_tokens) / p : 0.0;
    remote_hit_rate = prompt_tokens > 0 ? static_cast<double>(remote_hit_tokens) / p : 0.0;
  }
};

template <>
struct RecordFields<GlobalCacheSummary> {
  using S = GlobalCacheSummary;
  static constexpr auto fields = std::tuple{
      Field{"prompt_tokens", &S::prompt_tokens},
      Field{"local_hit_tokens", &S::local_hit_tokens},
      Field{"remote_hit_tokens", &S::remote_hit_tokens},
      Field{"local_hit_rate", &S::local_hit_rate},
      Field{"remote_hit_rate", &S::remote_hit_rate},
      Field{"readmission_remote_hit_tokens", &S::readmission_remote_hit_tokens},
      Field{"fetched_blocks", &S::fetched_blocks},
      Field{"fetched_bytes", &S::fetched_bytes},
      Field{"fetch_s", &S::fetch_s},
      Field{"fetch_iterations", &S::fetch_iterations},
  };
};
static_assert(lists_every_member<GlobalCacheSummary>());

}  // namespace pagesim::sim
