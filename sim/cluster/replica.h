// Replica: one serving instance of a cluster — a scheduler (with its KV allocator) and the
// cost model that prices its iterations — plus the engine's per-replica state: whether its
// GPU is busy, the plan of the iteration in flight, swaps not yet charged, and what the
// router has sent it.
//
// The Simulation owns its Replicas; scheduler and cost model are borrowed and must outlive
// it. The load queries (outstanding(), free_kv_slots(), cached_prefix_tokens()) are what
// routers read; they change nothing. Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <utility>

#include "allocator/kv_allocator.h"
#include "sim/core/global_fetch.h"
#include "sim/core/iteration_plan.h"
#include "sim/cost/cost_model.h"
#include "sim/output/spill_queue.h"
#include "sim/scheduler/scheduler.h"

namespace pagesim::sim {

class Replica {
 public:
  Replica(std::int32_t index, Scheduler& scheduler, const CostModel& cost)
      : index_(index), scheduler_(&scheduler), cost_(&cost), allocator_(&scheduler.allocator()) {}

  std::int32_t index() const { return index_; }
  Scheduler& scheduler() const { return *scheduler_; }
  const CostModel& cost() const { return *cost_; }
  alloc::KvAllocator& allocator() const { return *allocator_; }  // the scheduler's, reached without it

  // Requests routed here and not finished: waiting, running or swapped, holding KV here in
  // transfer (disaggregated prefill/decode), or held until the scheduler sees them
  // (asynchronous scheduling).
  std::int64_t outstanding() const {
    return static_cast<std::int64_t>(num_waiting() + scheduler_->num_running() + scheduler_->num_swapped() +
                                     scheduler_->num_in_transfer() + held.size());
  }
  // Requests waiting: in the scheduler's queue or behind it in the backlog.
  std::size_t num_waiting() const { return scheduler_->num_waiting() + backlog.size(); }
  // Slots a new request could take now: free, unreferenced cached blocks included (they are
  // evicted on demand). Exact inside a decode run too: the allocator's free slots less what
  // the run's started repeats took and the allocator has not grown yet (run_free_slots).
  std::int64_t free_kv_slots() const { return allocator().breakdown().free + run_free_slots; }
  // Prompt tokens of a request with these keys the replica holds in its prefix cache now.
  std::int64_t cached_prefix_tokens(std::span<const alloc::BlockHash> keys) const {
    return allocator().cached_prefix_tokens(keys);
  }

  // ---- The engine's state of this replica (simulation.cpp). ----
  bool busy = false;                  // an iteration is in flight
  IterationPlan plan;                 // the iteration in flight (valid while busy)
  std::int64_t iterations = 0;        // iterations started
  std::int64_t preemptions_reported = 0;  // scheduler preemptions already in a sample
  // Speculative decoding with the draft's KV in the pool's memory: the slots its blocks take
  // (MemoryBreakdown::draft_kv), added to every sample. 0 otherwise.
  std::int64_t draft_kv_slots = 0;
  std::int64_t pending_swap_out = 0, pending_swap_in = 0;  // swaps of plans with no compute
  // The decode run's repeats started and not grown into the allocator yet (DecodeRun::lag):
  // the free slots they took, <= 0 (the sum of their rounds' MemoryBreakdown::free). 0
  // outside a run and after Simulation::settle_run.
  std::int64_t run_free_slots = 0;
  std::int64_t routed_requests = 0;   // requests the router sent here
  std::int64_t routed_tokens = 0;     // their prompt + output tokens (per sequence group)
  std::int64_t handed_in = 0;         // disaggregated: KV transfers received (decode replica)
  GlobalFetchCounters global_fetch;   // global cache: what it fetched (serving replicas)
  // Requests that arrived while an iteration was in flight under asynchronous scheduling
  // (SchedulerSettings::async_steps > 0), in arrival order, each with the iteration starts
  // left before the scheduler sees it (>= 1).
  std::deque<std::pair<Request*, std::int64_t>> held;
  // Arrivals waiting behind the scheduler's queue, in arrival order, as the fields they arrived
  // with (48 bytes each, a Request is 256): a policy that reads only the first
  // Scheduler::waiting_lookahead() waiting requests cannot tell them from queued ones, and
  // an overloaded replica's queue grows by millions (Simulation::backlog_).
  struct BacklogEntry {
    std::uint64_t id;
    double arrival_s;
    std::int64_t prompt_tokens, output_tokens;
    std::int32_t n, beam_width, adapter;
  };
  SpillQueue<BacklogEntry> backlog;  // AdvanceSettings::backlog_in_memory sets its chunk

 private:
  std::int32_t index_;
  Scheduler* scheduler_;
  const CostModel* cost_;
  alloc::KvAllocator* allocator_;  // scheduler_->allocator(), which never changes
};

}  // namespace pagesim::sim
