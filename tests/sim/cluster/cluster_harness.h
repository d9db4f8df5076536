// Cluster test harness: runs a Simulation of several replicas (each a PagedAllocator, a
// scheduler (vllm unless the shape says) and a ConstantCostModel), co-located or
// disaggregated, over a hand-written trace, checks every replica's
// scheduler and allocator invariants after every one of its iterations, and keeps where each
// request went and when it finished.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/cluster/router.h"
#include "sim/cost/constant_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/metrics/metrics.h"
#include "sim_harness.h"
#include "traces/vector_source.h"

namespace pagesim::sim::testing {

struct Placed {
  std::int32_t replica = -1;
  double first_token_s = -1, finish_s = -1;
  std::int64_t cached_tokens = 0;
  double max_token_gap_s = 0;
  std::int32_t prefill_replica = -1;  // disaggregated runs
  double transfer_start_s = -1, transfer_end_s = -1;
};

class PlacementRecorder final : public IterationObserver {
 public:
  void on_request_finished(const Request& r) override {
    placed[r.id] = {r.replica,         r.first_token_s,    r.finish_s,       r.cached_tokens,
                    r.max_token_gap_s, r.prefill_replica,  r.transfer_start_s, r.transfer_end_s};
  }
  std::map<std::uint64_t, Placed> placed;
};

struct ClusterOutcome {
  std::map<std::uint64_t, Placed> placed;
  std::string iterations_csv;  // with the replica column
  std::string requests_csv;
  std::vector<std::int64_t> routed_requests;
  std::int64_t invariant_checks = 0;
  std::vector<std::int64_t> handed_in;  // KV transfers each replica received
  std::vector<GlobalFetchCounters> global_fetch;  // what each replica fetched (global cache)
  std::vector<alloc::PrefixCacheStats> prefix;    // each replica's prefix-cache counters
  std::int64_t pool_checks = 0;  // shared pool validations (one per iteration with a pool)
};

// Checks the global cache's shared pool (if any) after every iteration of any replica.
class PoolChecker final : public IterationObserver {
 public:
  explicit PoolChecker(const Simulation& sim) : sim_(sim) {}
  void on_replica_iteration(std::int32_t, const IterationSample&, const IterationPlan&) override {
    const GlobalCache* g = sim_.global_cache();
    if (!g || !g->pool()) return;
    g->pool()->validate();
    ++checks;
  }
  std::int64_t checks = 0;

 private:
  const Simulation& sim_;
};

// Called after every iteration starts, with the replica and the pools of every replica
// (to look at both sides of a KV transfer).
using IterationProbe = std::function<void(std::int32_t replica, const IterationSample& s,
                                          const std::vector<std::unique_ptr<alloc::PagedAllocator>>& pools)>;

class ProbeObserver final : public IterationObserver {
 public:
  ProbeObserver(const IterationProbe& probe, const std::vector<std::unique_ptr<alloc::PagedAllocator>>& pools)
      : probe_(probe), pools_(pools) {}
  void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan&) override {
    if (probe_) probe_(replica, s, pools_);
  }

 private:
  const IterationProbe& probe_;
  const std::vector<std::unique_ptr<alloc::PagedAllocator>>& pools_;
};

struct ReplicaShape {
  std::int64_t slots = 64;
  std::int32_t block_size = 4;
  bool prefix_cache = false;
  double seconds_per_iteration = 1.0;
  SchedulerKind scheduler = SchedulerKind::kVllm;  // any policy over a paged pool
};

inline ClusterOutcome simulate_cluster(std::vector<traces::TraceRequest> trace, const std::vector<ReplicaShape>& shapes,
                                       const RouterSettings& router, std::int64_t hash_block_tokens = 0,
                                       const DisaggregationSettings& disaggregation = {},
                                       const IterationProbe& probe = {},
                                       const GlobalCacheSettings& global_cache = {},
                                       double kv_bytes_per_token = 1.0, std::uint64_t seed = 0) {
  traces::VectorSource source(std::move(trace), hash_block_tokens);
  std::vector<std::unique_ptr<alloc::PagedAllocator>> allocators;
  std::vector<std::unique_ptr<Scheduler>> schedulers;
  std::vector<std::unique_ptr<ConstantCostModel>> costs;
  std::vector<Replica> replicas;
  SchedulerSettings ss;  // vllm, the artifact's limits
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    alloc::PagedAllocatorSettings spec;
    spec.num_blocks = shapes[i].slots / shapes[i].block_size;
    spec.block_size = shapes[i].block_size;
    spec.prefix_cache = shapes[i].prefix_cache;
    allocators.push_back(std::make_unique<alloc::PagedAllocator>(spec));
    ss.kind = shapes[i].scheduler;
    schedulers.push_back(make_scheduler(ss, *allocators.back()));
    costs.push_back(std::make_unique<ConstantCostModel>(shapes[i].seconds_per_iteration));
    replicas.emplace_back(static_cast<std::int32_t>(i), *schedulers.back(), *costs.back());
  }
  std::ostringstream it_csv, req_csv;
  MetricsSettings ms;
  ms.kv_bytes_per_token = 1.0;
  ms.block_size = shapes[0].block_size;
  ms.replica_column = true;
  Metrics metrics(ms, &req_csv, &it_csv);
  PlacementRecorder recorder;
  std::vector<std::unique_ptr<InvariantChecker>> checkers;
  EngineSettings es;
  es.seed = seed;
  es.disaggregation = disaggregation;
  es.global_cache = global_cache;
  es.kv_bytes_per_token = kv_bytes_per_token;
  es.kv_block_size = shapes[0].block_size;
  Simulation sim(source, std::move(replicas), make_router(router), es);
  ProbeObserver prober(probe, allocators);
  PoolChecker pool_checker(sim);
  sim.add_observer(metrics);
  sim.add_observer(recorder);
  sim.add_observer(prober);
  sim.add_observer(pool_checker);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    checkers.push_back(std::make_unique<InvariantChecker>(*schedulers[i]));
    sim.add_replica_observer(static_cast<std::int32_t>(i), *checkers.back());
  }
  sim.run();
  ClusterOutcome o;
  o.placed = recorder.placed;
  o.iterations_csv = it_csv.str();
  o.requests_csv = req_csv.str();
  o.pool_checks = pool_checker.checks;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    schedulers[i]->validate();
    allocators[i]->validate();
    o.routed_requests.push_back(sim.replica(static_cast<std::int32_t>(i)).routed_requests);
    o.handed_in.push_back(sim.replica(static_cast<std::int32_t>(i)).handed_in);
    o.global_fetch.push_back(sim.replica(static_cast<std::int32_t>(i)).global_fetch);
    o.prefix.push_back(allocators[i]->stats().prefix);
    o.invariant_checks += checkers[i]->checks();
  }
  return o;
}

}  // namespace pagesim::sim::testing
