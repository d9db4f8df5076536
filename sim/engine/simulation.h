// Simulation: one run of a workload through one or more replicas (each a scheduler, its
// allocator and a cost model) behind a router.
//
// A discrete-event loop on a virtual clock: an event is a request arrival, the end of a model
// iteration or the end of a KV transfer, never a token. It owns the Requests in flight and its
// event queue; everything borrowed must outlive it. Runs are deterministic given the settings'
// seed. Not thread-safe; many Simulations may run in one process.
//
// docs/engine.md is the reading guide: the order of simultaneous events, decode runs and their
// deferral in a fleet, the waiting backlog, speculative steps, disaggregated prefill/decode,
// LoRA loads and the global cache, each with the rules that keep outputs byte-identical to
// the engine that plans every iteration.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/beam/beam_model.h"
#include "sim/cluster/disaggregation_settings.h"
#include "sim/cluster/free_slots_index.h"
#include "sim/cluster/global_cache.h"
#include "sim/cluster/kv_handoff.h"
#include "sim/cluster/load_index.h"
#include "sim/cluster/replica.h"
#include "sim/cluster/router.h"
#include "sim/core/advance_settings.h"
#include "sim/core/iteration_observer.h"
#include "sim/core/request.h"
#include "sim/cost/cost_model.h"
#include "sim/engine/decode_run.h"
#include "sim/engine/event_queue.h"
#include "sim/scheduler/scheduler.h"
#include "traces/request_source.h"
#include "traces/workload_spec.h"

namespace pagesim::sim {

struct EngineSettings {
  std::uint64_t seed = 0;  // seeds the beam model
  BeamModelSettings beam;  // which beams survive a beam-search step (default: neutral)
  // A request that can never be scheduled: an UnschedulableRequest error, or dropped, or its
  // prompt truncated to fit (traces::OversizePolicy), counted in oversize_dropped() / _truncated().
  traces::OversizePolicy oversize = traces::OversizePolicy::kError;
  // Longest request (prompt + output tokens) the model serves; 0 = not checked. A longer
  // request is oversize (UnschedulableRequest key "max_model_len").
  std::int64_t max_model_len = 0;
  // Prefill replicas, decode replicas and the KV transfer between them (default:
  // co-located). REQUIRES when enabled: a cluster with more replicas than disaggregation.prefill,
  // transfer_gbps and kv_bytes_per_token > 0, transfer_latency_us >= 0 (the config checks them).
  DisaggregationSettings disaggregation;
  // Prefix blocks fetched from other replicas or a shared pool (default: local caches only).
  // REQUIRES when enabled: bandwidth_gbps and kv_bytes_per_token > 0, latency_us >= 0, and
  // for shared_pool room for a block of kv_block_size tokens (the run checks them).
  GlobalCacheSettings global_cache;
  // What a KV transfer and a global-cache fetch move: the model's KV bytes per token (the first
  // replica's; every replica serves one model), and the tokens of a shared-pool block (the
  // experiment's allocator.block_size).
  double kv_bytes_per_token = 0;
  std::int64_t kv_block_size = 0;
  // How the run advances (decode runs, the waiting backlog): outputs are the same either way.
  // REQUIRES: advance.backlog_in_memory >= 0.
  AdvanceSettings advance;
  // The replicas whose schedulers decide whether an arrival can ever run (can_ever_run), in
  // increasing order: one per distinct replica configuration, since replicas built from one
  // configuration answer alike. Empty: every replica (O(replicas) per arrival).
  std::vector<std::int32_t> admission_replicas;
};

// Called every few thousand iterations: virtual time, requests arrived, finished.
using ProgressFn = std::function<void(double sim_now_s, std::int64_t arrived, std::int64_t finished)>;

class Simulation {
 public:
  // One replica.
  Simulation(traces::RequestSource& source, Scheduler& scheduler, const CostModel& cost,
             const EngineSettings& settings, std::unique_ptr<EventQueue> queue = nullptr);
  // A cluster. REQUIRES: replicas non-empty, replicas[i].index() == i; a router when there
  // is more than one replica (with one, a null router sends everything to it). Throws
  // SimulationError when replicas with prefix caches differ in block size.
  Simulation(traces::RequestSource& source, std::vector<Replica> replicas, std::unique_ptr<Router> router,
             const EngineSettings& settings, std::unique_ptr<EventQueue> queue = nullptr);

