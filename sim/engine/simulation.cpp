#include "sim/engine/simulation.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include <fmt/format.h>

#include "sim/core/simulation_error.h"
#include "sim/engine/iteration_price.h"
#include "sim/engine/prefix_keys.h"

namespace pagesim::sim {
namespace {

std::vector<Replica> one_replica(Scheduler& scheduler, const CostModel& cost) {
  std::vector<Replica> replicas;  // (an initializer list would copy it: a Replica moves only)
  replicas.emplace_back(0, scheduler, cost);
  return replicas;
}

}  // namespace

Simulation::Simulation(traces::RequestSource& source, Scheduler& scheduler, const CostModel& cost,
                       const EngineSettings& settings, std::unique_ptr<EventQueue> queue)
    : Simulation(source, one_replica(scheduler, cost), nullptr, settings, std::move(queue)) {}

Simulation::Simulation(traces::RequestSource& source, std::vector<Replica> replicas, std::unique_ptr<Router> router,
                       const EngineSettings& settings, std::unique_ptr<EventQueue> queue)
    : source_(source),
      replicas_(std::move(replicas)),
      router_(std::move(router)),
      handoff_(settings.disaggregation, replicas_.size(), settings.kv_bytes_per_token, settings.seed),
      replica_observers_(replicas_.size()),
      queue_(queue ? std::move(queue) : std::make_unique<HeapEventQueue>()),
      beams_(make_beam_model(settings.beam, settings.seed ^ 0x6265616d73ULL)),
      hash_block_tokens_(source.hash_block_tokens()),
      oversize_(settings.oversize),
      max_model_len_(settings.max_model_len) {
  assert(!replicas_.empty() && (router_ || replicas_.size() == 1));
  skip_decode_runs_ = settings.advance.skip_decode_runs;
  compact_waiting_ = settings.advance.compact_waiting;
  admission_replicas_ = settings.admission_replicas;
  assert(std::all_of(admission_replicas_.begin(), admission_replicas_.end(),
                     [&](std::int32_t i) { return i >= 0 && static_cast<std::size_t>(i) < replicas_.size(); }));
  assert(settings.advance.backlog_in_memory >= 0);
  const auto backlog_chunk = static_cast<std::size_t>(settings.advance.backlog_in_memory);
  for (Replica& replica : replicas_) replica.backlog = SpillQueue<Replica::BacklogEntry>(backlog_chunk, "waiting backlog");
  queue_->set_tie_order(replicas_.size() > 1 ? TieOrder::kCanonical : TieOrder::kInsertion);
  runs_.resize(replicas_.size());
  const Router* decode_router = handoff_.decode_router_or_null();
  if (handoff_.enabled()) decode_outstanding_ = LoadIndex(handoff_.decode_replicas(replicas_).size());
  outstanding_ = LoadIndex(prefill_replicas().size());
  track_loads_ = (router_ && router_->reads_outstanding()) || (decode_router && decode_router->reads_outstanding());
  load_stale_.assign(replicas_.size(), 0);
  track_free_slots_ = (router_ && router_->reads_free_slots()) || (decode_router && decode_router->reads_free_slots());
  if (track_free_slots_) {
    free_slots_ = FreeSlotsIndex(prefill_replicas());
    if (handoff_.enabled()) decode_free_slots_ = FreeSlotsIndex(handoff_.decode_replicas(replicas_));
  }
  for (const Replica& replica : replicas_) {
    assert(replica.index() == &replica - replicas_.data());
    const alloc::KvAllocator& a = replica.allocator();
    if (!a.caches_prefixes()) continue;
    if (prefix_block_size_ > 0 && a.block_size() != prefix_block_size_)
      throw SimulationError(fmt::format("replica {} caches prefixes in blocks of {} tokens, an earlier replica in "
                                        "blocks of {}: replicas with a prefix cache must share one block size",
                                        replica.index(), a.block_size(), prefix_block_size_));
    prefix_block_size_ = a.block_size();
  }
  if (settings.global_cache.enabled) {
    global_ = std::make_unique<GlobalCache>(settings.global_cache, settings.kv_bytes_per_token, settings.kv_block_size,
                                            prefill_replicas());
    for (Replica& replica : prefill_replicas())
      if (!replica.allocator().set_remote_prefix_source(&global_->source_for(replica.index())))
        throw SimulationError(fmt::format("replica {}'s allocator ({}) cannot fetch prefix blocks from a global "
                                          "cache: it needs a paged allocator with a prefix cache",
                                          replica.index(), replica.allocator().name()));
  }
}

bool Simulation::read_next() {
  next_ = source_.next();
  return next_.has_value();
}

void Simulation::on_arrivals() {
  // Every request arriving at this instant joins before anything is planned (the artifact's
  // Poisson-per-quantum arrivals come in bunches with one timestamp); only the first later
  // arrival gets an event.
  const double t = now();
  do {
    on_arrival();
  } while (next_ && next_->arrival_s <= t);
  if (next_) schedule_next_arrival();
}


namespace {

// What a request arrives with, from a trace row or a backlog entry (Replica::BacklogEntry).
template <class Arrival>
void set_arrival_fields(Request& r, const Arrival& a) {
  r.id = a.id;
  r.arrival_s = a.arrival_s;
  r.prompt_tokens = a.prompt_tokens;
  r.output_tokens = a.output_tokens;
  r.n = a.n;
  r.beam_width = a.beam_width;
  r.adapter = a.adapter;
}

}  // namespace

void Simulation::schedule_next_arrival() { schedule(next_->arrival_s, now(), EventKind::kArrival); }

void Simulation::time_out_of_range(double time, EventKind kind, std::int32_t replica, std::uint64_t request) const {
  std::string what, settings;
  switch (kind) {
    case EventKind::kArrival:
      what = fmt::format("request {} arrives", next_->id);
      settings = "the trace's times, workload.trace.time_scale and workload.arrival";
      break;
    case EventKind::kIterationEnd:
      what = fmt::format("an iteration of replica {} starting at {} s would end", replica, now());
      settings = "the cost settings (cost.*, gpu)";
      break;
    case EventKind::kTransferEnd:
      what = fmt::format("request {}'s KV transfer to replica {} would end", request, replica);
      settings = "replicas.disaggregated (transfer_gbps, transfer_latency_us)";
      break;
  }
  throw SimulationError(fmt::format("{} at {} s, beyond the {:g} s a simulation can time to the microsecond: "
                                    "expected times below that; check {}",
                                    what, time, kMaxSimulatedSeconds, settings));
}

void Simulation::schedule(double time, double scheduled_s, EventKind kind, std::int32_t replica,
                          std::uint64_t request) {
  check_time(time, kind, replica, request);
  queue_->push(time, scheduled_s, kind, replica, request);
}

void Simulation::run(const ProgressFn& progress) {
  // The replicas whose arrivals may wait in a backlog, and how many queued requests their
  // policy reads (kWholeQueue: no backlog, every arrival joins the scheduler's queue). Not with a
  // prefix cache (waiting prompts' keys are held, hold_pending_prefix), LoRA, asynchronous
  // scheduling, disaggregation or a global cache, nor an observer that holds Requests.
  bool holders = false;
  for (const IterationObserver* o : observers_) holders = holders || o->holds_requests();
  for (const auto& list : replica_observers_)
    for (const IterationObserver* o : list) holders = holders || o->holds_requests();
  backlog_lookahead_.assign(replicas_.size(), Scheduler::kWholeQueue);
  for (Replica& replica : replicas_) {
    const Scheduler& sched = replica.scheduler();
    if (compact_waiting_ && !holders && prefix_block_size_ == 0 && !global_ && !handoff_.enabled() &&
        sched.settings().async_steps == 0 && !sched.adapters())
      backlog_lookahead_[static_cast<std::size_t>(replica.index())] = sched.waiting_lookahead();
  }
  // A cluster's decode runs go on past other replicas' queued events (docs/engine.md) when
  // nothing else reads a replica's state between arrivals and no observer reads the order;
  // they are deferred when, besides, no observer of the whole run reads iterations, and with
  // disaggregation too (each hand-off and transfer brings the runs it touches up to it).
  const bool order_unread = replicas_.size() > 1 && !global_ && token_observers_.empty() &&
                            std::none_of(observers_.begin(), observers_.end(),
                                         [](const IterationObserver* o) { return o->reads_replica_order(); });
  run_ahead_ = skip_decode_runs_ && order_unread && !handoff_.enabled();
  replica_observer_begin_.assign(1, 0);
  replica_observer_list_.clear();
  for (const auto& list : replica_observers_) {
    replica_observer_list_.insert(replica_observer_list_.end(), list.begin(), list.end());
    replica_observer_begin_.push_back(static_cast<std::uint32_t>(replica_observer_list_.size()));
  }
  iteration_observers_.clear();
  for (IterationObserver* o : observers_)
    if (o->reads_iterations()) iteration_observers_.push_back(o);
  defer_runs_ = skip_decode_runs_ && order_unread && iteration_observers_.empty();
  apply_ahead_ = defer_runs_ && !holders && !handoff_.enabled();
  deferred_.clear();
  listed_deferred_.assign(replicas_.size(), 0);
  maybe_idle_.clear();
  listed_idle_.assign(replicas_.size(), 0);
  for (const Replica& replica : replicas_) {
    if (replica.busy) continue;
    maybe_idle_.push_back(replica.index());
    listed_idle_[static_cast<std::size_t>(replica.index())] = 1;
  }
  if (read_next()) schedule_next_arrival();
  progress_ = &progress;
  next_report_ = 4096;
  // In a large fleet each event touches a replica whose state the events since its last one
  // have evicted: the next event's replica is fetched while this one is handled. Below a few
  // hundred replicas the state stays in the caches and the prefetches cost 2-5% (bench/sim).
  constexpr std::size_t kPrefetchReplicas = 512;
  const bool fleet = replicas_.size() >= kPrefetchReplicas;
  while (auto e = queue_->pop()) {
    current_ = *e;
    if (fleet) prefetch_next(false);
    if (e->kind == EventKind::kArrival) {
      on_arrivals();
      start_idle_replicas();
    } else if (e->kind == EventKind::kTransferEnd) {
      on_transfer_end(*e);
    } else {
      if (e->request != runs_[static_cast<std::size_t>(e->replica)].stamp) continue;  // requeued (undefer_run)
      const double started = on_iteration_end(replicas_[static_cast<std::size_t>(e->replica)], e->time);
      if (progress_due()) {
        progress(started, arrived_, finished_count_);
        next_report_ = iterations_ + 4096;
      }
    }
    if (fleet) prefetch_next(true);
  }
  progress_ = nullptr;
#ifndef NDEBUG
  for (const DecodeRun& run : runs_)
    assert(run.left == 0 && run.lag == 0 && run.tokens == 0 && !run.deferred() && !run.applied && !run.prepared);
#endif
  for (const Replica& replica : replicas_) {
    const Scheduler& sched = replica.scheduler();
    assert(replica.backlog.empty() || sched.num_waiting() > 0);
    if (!sched.idle())
      throw SimulationError(fmt::format("simulation stopped at t = {:.3f} s with {} waiting, {} running, {} swapped "
                                        "requests{} and nothing schedulable",
                                        now(), replica.num_waiting(), sched.num_running(), sched.num_swapped(),
                                        replicas_.size() > 1 ? fmt::format(" on replica {}", replica.index()) : ""));
  }
  if (const Request* head = handoff_.head())
    throw SimulationError(fmt::format("simulation stopped at t = {:.3f} s with {} requests prefilled and no decode "
                                      "replica with room for their KV (request {} first)",
                                      now(), handoff_.num_queued(), head->id));
  if (progress) progress(now(), arrived_, finished_count_);
}

namespace {

// Prefetches every cache line of `object` (its own bytes, nothing it points to).
template <typename T>
void prefetch_object(const T& object, std::size_t bytes = sizeof(T)) {
  const char* p = reinterpret_cast<const char*>(&object);
  for (std::size_t at = 0; at < bytes; at += 64) __builtin_prefetch(p + at);
}

}  // namespace

void Simulation::prefetch_next(bool deep) const {
  const Event* next = queue_->peek();
  if (!next || next->kind != EventKind::kIterationEnd) return;
  const auto i = static_cast<std::size_t>(next->replica);
  const DecodeRun& run = runs_[i];
  const Replica& replica = replicas_[i];
  if (!deep) {
    prefetch_object(run);
    prefetch_object(replica);
    return;
  }
  // What the replica points to, read from the lines fetched above: the policy's objects (their
  // first lines, about the size of the paged ones: a hint, never read) and the run's arrays.
  prefetch_object(replica.scheduler(), 576);
  prefetch_object(replica.allocator(), 768);
  prefetch_object(replica.cost(), 640);
  if (run.deferred()) prefetch_object(run.ahead[run.ahead_started], 8);
  if (run.left > 0 || run.deferred()) {
    if (!run.members.empty()) prefetch_object(run.members.front(), 64);
    if (!run.seqs.empty()) prefetch_object(run.seqs.front(), 64);
  } else if (!run.prepared) {
    // The event passes over the plan's requests (settling, applying and planning): their first
    // two lines and their sequences.
    for (const Request* r : replica.plan.decodes) prefetch_object(*r, 128);
    if (run.lag > 0) replica.allocator().prefetch(run.seqs);
  }
}

void Simulation::refresh_loads() {
  for (const std::int32_t r : stale_loads_) {
    const auto i = static_cast<std::size_t>(r);
    const std::int64_t load = replicas_[i].outstanding();
    if (i < outstanding_.size()) outstanding_.set(i, load);
    else decode_outstanding_.set(i - outstanding_.size(), load);
    load_stale_[i] = 0;
  }
  stale_loads_.clear();
}

ReplicaLoads Simulation::loads_for(const Router& router, std::span<Replica> replicas, bool decode) {
  refresh_loads();
  ReplicaLoads loads{decode ? decode_outstanding_ : outstanding_};
  if (!router.reads_free_slots()) return loads;
  FreeSlotsIndex& index = decode ? decode_free_slots_ : free_slots_;
  // A deferred run's repeats that start before the event being handled (an arrival, or the
  // iteration end that hands a request off) have not started yet: its replica may hold fewer
  // free slots than its entry says.
  const auto may_lag = [&](std::int32_t i) {
    return defer_runs_ && runs_[static_cast<std::size_t>(replicas[static_cast<std::size_t>(i)].index())].deferred();
  };
  assert(index.entries_hold(replicas, may_lag));
  loads.most_free_slots = index.most_free(replicas, [&](std::int32_t i) {
    if (!may_lag(i)) return false;
    replay_run(replicas[static_cast<std::size_t>(i)], &current_);
    return true;
  });
  return loads;
}

void Simulation::on_arrival() {
  traces::TraceRequest t = std::move(*next_);
  Request* r = new_request();
  set_arrival_fields(*r, t);
  if (!t.hash_ids.empty()) ++requests_with_token_ids_;
  set_block_hashes(*r, t);
  std::string why, key;
  int refused_on = 0;  // the replica whose pool refuses r
  if (!can_ever_run(*r, &why, &key, &refused_on) && !fit_oversize(*r, t, why, key, refused_on)) {
    free_requests_.push_back(r);
    read_next();
    return;
  }
  if (router_) {
    const std::span<Replica> candidates = prefill_replicas();
    r->replica = router_->route(*r, candidates, loads_for(*router_, candidates, false));
  }
  Replica& replica = replicas_[static_cast<std::size_t>(r->replica)];
  // replica's repeats that start before this arrival start now: its observers see them first.
  if (defer_runs_) replay_run(replica, &current_);
  // A request joining the back of a waiting queue whose head the run's plans leave waiting
  // is planned by none of them (its prompt's keys, held for the prefix cache, aside). With
  // LoRA adapters a policy may skip the head and admit one behind it (vLLM's max_loras).
  // Joining the waiting queue changes neither the allocator nor the running requests: the run
  // settles when its iteration in flight ends (stop_run). Holding a prompt's keys, adapters
  // and steps planned ahead change more now.
  const bool cut = replica.scheduler().settings().async_steps > 0 || replica.scheduler().adapters() ||
                   (!r->block_hashes.empty() && replica.allocator().caches_prefixes());
  if (cut) cut_run(replica);
  else if (replica.num_waiting() == 0) stop_run(replica);
  ++replica.routed_requests;
  replica.routed_tokens += r->final_tokens();
  ++arrived_;
  // Behind a queue longer than the policy reads (Scheduler::waiting_lookahead), r waits in
  // the replica's backlog as the fields it arrived with.
  const std::size_t lookahead = backlog_lookahead_[static_cast<std::size_t>(replica.index())];
  const bool to_backlog = !replica.backlog.empty() || replica.scheduler().num_waiting() >= lookahead;
  // Asynchronous scheduling: the step after the one in flight is planned already, so the
  // scheduler first sees r at the (async_steps + 1)-th iteration start from now.
  if (const std::int64_t lag = replica.scheduler().settings().async_steps; lag > 0 && replica.busy)
    replica.held.emplace_back(r, lag + 1);
  else if (!to_backlog)
    replica.scheduler().add_request(r);
  for (IterationObserver* o : observers_) o->on_arrival(*r);
  for (IterationObserver* o : observers_of(r->replica)) o->on_arrival(*r);
  if (to_backlog) {
    replica.backlog.push_back(
        {r->id, r->arrival_s, r->prompt_tokens, r->output_tokens, r->n, r->beam_width, r->adapter});
    free_requests_.push_back(r);
  }
  if (DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())]; run.left > 0)
    run.waiting = static_cast<std::int64_t>(replica.num_waiting());
  if (!replica.busy) list_idle(replica);
  mark_load(replica);
  read_next();
}

