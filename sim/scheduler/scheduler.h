// Scheduler: decides, at the start of each iteration, which requests run and how much of
// each, and manages their KV memory through the allocator (admit, grow, preempt).
//
// The engine hands arriving requests to add_request(), calls schedule() once per iteration,
// and reports finished requests through on_finished(). A scheduler owns its queues (waiting,
// running, swapped), never the Requests (the engine's) nor the allocator (the caller's).
// Subclasses implement one batching policy each and describe themselves by a
// SchedulerDescriptor (scheduler_kind.h; its SchedulerTraits are what the mechanics read);
// the mechanics they share (admission, appending the newest token's slot, preemption by
// recompute, forks) live here, over the KvAllocator interface alone. Policies that drive a
// paged pool's own operations (swapping, watermark) take a PagedAllocator (VllmScheduler).
//
// Invariants (validate() checks them; tests call it after every iteration):
//   every queued request is in exactly one of waiting / running / swapped, in the state of
//   that queue; waiting requests hold no sequences, running and swapped ones hold some
//   running_seqs() == Σ sequences of running requests
//   Σ sequences of running + swapped requests == allocator.num_sequences()
//   running and swapped are ordered by (arrival, id)
//   (disaggregated prefill/decode) a request whose KV is in transfer is in no queue; the
//   allocator sequences it holds here are counted with the running and swapped ones
// Outside validate()'s reach (the allocator's side is not visible through KvAllocator):
//   the allocator holds each waiting request's prompt block hashes once
//   (hold_pending_prefix on joining waiting, release_pending_prefix on leaving it, as
//   add_request, preempt and pop_waiting do), so an eviction policy can protect what the
//   waiting queue will hit; tests/sim/scheduler/waiting_prefix_test.cpp checks it
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "allocator/kv_allocator.h"
#include "sim/core/iteration_plan.h"
#include "sim/core/request.h"
#include "sim/core/sequence_observer.h"
#include "sim/core/simulation_error.h"
#include "sim/scheduler/adapter_cache.h"
#include "sim/scheduler/pool_ref.h"
#include "sim/scheduler/scheduler_kind.h"
#include "sim/scheduler/scheduler_settings.h"