  // Adds an observer (borrowed) of the whole run, called after those added before it; with
  // `tokens`, also told of every token (IterationObserver::on_token), which only observers
  // that need it pay for on the per-token path. REQUIRES: run() has not started.
  void add_observer(IterationObserver& observer, bool tokens = false) {
    observers_.push_back(&observer);
    if (tokens) token_observers_.push_back(&observer);
  }
  // Adds an observer (borrowed) told only of replica `replica`'s arrivals, iterations and
  // finished requests, after the whole run's observers. REQUIRES: run() has not started,
  // replica < num_replicas().
  void add_replica_observer(std::int32_t replica, IterationObserver& observer) {
    replica_observers_[static_cast<std::size_t>(replica)].push_back(&observer);
  }

  std::int32_t num_replicas() const { return static_cast<std::int32_t>(replicas_.size()); }
  // Replica i: its scheduler, cost model and counters (routed requests and tokens).
  const Replica& replica(std::int32_t i) const { return replicas_[static_cast<std::size_t>(i)]; }

  // Requests the oversize policy dropped or truncated so far (EngineSettings::oversize).
  std::int64_t oversize_dropped() const { return oversize_dropped_; }
  std::int64_t oversize_truncated() const { return oversize_truncated_; }
  // Requests so far that carried token identities (hash_ids) the prefix cache can key on.
  std::int64_t requests_with_token_ids() const { return requests_with_token_ids_; }

  // Runs until every request has arrived and finished. Throws SimulationError when a
  // request can never be scheduled or the run stops making progress, and whatever the
  // source throws on bad input (traces::TraceError).
  void run(const ProgressFn& progress = {});

  // The global cache (its shared pool, for checks); null without one.
  const GlobalCache* global_cache() const { return global_.get(); }

  double now() const { return queue_->now(); }
  std::int64_t iterations() const { return iterations_; }

 private:
  // Past ~1e10 s (317 years) a double resolves times only to microseconds and coarser, so
  // latencies (differences of such times) lose their digits, and beyond ~1e308 they become
  // inf/NaN. No workload a serving study replays lasts that long: such a time comes from an
  // arrival time, rate or scale, or a cost setting, far off.
  static constexpr double kMaxSimulatedSeconds = 1e10;