Request* Simulation::new_request() {
  if (free_requests_.empty()) {
    constexpr std::size_t kChunk = 1024;
    if (request_chunks_.empty() || chunk_used_ == kChunk) {
      request_chunks_.push_back(std::make_unique<Request[]>(kChunk));
      chunk_used_ = 0;
    }
    return &request_chunks_.back()[chunk_used_++];
  }
  Request* r = free_requests_.back();
  free_requests_.pop_back();
  // A new Request, keeping the vectors' capacity for the next owner.
  std::vector<alloc::BlockHash> block_hashes = std::move(r->block_hashes);
  SeqHandles seqs = std::move(r->seqs);
  *r = Request{};
  block_hashes.clear();
  seqs.clear();
  r->block_hashes = std::move(block_hashes);
  r->seqs = std::move(seqs);
  return r;
}

bool Simulation::can_ever_run(const Request& r, std::string* why, std::string* key, int* refusing) const {
  if (max_model_len_ > 0 && r.final_tokens() > max_model_len_) {
    *key = "max_model_len";
    if (refusing) *refusing = -1;
    *why = fmt::format("prompt {} + output {} tokens exceed max_model_len = {} tokens", r.prompt_tokens,
                       r.output_tokens, max_model_len_);
    return false;
  }
  // The first replica that refuses (the lowest index of the first configuration that does).
  const auto refuses = [&](const Replica& replica) {
    if (replica.scheduler().can_ever_schedule(r, why, key)) return false;
    if (replicas_.size() > 1) *why = fmt::format("on replica {}: {}", replica.index(), *why);
    if (refusing) *refusing = replica.index();
    return true;
  };
  if (admission_replicas_.empty()) {
    for (const Replica& replica : replicas_)
      if (refuses(replica)) return false;
    return true;
  }
  for (const std::int32_t i : admission_replicas_)
    if (refuses(replicas_[static_cast<std::size_t>(i)])) return false;
  return true;
}