namespace pagesim::sim {

class Scheduler {
 public:
  // `allocator` must outlive the scheduler. REQUIRES: max_num_seqs >= 1,
  // max_num_batched_tokens >= 1, 0 <= watermark < 1 (the config checks them at parse time).
  Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator);
  // A policy whose kind is outside the built-in table (scheduler_kinds.h) gives its traits.
  Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator, const SchedulerTraits& traits);
  virtual ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // False when `r` could never be scheduled, even alone in an empty pool: its group at its
  // largest (allocator.max_group_slots) plus the policy's headroom exceeds the pool, or a
  // prefill that must fit one iteration exceeds the token budget. *why says why, and
  // *limiting_key (when given) names the config key that keeps it out: kv.slots,
  // allocator.max_seq_len, allocator.max_chunk_blocks or scheduler.max_num_batched_tokens.
  bool can_ever_schedule(const Request& r, std::string* why, std::string* limiting_key = nullptr) const;

  // Queues a newly arrived request. REQUIRES: can_ever_schedule(*r).
  void add_request(Request* r);
  // Fills `plan` (cleared first) for the iteration starting at `now`.
  virtual void schedule(double now, IterationPlan& plan) = 0;
  // The engine finished `r` (all tokens generated): release its memory and drop it from
  // the running queue. Called after the plan that finished it has been applied.
  void on_finished(Request* r);
  // Asynchronous scheduling's split of on_finished: retire(r) drops the finished r from the
  // running queue (it is never scheduled again; vLLM's async scheduler skips a request whose
  // last token is in flight) but keeps its sequences, its memory and its count against
  // max_num_seqs (vLLM keeps it in self.running until update_from_output);
  // release_retired() frees every retired request's and returns them, in retirement order.
  void retire(Request* r);
  std::vector<Request*> release_retired();
  // Requests retired and not yet released.
  std::int64_t num_retired() const { return static_cast<std::int64_t>(retired_.size()); }
  // Forks a request that just finished its prefill out to its full width (n samples or
  // beams). Returns false when the allocator has no room for the copies (contiguous
  // ranges); the request is then preempted by recompute.
  bool fork_to_width(Request* r);
  // Beam search: after a decode step, `parents[j]` is the index in r->seqs of beam j's
  // parent. Unpicked beams are freed; a beam picked m times continues plus m-1 forks.
  void reshape_beams(Request* r, const std::vector<std::int32_t>& parents);

  // Decode runs (SchedulerTraits::repeats_decode_plans): free slots (allocator breakdown's
  // `free`) the policy's checks need at every point of a repeat of `plan`, a decode-only
  // plan, for it to plan the same again. Default 0: the grows need their room, nothing more.
  virtual std::int64_t decode_repeat_free_slots(const IterationPlan& plan) const {
    (void)plan;
    return 0;
  }

  // Decode runs that begin where an iteration ends (Simulation::begin_run_at_end). When this
  // policy promises that its next schedule() — nothing arriving, every running request past
  // its prefill, every append leaving decode_repeat_free_slots(plan) free — begins with one
  // decode of every running request in running order and adds nothing else but, perhaps,
  // admissions (admits_after_decodes), fills `plan` (cleared first) with those decodes and
  // returns true. Changes nothing else. No promise (promises_running_decodes): false, the
  // engine calls schedule().
  bool plan_running_decodes(IterationPlan& plan) const {
    if (!promises_running_decodes()) return false;
    fill_running_decodes(plan);
    return true;
  }
  // Whether the policy makes that promise in its present state. Default false.
  virtual bool promises_running_decodes() const { return false; }
  // Whether plan.decodes are the running requests, in running order (what
  // plan_running_decodes would fill): the engine then keeps them so as the running queue
  // loses finished requests (Simulation::continue_run).
  bool decodes_running_in_order(const IterationPlan& plan) const {
    return plan.decodes.size() == running_.size() && std::equal(plan.decodes.begin(), plan.decodes.end(), running_.begin());
  }
  // Whether that schedule() may admit a waiting request when the decodes' appends have taken
  // `appended_blocks` blocks off the free list. A policy that answers false for some value
  // answers false for every larger one (admission fails the more, the less is free). Default:
  // whether any request waits.
  virtual bool admits_after_decodes(std::int64_t appended_blocks) const {
    (void)appended_blocks;
    return !waiting_.empty();
  }

  // How many requests from the head of the waiting queue one schedule() may read or admit;
  // kWholeQueue (the default) for a policy that reorders, counts or skips through the queue.
  // The engine may keep later arrivals out of the queue, in arrival order, and add them when
  // it is shorter (Simulation: the replica's backlog), so a bound must hold for every plan.
  static constexpr std::size_t kWholeQueue = static_cast<std::size_t>(-1);
  virtual std::size_t waiting_lookahead() const { return kWholeQueue; }

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
  // The admission request for `r` as the allocator would see it now: all of its prompt's
  // prefix keys, and at most `chunk` tokens computed at admission after the cache hits
  // (chunked prefill; the rest is appended chunk by chunk). A request that was recomputed
  // before comes back as a re-admission (its hits are counted apart).
  alloc::AdmitRequest admit_request(const Request& r, alloc::SeqId seq,
                                    std::int64_t chunk = std::numeric_limits<std::int64_t>::max()) const;

  // ---- Disaggregated prefill/decode (docs/engine.md): a request's KV in transfer. ----
  // While its KV moves from a prefill replica to a decode replica, a request holds
  // allocator sequences on both sides and is in neither side's queues (nothing plans it).
  // Prefill side: takes `r`, running with its prefill complete, out of the running queue;
  // its sequences stay allocated until release_handed_off(r) frees them (transfer done).
  void hand_off(Request* r);
  void release_handed_off(const Request* r);
  // Decode side: allocates r's prompt KV (prompt_tokens slots, one sequence, outside the
  // prefix cache and its counters: the blocks are received, not computed here, and the prompt
  // was admitted once, on its prefill replica) and holds it for r. False,
  // changing nothing, when the allocator has no room. take_handed_in(r) then makes r a
  // running request whose prefill is done (its next step is a decode); the engine then
  // forks it to its width (fork_to_width): only the prompt's sequence is handed off, before
  // any fork.
  bool reserve_hand_in(const Request* r);
  void take_handed_in(Request* r);
  // Requests holding sequences here while their KV is in transfer (either direction).
  std::size_t num_in_transfer() const { return in_transfer_.size(); }

  // LoRA (lora_settings.h): the replica's adapters (borrowed; null: none, requests' adapters
  // are ignored). A request naming an adapter is admitted only with it pinned (loaded), and
  // unpins it when its sequences are freed. Only the vllm-family policies consult it
  // (the config allows lora with vllm, vllm-v0, vllm-v1 and sarathi only).
  void set_adapters(AdapterCache* adapters) { adapters_ = adapters; }
  AdapterCache* adapters() const { return adapters_; }

  // Reports sequence creation, forks and frees to `observer` (borrowed; null: nobody).
  void set_observer(SequenceObserver* observer) { observer_ = observer; }

  // Checks the invariants above by a full scan; throws std::logic_error naming the first
  // one broken. O(requests + sequences): for tests.
  void validate() const;

  const SchedulerSettings& settings() const { return settings_; }
  // The policy's traits: its descriptor's (traits_of(settings().kind), or those the policy
  // passed to the constructor).
  const SchedulerTraits& traits() const { return traits_; }
  alloc::KvAllocator& allocator() { return alloc_; }
  const alloc::KvAllocator& allocator() const { return alloc_; }

 protected:
  // Starts planning an iteration: clears `plan` and the preempted-in-this-iteration marks
  // of the previous one.
  void begin_iteration(IterationPlan& plan);
  // Admits r for a prefill of up to `max_new_tokens` tokens (all of it when the policy does
  // not chunk). Returns false, changing nothing, when the allocator has no room.
  bool admit(Request* r, double now, std::int64_t max_new_tokens, IterationPlan& plan);
  // Grows every sequence of r by the newest token's slot; false (nothing changed) if any
  // cannot grow. One sequence (all but forked groups): the room is checked and taken in one
  // pass, by handle.
  bool append_slots(Request* r) {
    return r->seqs.size() == 1 ? alloc_.grow(r->seqs.front(), 1) : append_group_slots(r);
  }
  // Preempts r, which the caller has taken or is taking out of the running queue (see
  // set_running): swapped if the policy's try_swap_out takes it, else recomputed (its
  // memory freed, back to the front of the waiting queue). Marks it preempted for this
  // iteration.
  void preempt(Request* r, IterationPlan& plan);
  // Before a recompute frees r's one sequence: caches its blocks full of computed tokens
  // (traits().caches_preempted_blocks), extending r.block_hashes with keys of its own for
  // the blocks past the trace's, so that re-admission looks them up.
  void cache_computed_blocks(Request& r);
  // For reserving policies (orca, static): every running request grows by its newest
  // token's slot; one that cannot (it outgrew its reservation) is preempted by recompute.
  // The waiting queue keeps arrival order. Returns the preempted requests.
  std::vector<Request*> grow_running_or_recompute(IterationPlan& plan);
  // Admits waiting requests FCFS, whole prompts, while each fits the allocator, the token
  // budget (counting from batched_tokens) and the sequence limit; stops at the first that
  // does not, or that was preempted in this iteration.
  void admit_fcfs(double now, IterationPlan& plan, std::int64_t batched_tokens);
  static void add_decode(Request* r, IterationPlan& plan) {
    plan.decodes.push_back(r);
    plan.decode_seqs += static_cast<std::int64_t>(r->seqs.size());
  }
  // plan_running_decodes' plan: `plan` cleared, then add_decode of each running request.
  void fill_running_decodes(IterationPlan& plan) const {
    plan.clear();
    for (Request* r : running_) add_decode(r, plan);
  }
  // Inserts into the running queue keeping arrival order (FCFS priority).
  void insert_running(Request* r);
  // Inserts into the swapped queue keeping arrival order. REQUIRES: r's sequences are
  // swapped out.
  void insert_swapped(Request* r);
  // Frees one allocator sequence and tells the observer.
  void free_seq(alloc::SeqId seq);

  // Queue access for policies. The running queue is rebuilt by a pass over it: a policy
  // takes requests out by preempting them and hands the survivors back to set_running.
  // spare_running() is an empty vector to collect them in, with the capacity of an earlier
  // queue (set_running keeps the replaced one's), so that the pass allocates nothing.
  const std::vector<Request*>& running() const { return running_; }
  std::vector<Request*> spare_running() {
    std::vector<Request*> v = std::move(spare_);
    v.clear();
    return v;
  }
  void set_running(std::vector<Request*> survivors) {
    spare_ = std::move(running_);
    running_ = std::move(survivors);
  }
  // Takes a running request out of the running queue and preempts it.
  void preempt_running(Request* r, IterationPlan& plan);
  // Moves the n requests that the last n recompute preemptions put at the front of the
  // waiting queue to its back, in the order they were preempted (sglang: a retracted
  // request is appended). REQUIRES: n <= num_waiting().
  void requeue_preempted_at_back(std::size_t n);
  const std::deque<Request*>& waiting() const { return waiting_; }
  Request* pop_waiting() {
    Request* r = waiting_.front();
    waiting_.pop_front();
    alloc_.release_pending_prefix(r->block_hashes);
    return r;
  }
  const std::deque<Request*>& swapped() const { return swapped_; }
  Request* pop_swapped() {
    Request* r = swapped_.front();
    swapped_.pop_front();
    return r;
  }

  // ---- LoRA, for admission loops (adapters() set). ----
  // True when r's adapter cannot be had now (vllm: every slot pinned by another adapter):
  // vLLM's scheduler skips such a request and goes on with the next one.
  bool adapter_blocked(const Request* r) const {
    return adapters_ && r->adapter >= 0 && !r->adapter_pinned && !adapters_->can_pin(r->adapter);
  }
  // Whether admission `a` of r fits the paged pool beside the blocks pinning r's adapter takes
  // (unified placement); true without adapters.
  bool fits_with_adapter(const alloc::AdmitRequest& a, const Request* r) const {
    return !adapters_ || r->adapter < 0 || r->adapter_pinned || adapters_->fits(a, r->adapter);
  }
  // KV blocks pinning r's adapter takes from the pool now (0 without one, or under vllm).
  std::int64_t adapter_blocks_to_pin(const Request* r) const {
    return adapters_ && r->adapter >= 0 && !r->adapter_pinned ? adapters_->blocks_to_pin(r->adapter) : 0;
  }
  // Sets the waiting head aside (a skipped request) until restore_deferred() puts every one
  // set aside back at the front, in order. Its prefix keys stay held.
  void defer_waiting_head() {
    deferred_.push_back(waiting_.front());
    waiting_.pop_front();
  }
  void restore_deferred() {
    waiting_.insert(waiting_.begin(), deferred_.begin(), deferred_.end());
    deferred_.clear();
  }

  // Stable-sorts the waiting queue by `before` (cache-aware orderings, sglang).
  void reorder_waiting(const std::function<bool(const Request*, const Request*)>& before);
  // The allocation behind admit(): alloc_.admit(a) by default; a policy whose allocator
  // takes more than the request (sglang: the prefix matched before this iteration's
  // admissions) overrides it.
  virtual alloc::AdmitResult allocate_admission(const alloc::AdmitRequest& a, const Request& r);

  // Slots the policy keeps free beside a request's group at its largest (default none).
  virtual std::int64_t headroom_slots(const Request& r) const;
  // The policy's swap preemption: moves r's memory out and returns true, or returns false
  // and changes nothing (the request is then recomputed). Default: never swaps.
  virtual bool try_swap_out(Request* r, IterationPlan& plan);

  const SchedulerSettings settings_;
  alloc::KvAllocator& alloc_;

 private:
  const SchedulerTraits traits_;
  std::int64_t new_seq_id() { return next_seq_++; }
  // append_slots for a group of several sequences: all grow or none.
  bool append_group_slots(Request* r);
  // Drops r's pin on its adapter, if it holds one.
  void unpin_adapter(Request* r) {
    if (!r->adapter_pinned) return;
    adapters_->unpin(r->adapter);
    r->adapter_pinned = false;
  }

  std::deque<Request*> waiting_;  // FCFS; recompute-preempted requests go to the front
  std::vector<Request*> running_; // ordered by (arrival, id)
  std::vector<Request*> spare_;   // a replaced running queue's storage (spare_running)
  std::deque<Request*> swapped_;  // ordered by (arrival, id)
  std::int64_t running_seqs_ = 0; // Σ live sequences of running requests (and retired ones)
  std::vector<Request*> retired_; // finished, holding their sequences until release_retired
  std::vector<Request*> preempted_now_;  // marked preempted_now in the current iteration
  std::int64_t preemptions_total_ = 0;  // every preempt() so far, whatever plan it went to
  std::int64_t next_seq_ = 1;
  SequenceObserver* observer_ = nullptr;
  AdapterCache* adapters_ = nullptr;
  std::vector<Request*> deferred_;  // waiting requests skipped by the admission under way
  // Requests whose KV is in transfer and the sequences they hold here, in hand-off order.
  struct InTransfer {
    const Request* request;
    std::vector<alloc::SeqHandle> seqs;
  };
  std::vector<InTransfer> in_transfer_;
  std::vector<InTransfer>::iterator find_in_transfer(const Request* r);
};

// The one factory: builds the policy `settings.kind` by its descriptor in `kinds` over
// `pool`. Throws std::invalid_argument when `kinds` has no such kind or the pool does not
// offer what the policy drives (SchedulerDescriptor::drives: vllm over a contiguous pool).
std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, PoolRef pool,
                                          std::span<const SchedulerDescriptor> kinds);
// The same over the built-in kinds (kSchedulerKinds, sim/scheduler/scheduler_kinds.h).
std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, PoolRef pool);

}  // namespace pagesim::sim