  void on_arrival();   // takes next_ in
  void on_arrivals();  // on_arrival for every request arriving now
  void start_iteration(Replica& replica);
  // start_iteration for every idle replica, in index order (after arrivals).
  void start_idle_replicas();
  // Lists replica among the replicas that may be idle (maybe_idle_), once.
  void list_idle(const Replica& replica);
  // Whether replica holds a request in any state (waiting, backlog, held, running, swapped, retired,
  // arriving by KV transfer) or swaps still to charge: an idle replica that holds none plans nothing.
  bool holds_requests(const Replica& replica) const;
  // Moves replica's backlog into its scheduler's queue while the queue is shorter than its
  // policy reads.
  void refill_waiting(Replica& replica);
  // replica's iteration that ended at `end`: applies its plan (or, in a decode run, its tokens) and
  // starts the next one; while a run's next iteration ends before every queued event (and
  // no progress report is due), goes on with it at once. Returns when the last iteration
  // started, started.
  double on_iteration_end(Replica& replica, double end);
  // Starts a decode run after replica's iteration just planned (sample s, batch `shape`, swap
  // seconds `swap_s`) when it qualifies (see above).
  void begin_run(Replica& replica, const IterationSample& s, const BatchShape& shape, double swap_s);
  // The fields of s that replica's state gives as it stands: queue lengths, memory, the waiting
  // head's unusable_free, block counts.
  void sample_state(const Replica& replica, IterationSample& s) const;
  // At the end of replica's iteration, its plan applied and no run going on: when replica's policy
  // promises its next plan decodes every running request and nothing else
  // (Scheduler::plan_running_decodes, admits_after_decodes), sets replica.plan to it and begins a
  // run whose first iteration is that one (the allocator lags from its first round on),
  // instead of planning it; false, changing nothing the engine reads, when it does not qualify.
  bool begin_run_at_end(Replica& replica);
  // begin_run_at_end's conditions on the replica's setup, which no finish changes: no held
  // request or pending swap, no global cache, adapters, asynchronous steps or prefix cache.
  bool may_begin_run_at_end(const Replica& replica) const;
  // Its conditions on the policy's next plan: one decode of every running request and no
  // admission (Scheduler::promises_running_decodes, admits_after_decodes), no backlog
  // waiting behind an empty queue.
  bool next_plan_decodes_running(const Replica& replica) const;
  // begin_run_at_end's steps that read the requests and the allocator, once its conditions on
  // the setup and the policy hold: sets replica.plan to the running decodes and the run's
  // members, seqs, shape (the next iteration's batch one token shorter per sequence), rounds
  // and next_finish. False when a request or the rounds do not qualify.
  bool prepare_run_at_end(Replica& replica);
  // The last steps of beginning a run whose rounds are known (begin_run_at_end, continue_run):
  // the policy's admission check, the first sample and the price. False when they do not
  // qualify.
  bool start_rounds(Replica& replica, const BatchShape& shape);
  // begin_rounds: the allocator's rounds for `left` repeats (no request finishes at the ends
  // of the first left - 1) of replica.plan, the running decodes, then start_rounds.
  bool begin_rounds(Replica& replica, std::int64_t left, const BatchShape& shape);
  // At the start of replica's iteration, which begins no run and ends at `end`: when applying
  // its plan then changes nothing but its requests' prefill progress and tokens (none
  // finishes, forks, speculates or keeps beams; no hand-off, global cache or adapters) and no
  // one reads them before `end` (apply_ahead_), applies it now and prepares the run that may
  // begin at `end` (DecodeRun::applied, prepared). In a fleet the requests are in the cache
  // now and cold at `end`, when that end then reads none of them.
  void apply_ahead(Replica& replica, double end);
  // After apply_ahead prepared a run (DecodeRun::prepared) at the start of replica's iteration,
  // which started at `start` and ends at `end`: when the run defers (defer_runs_), asks now
  // what begin_run_at_end would ask at `end` and, when the run begins, defers it from there
  // (DecodeRun::begins_at_end): `end` is never queued. Only an arrival routed to replica can
  // change the answer before `end`, and one that can (an empty waiting queue: stop_run)
  // requeues `end` through undefer_run, which gives the prepared run back. In a fleet the
  // replica's state is in the cache now; at `end` it would be cold. False, with the run still
  // prepared, when it does not qualify.
  bool begin_ahead(Replica& replica, double start, double end);
  // What continue_run did at the end of replica's run.
  enum class RunEnd {
    kNotFinish,  // nothing: no chained request finishes here, or the finish cannot skip the
                 // plan's pass; the caller settles the run and applies the plan
    kFinished,   // the plan applied (the finished requests reported and freed, the others
                 // settled), no run begun: what apply_plan leaves
    kContinued,  // that, and a run of the others begun as begin_run_at_end would begin it
  };
  // At the end of replica's run (DecodeRun::left == 0), when it is chained and requests finish
  // here: grows the allocator's sequences by the lag, catches up the finished requests alone,
  // frees and reports them, and begins a run of the others that still lack their tokens
  // (DecodeRun::tokens). O(sequences) in the allocator; reads no other request.
  RunEnd continue_run(Replica& replica, double t);
  // The next iteration of replica's run, starting at now_s (its duration priced ahead when the run
  // is deferred).
  void start_run_iteration(Replica& replica, double now_s);
  // The tokens of replica's run's iteration that ended at t.
  void emit_run_tokens(Replica& replica, double t);
  // Catches replica's allocator and requests up with its run (DecodeRun::lag, DecodeRun::tokens).
  void settle_run(Replica& replica);
  // settle_run's first half: the allocator's sequences grown by the lag.
  void settle_rounds(Replica& replica);
  // settle_run's second half for one of the plan's requests: r given run.tokens.
  static void catch_up_tokens(const DecodeRun& run, Request& r);
  // `left` bounded by what replica's observers want exact (decode_run_limit).
  std::int64_t run_limit(const Replica& replica, std::int64_t left) const;
  // Ends replica's run now (settled): something outside it is about to change replica's state.
  void cut_run(Replica& replica);
  // Ends replica's run after its iteration in flight, which then settles it with the plan's
  // pass (on_iteration_end): one walk over its requests and sequences where cut_run's settle
  // now and the plan's pass later would each take their cache misses. Only for what changes
  // neither the allocator nor the running requests before that end (an arrival that joins
  // the waiting queue); memory queries meanwhile read the run's free slots (Replica::run_free_slots).
  void stop_run(Replica& replica);
  // Deferred decode runs (defer_runs_): where on_iteration_end would queue the end of replica's
  // run iteration in flight (started at `start`, ending at `end`), it prices the next repeats
  // ahead instead and queues only the last one's end. Whatever reads or changes replica before
  // then first starts the repeats that end before the event being handled (current_): an
  // arrival routed to it, a router that reads its free slots (loads_for), a hand-off's
  // transfer to it and a transfer's end (cut_run). Only replica's own observers see its
  // iterations. REQUIRES: no hand-off waits (undefer_runs).
  void defer_run(Replica& replica, double start, double end);
  // Starts the repeats priced ahead whose turn comes before `before` (every one when null),
  // as on_iteration_end's loop would have at each end: the catch-up before an arrival reads
  // or changes replica.
  void replay_run(Replica& replica, const Event* before);
  // Starts replica's repeats that end before current_ and, when its run stays deferred, queues
  // its iteration in flight's end in place of the last priced one (a newer DecodeRun::stamp):
  // the run goes on one iteration end at a time.
  void undefer_run(Replica& replica);
  // undefer_run for every deferred run: a hand-off waits, and the engine that plans every
  // iteration routes it again at each iteration end of any replica (start_transfers), which
  // deferred repeats would skip; none is deferred again until the hand-off queue empties.
  void undefer_runs();
  // Brings the state of the next event's replica towards the cache while the present event
  // is handled (a large fleet's events each touch a replica that the events in between have
  // evicted). Two steps: at the event's start its DecodeRun and Replica (!deep), at its end what
  // those point to (deep), read from the lines the first step fetched. A hint: changes nothing.
  void prefetch_next(bool deep) const;
  bool progress_due() const { return progress_ && *progress_ && iterations_ >= next_report_; }
  // Counts an iteration start against each request replica holds (asynchronous scheduling) and
  // hands those whose count ran out, or all of them when `all`, to replica's scheduler.
  void release_held(Replica& replica, bool all);
  void apply_plan(Replica& replica, double end);
  // r is done: its observers are told and its storage is reused. REQUIRES: its memory freed.
  void finish_request(Replica& replica, Request* r);
  // Frees the memory of the requests replica's scheduler retired (asynchronous scheduling: vLLM's
  // engine plans step k+1 before it applies step k's output, EngineCore.step_with_batch_queue,
  // so a finished request's blocks come back only after that plan) and finishes them.
  void retire_finished(Replica& replica);
  void emit_token(Request* r, double t);
  // The end of r's speculative step (Request::spec_step): its accepted proposals come out at
  // `end` after its own token, and its proposed slots are verified.
  void finish_speculative_step(Replica& replica, Request* r, double end);
  bool read_next();  // reads the next request into next_; false at the end
  Request* new_request();  // a default Request from requests_ (a free one, or a new one)
  // Queues an event at `time`, scheduled at `scheduled_s` (an iteration end: its iteration's
  // start; TieOrder), which must stay below kMaxSimulatedSeconds (else SimulationError saying
  // which event, its time and the settings that produce such times); an arrival is next_'s.
  void schedule(double time, double scheduled_s, EventKind kind, std::int32_t replica = 0, std::uint64_t request = 0);
  // schedule()'s check of `time` alone (a run's iteration end that skips the queue).
  void check_time(double time, EventKind kind, std::int32_t replica = 0, std::uint64_t request = 0) const {
    if (!(time <= kMaxSimulatedSeconds)) [[unlikely]]
      time_out_of_range(time, kind, replica, request);
  }
  // check_time's error, out of its way.
  [[noreturn]] void time_out_of_range(double time, EventKind kind, std::int32_t replica, std::uint64_t request) const;
  void schedule_next_arrival();
  // Disaggregated: hands r (prefill just completed on prefill replica `replica`) off for transfer.
  void hand_off(Replica& replica, Request* r);
  // Starts the transfers of the hand-off queue's head while its decode replica has room.
  void start_transfers(double now_s);
  void on_transfer_end(const Event& e);
  std::span<Replica> prefill_replicas() { return handoff_.prefill_replicas(replicas_); }
  // Marks replica's entries of the indexes its router reads (outstanding_ for the replicas
  // arrivals are routed among, decode_outstanding_ for the decode replicas; and the free-slot
  // index, mark_free_slots) as stale: after everything that can change replica.outstanding()
  // or its free slots (an arrival routed to it, its plan applied, its iteration start, a
  // transfer to or from it). Nothing for an index no router reads.
  void mark_load(const Replica& replica) {
    mark_free_slots(replica);
    if (!track_loads_) return;
    const auto i = static_cast<std::size_t>(replica.index());
    if (load_stale_[i]) return;
    load_stale_[i] = 1;
    stale_loads_.push_back(replica.index());
  }
  // Sets every stale entry to its replica's outstanding(): before a router reads the index.
  // Each replica at most once per route, so a route costs no more than the scan it replaces.
  void refresh_loads();
  // Marks replica's entry of the free-slot index its router reads (free_slots_, decode_free_slots_):
  // after everything mark_load follows and each repeat of a decode run, which takes slots.
  void mark_free_slots(const Replica& replica) {
    if (!track_free_slots_) return;
    const auto i = static_cast<std::size_t>(replica.index());
    if (i < free_slots_.size()) free_slots_.mark(i);
    else decode_free_slots_.mark(i - free_slots_.size());
  }
  // What the router of `replicas` (prefill_replicas(), or the decode replicas) reads, its
  // entries up to date; most_free_slots brings deferred runs up to the arrival being routed
  // where it must (FreeSlotsIndex).
  ReplicaLoads loads_for(const Router& router, std::span<Replica> replicas, bool decode);