void Simulation::set_block_hashes(Request& r, const traces::TraceRequest& t) const {
  if (prefix_block_size_ <= 0 || t.hash_ids.empty()) return;
  if (hash_block_tokens_ <= 0)
    throw SimulationError(fmt::format(
        "request {} carries hash_ids but the trace does not say how many tokens one id covers, so the prefix "
        "cache cannot use them: set workload.trace.hash_block_tokens (Mooncake: 512)",
        t.id));
  r.block_hashes = prompt_block_keys(t.hash_ids, hash_block_tokens_, r.prompt_tokens, prefix_block_size_);
}

bool Simulation::fit_oversize(Request& r, const traces::TraceRequest& t, const std::string& why,
                              const std::string& key, int refusing) {
  switch (oversize_) {
    case traces::OversizePolicy::kError:
      throw UnschedulableRequest(
          fmt::format("request {} (arrival {} s) can never be scheduled: {}", r.id, r.arrival_s, why), key, refusing);
    case traces::OversizePolicy::kDrop:
      ++oversize_dropped_;
      return false;
    case traces::OversizePolicy::kTruncate:
      break;
  }
  // The longest prompt that fits, by bisection: fitting only gets harder as the prompt grows.
  const std::int64_t original = r.prompt_tokens;
  std::int64_t lo = 0, hi = original;  // INVARIANT: a prompt of lo fits (0: none known), hi does not
  std::string unused;
  r.block_hashes.clear();  // keyed to the whole prompt; made again for the cut one below
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    r.prompt_tokens = mid;
    (can_ever_run(r, &unused, &unused) ? lo : hi) = mid;
  }
  if (lo == 0) {
    r.prompt_tokens = original;
    ++oversize_dropped_;
    return false;
  }
  r.prompt_tokens = lo;
  set_block_hashes(r, t);
  ++oversize_truncated_;
  return true;
}

