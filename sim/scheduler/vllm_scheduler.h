// VllmScheduler: the vLLM paper artifact's scheduler, step by step (DESIGN.md).
//
// Each iteration, over the paged allocator:
//  1. Running groups, oldest arrival first, each need one free block per sequence (a
//     conservative check, even when no new block is needed); while that fails the
//     latest-arrived running group is preempted (or the group itself when it is the last).
//  2. If nothing was swapped out this iteration, swapped groups come back FCFS while
//     free blocks - (their blocks + one per sequence) >= watermark and the sequence limit holds.
//  3. While no group is swapped, waiting groups are admitted FCFS while the head was not
//     preempted in this iteration, free blocks - its blocks >= watermark, batched tokens stay
//     <= max_num_batched_tokens and running sequences <= max_num_seqs; admission stops at the
//     first head that does not fit.
// SarathiScheduler reuses steps 1-2 and chunks prefills (sarathi_scheduler.h).
#pragma once

#include <limits>

#include "sim/scheduler/scheduler.h"

namespace pagesim::sim {

class VllmScheduler : public Scheduler {
 public:
  VllmScheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator);
  void schedule(double now, IterationPlan& plan) override;

 protected:
  // Step 1 for groups past their prefill; groups still in a chunked prefill are kept in
  // running_ but left to the caller (returned in *prefilling, oldest first).
  void reserve_running_slots(IterationPlan& plan, std::vector<Request*>* prefilling);
  // Step 2. Returns true if any group is still swapped.
  bool swap_in_groups(IterationPlan& plan);
  // Step 3. `token_limit` bounds the iteration's batched tokens; with `chunked`, the last
  // admitted prompt may be cut to fit (chunked prefill), else it must fit whole.
  void admit_waiting(double now, IterationPlan& plan, std::int64_t batched_tokens,
                     std::int64_t token_limit, bool chunked);
  void reset_preempted_flags();

  std::vector<Request*> preempted_;  // preempted in the current iteration
};

}  // namespace pagesim::sim