  traces::RequestSource& source_;
  std::vector<Replica> replicas_;
  std::unique_ptr<Router> router_;  // null with one replica
  KvHandoff handoff_;  // disaggregated: prefill to decode replicas (co-located: disabled)
  LoadIndex outstanding_;         // Replica::outstanding() of prefill_replicas(), by position
  LoadIndex decode_outstanding_;  // of the decode replicas [P, N), by position (disaggregated)
  bool track_loads_ = false;      // a router reads one of them (Router::reads_outstanding)
  FreeSlotsIndex free_slots_;         // Replica::free_kv_slots() of prefill_replicas(), by position
  FreeSlotsIndex decode_free_slots_;  // of the decode replicas, by position (disaggregated)
  bool track_free_slots_ = false;     // a router reads one of them (Router::reads_free_slots)
  std::vector<char> load_stale_;  // per replica: its entry awaits refresh_loads()
  std::vector<std::int32_t> stale_loads_;  // those replicas, each once
  std::unique_ptr<GlobalCache> global_;     // null: local caches only
  std::vector<IterationObserver*> observers_;
  std::vector<IterationObserver*> token_observers_;  // those of observers_ added with tokens
  std::vector<IterationObserver*> iteration_observers_;  // those of observers_ that read iterations (run())
  std::vector<std::vector<IterationObserver*>> replica_observers_;  // per replica, as added
  // The same, flat (run() lays them out): replica i's are replica_observer_list_[
  // replica_observer_begin_[i] .. replica_observer_begin_[i + 1]). A fleet's every iteration
  // reads its replica's: two small arrays, not a heap block of its own per replica.
  std::vector<std::uint32_t> replica_observer_begin_;
  std::vector<IterationObserver*> replica_observer_list_;
  std::span<IterationObserver* const> observers_of(std::int32_t replica) const {
    const auto i = static_cast<std::size_t>(replica);
    return {replica_observer_list_.data() + replica_observer_begin_[i],
            replica_observer_list_.data() + replica_observer_begin_[i + 1]};
  }
  std::unique_ptr<EventQueue> queue_;
  std::unique_ptr<BeamModel> beams_;
  std::int64_t hash_block_tokens_;
  std::int64_t prefix_block_size_ = 0;  // > 0 when the allocator caches prefixes