void Simulation::release_held(Replica& replica, bool all) {
  for (auto& h : replica.held) --h.second;
  while (!replica.held.empty() && (all || replica.held.front().second <= 0)) {
    replica.scheduler().add_request(replica.held.front().first);
    replica.held.pop_front();
  }
}

void Simulation::refill_waiting(Replica& replica) {
  const std::size_t lookahead = backlog_lookahead_[static_cast<std::size_t>(replica.index())];
  while (!replica.backlog.empty() && replica.scheduler().num_waiting() < lookahead) {
    const Replica::BacklogEntry& e = replica.backlog.front();
    Request* r = new_request();
    set_arrival_fields(*r, e);
    r->replica = replica.index();
    replica.scheduler().add_request(r);
    replica.backlog.pop_front();
  }
}

void Simulation::start_idle_replicas() {
  // The scan of every replica in index order that this stands for, over the few that may
  // plan something: start_iteration(replica) changes that replica alone, and on one it left
  // idle holding no request it changes nothing again until a request is routed there
  // (on_arrival lists it then; a KV transfer's end starts an iteration itself).
  std::sort(maybe_idle_.begin(), maybe_idle_.end());
  std::size_t kept = 0;
  for (const std::int32_t i : maybe_idle_) {
    Replica& replica = replicas_[static_cast<std::size_t>(i)];
    if (!replica.busy) start_iteration(replica);
    if (!replica.busy && holds_requests(replica)) maybe_idle_[kept++] = i;
    else listed_idle_[static_cast<std::size_t>(i)] = 0;
  }
  maybe_idle_.resize(kept);
}

