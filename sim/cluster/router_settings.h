// RouterSettings: which policy sends each arriving request to a replica, and its knobs.
//
// Policies (router.h): round_robin, least_outstanding (fewest requests waiting, running or
// swapped), least_kv (most free KV slots, cached-but-evictable included), prefix_aware
// (most prompt tokens already cached, behind a load-balance guard), random (seeded) and
// adapter_aware (LoRA: a replica whose GPU holds the request's adapter, within
// balance_abs_threshold requests of the least loaded, else least_outstanding).
// The prefix_aware knobs and their defaults are SGLang router's cache_aware policy's
// (sgl-project/sglang, rust/README.md "Cache-Aware Load-Balancing Router": cache_threshold
// 0.5, balance_abs_threshold 32, balance_rel_threshold 1.0001).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <utility>

namespace pagesim::sim {

enum class RouterKind { kRoundRobin, kLeastOutstanding, kLeastKv, kPrefixAware, kRandom, kAdapterAware };

inline constexpr std::array<std::pair<RouterKind, std::string_view>, 6> kRouterKindNames = {{
    {RouterKind::kRoundRobin, "round_robin"},
    {RouterKind::kLeastOutstanding, "least_outstanding"},
    {RouterKind::kLeastKv, "least_kv"},
    {RouterKind::kPrefixAware, "prefix_aware"},
    {RouterKind::kRandom, "random"},
    {RouterKind::kAdapterAware, "adapter_aware"},
}};

struct RouterSettings {
  RouterKind kind = RouterKind::kRoundRobin;
  std::uint64_t seed = 0;  // random: the experiment's seed (set by the run, not a key)
  // prefix_aware: the cluster is imbalanced, and the request goes to the least-loaded
  // replica (fewest outstanding requests) whatever it has cached, when both
  //   max_load - min_load > balance_abs_threshold  and  max_load > balance_rel_threshold * min_load.
  // Lower thresholds balance load sooner at the cost of cache hits.
  std::int64_t balance_abs_threshold = 32;  // requests
  double balance_rel_threshold = 1.0001;    // ratio, >= 1
  // prefix_aware, balanced cluster: the replica with the most cached prompt tokens gets the
  // request when they are more than this fraction of its prompt; otherwise the replica with
  // the most free KV does (SGLang: "smallest tree", the most room to cache). In [0, 1].
  double cache_threshold = 0.5;
};

}  // namespace pagesim::sim
