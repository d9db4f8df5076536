// Cluster summary: what summary.json adds for a run of several replicas — "cluster" (totals
// and load balance) and "replicas" (each replica's own measures).
//
//   cluster.replicas, .router, .kv_slots (Σ of the replicas' pools)
//   cluster.memory_slots_time_weighted.<class>  Σ over replicas of the time-weighted mean
//       slots in that class (memory_pct_time_weighted × kv_slots / 100): memory classes summed
//   cluster.memory_pct_time_weighted.<class>    the same as a % of cluster.kv_slots
//       The classes are memory_pct_time_weighted's, then, for a layer-group model, its
//       layer_classes (out_of_window, recurrent_state, unused_layers): the partitioning ones
//       sum to 100% (a replica that ran no iteration counts as all free)
//   cluster.load_balance.{requests,tokens}.{max,mean,max_over_mean}
//       requests routed to each replica and their prompt + output tokens: max over
//       replicas, mean, and max / mean (1 = perfectly even; N = all on one of N replicas)
//       Disaggregated prefill/decode: over the prefill replicas only (arrivals are routed to
//       them alone; a decode replica's load is its kv_transfers_in)
//   replicas[i]: index, allocator, scheduler, cost_model, kv_slots, requests_routed,
//       tokens_routed, (disaggregated only: role "prefill" or "decode", kv_transfers_in:
//       requests whose KV it received), then the Summary's fields over that replica's iterations and the
//       requests routed to it (host timings left out: they are the run's), and, with a
//       global cache, global_cache (GlobalCacheSummary, global_cache_records.h)
//   cluster.global_cache: the replicas' global_cache summed (with a global cache only)
// Pure functions of their inputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/global_fetch.h"
#include "sim/metrics/summary.h"

namespace pagesim::sim {

struct ReplicaResult {
  std::int32_t index = 0;
  std::string allocator, scheduler, cost_model;  // as summary.json names them
  std::int64_t kv_slots = 0;
  std::int64_t requests_routed = 0;
  std::int64_t tokens_routed = 0;
  std::string role;                  // "prefill" / "decode"; empty: co-located (not written)
  std::int64_t kv_transfers_in = 0;  // disaggregated: hand-offs received
  GlobalFetchCounters global_fetch;  // global cache: what it fetched
  Summary summary;  // its own Metrics
};

struct ClusterJson {
  nlohmann::ordered_json cluster;   // summary.json's "cluster"
  nlohmann::ordered_json replicas;  // summary.json's "replicas" (an array)
};

// REQUIRES: replicas non-empty, in index order. `global_cache`: the run had one (writes the
// global_cache objects).
ClusterJson cluster_json(const std::string& router, const std::vector<ReplicaResult>& replicas,
                         bool global_cache = false);

}  // namespace pagesim::sim