bool Simulation::holds_requests(const Replica& replica) const {
  return replica.outstanding() > 0 || replica.scheduler().num_retired() > 0 || replica.pending_swap_out != 0 ||
         replica.pending_swap_in != 0;
}

void Simulation::list_idle(const Replica& replica) {
  char& listed = listed_idle_[static_cast<std::size_t>(replica.index())];
  if (listed) return;
  listed = 1;
  maybe_idle_.push_back(replica.index());
}

void Simulation::start_iteration(Replica& replica) {
  const double now_s = now();
  Scheduler& scheduler = replica.scheduler();
  IterationPlan& plan = replica.plan;
  // An engine with nothing to run plans the held requests at once: no step is in flight.
  if (!replica.held.empty()) release_held(replica, scheduler.idle());
  // Swaps of plans that ran no compute are charged to the next iteration that runs.
  std::int64_t swap_out = replica.pending_swap_out, swap_in = replica.pending_swap_in;
  // A plan with no compute but preemptions changed the state: plan again at once.
  for (int attempt = 0; attempt < 4; ++attempt) {
    refill_waiting(replica);
    scheduler.schedule(now_s, plan);
    swap_out += plan.swap_out_blocks;
    swap_in += plan.swap_in_blocks;
    if (plan.has_compute()) break;
    if (scheduler.num_retired() > 0 || !replica.held.empty()) {
      // Nothing to run: no step is in flight, so the finished requests' memory comes back
      // and the held requests are planned now.
      retire_finished(replica);
      release_held(replica, true);
      --attempt;  // not an attempt: the scheduler has memory or requests it lacked
      continue;
    }
    if (!plan.changed_state()) break;
  }
  assert(replica.held.empty() || plan.has_compute());  // nothing stays held without a step in flight
  replica.pending_swap_out = replica.pending_swap_in = 0;
  if (!plan.has_compute()) {
    replica.pending_swap_out = swap_out;
    replica.pending_swap_in = swap_in;
    if (!scheduler.idle() && !next_ && handoff_.idle())
      throw SimulationError(fmt::format("no progress at t = {:.3f} s: {} waiting, {} running, {} swapped requests{}, "
                                        "but nothing fits in the KV pool",
                                        now_s, replica.num_waiting(), scheduler.num_running(),
                                        scheduler.num_swapped(),
                                        replicas_.size() > 1 ? fmt::format(" on replica {}", replica.index()) : ""));
    mark_load(replica);
    list_idle(replica);
    return;  // idle until the next arrival
  }

  const IterationPrice price = price_iteration(replica, swap_out, swap_in, global_.get());
  const BatchShape& shape = price.shape;
  const double dt = price.seconds;
  alloc::KvAllocator& a = scheduler.allocator();

  IterationSample s;
  s.index = replica.iterations;
  s.start_s = now_s;
  s.duration_s = dt;
  s.batch_requests = plan.batched_requests();
  s.batch_seqs = price.batch_seqs;
  s.prefill_tokens = shape.prefill_tokens;
  s.decode_tokens = shape.decode_seqs;
  sample_state(replica, s);
  a.take_pending_copies();  // the kernels would run these copies now
  s.swap_out_blocks = swap_out;
  s.swap_in_blocks = swap_in;
  s.preemptions = static_cast<std::int32_t>(scheduler.preemptions_total() - replica.preemptions_reported);
  replica.preemptions_reported = scheduler.preemptions_total();
  for (IterationObserver* o : iteration_observers_) o->on_replica_iteration(replica.index(), s, plan);
  for (IterationObserver* o : observers_of(replica.index())) o->on_iteration(s, plan);
  // The step just planned ran on the previous one's output: its finished requests' memory
  // comes back now (after the sample, which sees it held, as vLLM's scheduler did). The
  // sample is then not what the next iterations repeat: no decode run starts from it.
  const bool retired = scheduler.num_retired() > 0;
  if (retired) retire_finished(replica);

  ++replica.iterations;
  ++iterations_;
  replica.busy = true;
  if (skip_decode_runs_ && !retired) begin_run(replica, s, shape, price.swap_s);
  const DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  mark_load(replica);
  if (apply_ahead_ && !retired && run.left == 0) apply_ahead(replica, now_s + dt);
  if (!(run.prepared && begin_ahead(replica, now_s, now_s + dt)))
    schedule(now_s + dt, now_s, EventKind::kIterationEnd, replica.index(), run.stamp);
}