  std::optional<traces::TraceRequest> next_;  // the one request read ahead
  // Every Request the run has made, live or free for reuse, in chunks (they never move), so
  // that requests in flight take no allocation each; the free ones.
  std::vector<std::unique_ptr<Request[]>> request_chunks_;
  std::size_t chunk_used_ = 0;  // of the last chunk
  std::vector<Request*> free_requests_;
  std::vector<Request*> finished_;
  std::vector<std::int32_t> parents_;
  std::int64_t iterations_ = 0;  // over all replicas
  bool skip_decode_runs_;
  bool compact_waiting_;
  std::vector<std::int32_t> admission_replicas_;  // EngineSettings::admission_replicas
  bool run_ahead_ = false;  // a cluster's runs go on past other replicas' events (run() decides)
  // A cluster's runs are deferred (defer_run): run() decides, as for run_ahead_ but with
  // disaggregation too, and only when no observer of the whole run reads iterations.
  bool defer_runs_ = false;
  // Plans are applied as their iterations start (apply_ahead): run() decides, with deferred
  // runs, no hand-offs and no observer that holds requests (none reads them in between).
  bool apply_ahead_ = false;
  // With hand-offs: replicas whose runs defer_run deferred (some since caught up), each once.
  std::vector<std::int32_t> deferred_;
  std::vector<char> listed_deferred_;   // per replica: in deferred_
  Event current_;  // the event being handled (defer_runs_: a deferred run is brought up to it)
  // Replicas that may be idle (!busy) and plan something, each once (listed_idle_): a superset
  // of the idle ones holding requests, which an arrival offers an iteration to in index order.
  std::vector<std::int32_t> maybe_idle_;
  std::vector<char> listed_idle_;
  // Per replica: how many queued requests its policy reads, kWholeQueue (no backlog) when
  // arrivals must join the scheduler's queue at once (run() decides).
  std::vector<std::size_t> backlog_lookahead_;
  std::vector<DecodeRun> runs_;  // per replica
  const ProgressFn* progress_ = nullptr;  // run()'s, while it runs
  std::int64_t next_report_ = 0;          // iterations_ at the next progress report
  std::int64_t arrived_ = 0, finished_count_ = 0;
  traces::OversizePolicy oversize_;
  std::int64_t max_model_len_;
  std::int64_t oversize_dropped_ = 0, oversize_truncated_ = 0;
  std::int64_t requests_with_token_ids_ = 0;

