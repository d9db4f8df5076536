// Scheduler: decides, at the start of each iteration, which requests run and how much of
// each, and manages their KV memory through the allocator (admit, grow, preempt, swap).
//
// The engine hands arriving requests to add_request(), calls schedule() once per iteration,
// and reports finished requests through on_finished(). A scheduler owns its queues (waiting,
// running, swapped), never the Requests (the engine's) nor the allocator (the simulation's).
// Subclasses implement one batching policy each; the mechanics they share (admission,
// appending the newest token's slot, preemption by recompute or swap, swap-in) live here.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/engine/request.h"
#include "sim/scheduler/iteration_plan.h"
#include "sim/scheduler/scheduler_settings.h"
#include "sim/scheduler/sequence_observer.h"

namespace pagesim::sim {

// A run that cannot go on (a request that can never be scheduled, swap space exhausted).
class SimulationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Scheduler {
 public:
  // `allocator` must outlive the scheduler. Throws std::invalid_argument when the policy
  // cannot work with this allocator (vllm/sarathi need a paged one).
  Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator);
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // False when `r` could never be scheduled, even alone in an empty pool; *why says why.
  virtual bool can_ever_schedule(const Request& r, std::string* why) const;

  // Queues a newly arrived request. REQUIRES: can_ever_schedule(*r).
  void add_request(Request* r);
  // Fills `plan` (cleared first) for the iteration starting at `now`.
  virtual void schedule(double now, IterationPlan& plan) = 0;
  // The engine finished `r` (all tokens generated): release its memory and drop it from
  // the running queue. Called after the plan that finished it has been applied.
  virtual void on_finished(Request* r);
  // Forks a request that just finished its prefill out to its full width (n samples or
  // beams). Returns false when the allocator has no room for the copies (contiguous
  // ranges); the request is then preempted by recompute.
  bool fork_to_width(Request* r);
  // Beam search: after a decode step, `parents[j]` is the index in r->seqs of beam j's
  // parent. Unpicked beams are freed; a beam picked m times continues plus m-1 forks.
  void reshape_beams(Request* r, const std::vector<std::int32_t>& parents);

  bool idle() const { return waiting_.empty() && running_.empty() && swapped_.empty(); }
  // Preemptions since the start, including those of plans that ran no compute and of failed
  // forks (which the plan counters of IterationPlan do not see).
  std::int64_t preemptions_total() const { return preemptions_total_; }
  std::size_t num_waiting() const { return waiting_.size(); }
  std::size_t num_running() const { return running_.size(); }
  std::size_t num_swapped() const { return swapped_.size(); }
  std::int64_t num_running_seqs() const { return running_seqs_; }
  // The head of the waiting queue, or null.
  const Request* waiting_head() const { return waiting_.empty() ? nullptr : waiting_.front(); }
  // The admission request for `r` as the allocator would see it now. With `chunk` below
  // r's prompt + generated tokens (chunked prefill), only the first `chunk` tokens are held
  // and only the prefix keys of full blocks inside them are given.
  alloc::AdmitRequest admit_request(const Request& r, alloc::SeqId seq,
                                    std::int64_t chunk = std::numeric_limits<std::int64_t>::max()) const;

  // Reports sequence creation, forks and frees to `observer` (borrowed; null: nobody).
  void set_observer(SequenceObserver* observer) { observer_ = observer; }

  const SchedulerSettings& settings() const { return settings_; }
  alloc::KvAllocator& allocator() { return alloc_; }

 protected:
  // Admits r for a prefill of up to `max_new_tokens` tokens (all of it when the policy does
  // not chunk). Returns false, changing nothing, when the allocator has no room.
  bool admit(Request* r, double now, std::int64_t max_new_tokens, IterationPlan& plan);
  // Grows every sequence of r by the newest token's slot; false (nothing changed) if any
  // cannot grow.
  bool append_slots(Request* r);
  bool can_append_slots(const Request& r) const;
  // Takes r out of the running queue's responsibility: recompute (back to the front of the
  // waiting queue) or swap (to the swapped queue), per settings and allocator.
  void preempt(Request* r, IterationPlan& plan);
  void swap_in(Request* r, IterationPlan& plan);
  // For reserving policies (orca, static): every running request grows by its newest
  // token's slot; one that cannot (it outgrew its reservation) is preempted by recompute.
  // The waiting queue keeps arrival order. Returns the preempted requests.
  std::vector<Request*> grow_running_or_recompute(IterationPlan& plan);
  // Admits waiting requests FCFS, whole prompts, while each fits the allocator, the token
  // budget (counting from batched_tokens) and the sequence limit; stops at the first that
  // does not, or that was preempted in this iteration.
  void admit_fcfs(double now, IterationPlan& plan, std::int64_t batched_tokens);
  // Inserts into running_ keeping arrival order (FCFS priority).
  void insert_running(Request* r);
  void add_decode(Request* r, IterationPlan& plan);

  std::int64_t watermark_blocks() const;
  // Frees one allocator sequence and tells the observer.
  void free_seq(alloc::SeqId seq);
  std::int64_t new_seq_id() { return next_seq_++; }

  SchedulerSettings settings_;
  alloc::KvAllocator& alloc_;
  alloc::PagedAllocator* paged_;  // alloc_ when it is paged, else null
  std::deque<Request*> waiting_;  // FCFS; recompute-preempted requests go to the front
  std::vector<Request*> running_; // ordered by (arrival, id)
  std::deque<Request*> swapped_;  // ordered by (arrival, id)
  std::int64_t running_seqs_ = 0; // Σ live sequences of running requests
  std::int64_t preemptions_total_ = 0;  // every preempt() so far, whatever plan it went to
  std::int64_t next_seq_ = 1;
  SequenceObserver* observer_ = nullptr;
};

// Builds the policy `settings.kind` over `allocator`.
std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator);

}  // namespace pagesim::sim