double Simulation::on_iteration_end(Replica& replica, double end) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  if (run.out_of_range_end > 0) [[unlikely]]
    time_out_of_range(run.out_of_range_end, EventKind::kIterationEnd, replica.index(), 0);
  if (run.deferred()) replay_run(replica, nullptr);  // the repeats priced ahead start first
  assert(!run.deferred());
  double t = end;
  double started = 0;  // when the iteration ending at t started, once t > end
  // The horizon below, once known: only applying a plan or starting transfers queues events.
  double horizon = 0;
  bool horizon_known = false;
  for (;;) {
    replica.busy = false;
    if (run.left > 0) {
      if (token_observers_.empty()) run.count_tokens(t);  // emit_run_tokens, inlined in the loop
      else emit_run_tokens(replica, t);
    } else {
      // A chained run's finish may skip the plan's pass (continue_run); else the plan applies.
      if (!run.chained || continue_run(replica, t) == RunEnd::kNotFinish) {
        settle_run(replica);
        run.chained = false;
        if (run.applied) run.applied = false;  // as the iteration started (apply_ahead)
        else apply_plan(replica, t);
      }
      mark_load(replica);  // finished requests, hand-offs (a run finishes none, and takes none in)
      horizon_known = false;
    }
    if (handoff_.head()) {
      start_transfers(t);  // may cut the run
      horizon_known = false;
    }
    if (run.left == 0 && !(skip_decode_runs_ && begin_run_at_end(replica))) {
      start_iteration(replica);  // schedules its end
      return t;
    }
    start_run_iteration(replica, t);
    const double next = t + run.sample.duration_s;
    if (!(next <= kMaxSimulatedSeconds) && t > end) [[unlikely]] {
      // This repeat starts ahead of the queue: the engine that plans every iteration meets its
      // end out of range at t, after the events queued before t, so the error waits for t.
      run.out_of_range_end = next;
      schedule(t, started, EventKind::kIterationEnd, replica.index(), run.stamp);
      return t;
    }
    // The engine that plans every iteration would queue this end and pop it before anything
    // that reads or changes replica: the next event, or with run_ahead_ the next arrival (only an
    // arrival touches replica; other replicas' events in between do not, TieOrder::kCanonical
    // orders this end where that engine would, and no observer reads the interleaving).
    if (!horizon_known) {
      horizon = !run_ahead_ ? queue_->next_time() : next_ ? next_->arrival_s : std::numeric_limits<double>::infinity();
      horizon_known = true;
    }
    if (run.left == 0 || !(next < horizon) || progress_due()) {
      if (defer_runs_ && run.left > 0 && !progress_due() && !handoff_.head()) defer_run(replica, t, next);
      else schedule(next, t, EventKind::kIterationEnd, replica.index(), run.stamp);
      return t;
    }
    check_time(next, EventKind::kIterationEnd, replica.index());
    started = t;
    t = next;
  }
}