  // Applies the oversize policy to r, which can never be scheduled as it is: false when r is
  // dropped; true when its prompt was cut so that it fits. Throws UnschedulableRequest under
  // kError.
  bool fit_oversize(Request& r, const traces::TraceRequest& t, const std::string& why, const std::string& key,
                    int refusing);
  void set_block_hashes(Request& r, const traces::TraceRequest& t) const;
  // True when r can ever run: within max_model_len and Scheduler::can_ever_schedule of
  // every replica. Otherwise *why says why, *key names the limiting config key and *refusing
  // (when given) the replica it keeps r off (-1 for max_model_len, the cluster's smallest).
  bool can_ever_run(const Request& r, std::string* why, std::string* key, int* refusing = nullptr) const;
};

// In the header: apply_plan (simulation.cpp) and continue_run (simulation_decode_runs.cpp) inline it.
inline void Simulation::emit_token(Request* r, double t) {
  ++r->generated;
  const double previous = r->first_token_s < 0 ? -1.0 : r->last_token_s;
  if (r->first_token_s < 0) r->first_token_s = t;
  else r->max_token_gap_s = std::max(r->max_token_gap_s, t - r->last_token_s);
  r->last_token_s = t;
  for (IterationObserver* o : token_observers_) o->on_token(*r, t, previous);
  if (r->generated >= r->output_tokens) {
    r->finish_s = t;
    r->state = RequestState::kFinished;
    finished_.push_back(r);
  }
}

}  // namespace pagesim::sim