void Simulation::sample_state(const Replica& replica, IterationSample& s) const {
  const Scheduler& scheduler = replica.scheduler();
  const alloc::KvAllocator& a = replica.allocator();
  s.waiting = static_cast<std::int64_t>(replica.num_waiting());
  s.running = static_cast<std::int64_t>(scheduler.num_running());
  s.swapped = static_cast<std::int64_t>(scheduler.num_swapped());
  s.memory = a.breakdown();
  s.memory.draft_kv = replica.draft_kv_slots;
  if (const Request* head = scheduler.waiting_head()) s.unusable_free = a.unusable_free(scheduler.admit_request(*head, 0));
  const alloc::AllocatorStats st = a.stats();
  s.logical_blocks = st.logical_blocks;
  s.physical_blocks = st.physical_blocks;
}

void Simulation::emit_run_tokens(Replica& replica, double t) {
  if (!token_observers_.empty()) {  // they get every token as it comes
    for (Request* r : replica.plan.decodes) emit_token(r, t);
    return;
  }
  runs_[static_cast<std::size_t>(replica.index())].count_tokens(t);
}

void Simulation::finish_speculative_step(Replica& replica, Request* r, double end) {
  // The accepted proposals come out with the target's own token (tokens past the last are
  // dropped); verification keeps their KV and frees the rejected and lookahead slots.
  for (std::int64_t i = 0; i < r->spec_accepted && r->state != RequestState::kFinished; ++i) emit_token(r, end);
  if (r->state != RequestState::kFinished) replica.allocator().verify_proposed(r->seqs.front());
  r->spec_step = false;
  r->spec_proposed = r->spec_accepted = r->spec_emitted = 0;
}

void Simulation::apply_plan(Replica& replica, double end) {
  Scheduler& scheduler = replica.scheduler();
  const IterationPlan& plan = replica.plan;
  finished_.clear();
  for (const PrefillWork& w : plan.prefills) {
    Request* r = w.request;
    r->prefilled += w.new_tokens;
    if (!w.completes) continue;
    if (global_) global_->on_prefill_complete(r->block_hashes);
    r->to_prefill = r->prefilled = 0;
    if (r->output_tokens == 0) {  // nothing to generate: done once the prompt is processed
      r->first_token_s = r->finish_s = r->last_token_s = end;
      r->state = RequestState::kFinished;
      finished_.push_back(r);
      continue;
    }
    emit_token(r, end);
    if (handoff_.is_prefill_replica(replica) && r->state != RequestState::kFinished) {
      hand_off(replica, r);
      continue;
    }
    if (r->state != RequestState::kFinished && static_cast<std::int32_t>(r->seqs.size()) < r->width()) {
      // A failed fork preempted r; it forks again after its re-prefill.
      const bool forked = scheduler.fork_to_width(r);
      if (forked && r->beam_width > 1) beams_->on_group_forked(r->id, static_cast<std::int32_t>(r->seqs.size()));
    }
  }
  for (Request* r : plan.decodes) {
    emit_token(r, end);
    if (r->spec_step) finish_speculative_step(replica, r, end);
    if (r->state != RequestState::kFinished && r->beam_width > 1) {
      beams_->draw_parents(r->id, static_cast<std::int32_t>(r->seqs.size()), parents_);
      scheduler.reshape_beams(r, parents_);
    }
  }
  // Under asynchronous scheduling the next step is planned before this one's output is
  // applied: finished requests keep their KV until then (retire_finished).
  const bool retire = scheduler.settings().async_steps > 0;
  for (Request* r : finished_) {
    if (r->beam_width > 1) beams_->on_finished(r->id);
    if (retire && !r->seqs.empty()) {
      scheduler.retire(r);
      continue;
    }
    scheduler.on_finished(r);
    finish_request(replica, r);
  }
}

void Simulation::finish_request(Replica& replica, Request* r) {
  for (IterationObserver* o : observers_) o->on_request_finished(*r);
  for (IterationObserver* o : observers_of(replica.index())) o->on_request_finished(*r);
  ++finished_count_;
  free_requests_.push_back(r);
}

void Simulation::retire_finished(Replica& replica) {
  for (Request* r : replica.scheduler().release_retired()) finish_request(replica, r);
}

}  // namespace pagesim::sim
