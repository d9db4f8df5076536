// Simulation's decode runs (docs/engine.md, decode_run.h): beginning one, starting its repeats,
// deferring them in a fleet, settling and cutting it.
#include "sim/engine/simulation.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include <fmt/format.h>

namespace pagesim::sim {

void Simulation::undefer_run(Replica& replica) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  if (!run.deferred()) return;
  assert(defer_runs_);
  replay_run(replica, &current_);
  if (run.deferred()) {
    // The queued end is a later repeat's: replica's iteration in flight ends first now.
    ++run.stamp;
    schedule(run.inflight_end_s, run.inflight_start_s, EventKind::kIterationEnd, replica.index(), run.stamp);
  }
  if (run.begins_at_end) run.unbegin();  // the end requeued above asks again
  run.ahead.clear();
  run.ahead_started = 0;
}

void Simulation::undefer_runs() {
  for (const std::int32_t i : deferred_) {
    undefer_run(replicas_[static_cast<std::size_t>(i)]);
    listed_deferred_[static_cast<std::size_t>(i)] = 0;
  }
  deferred_.clear();
}

void Simulation::cut_run(Replica& replica) {
  stop_run(replica);
  settle_run(replica);
}

void Simulation::stop_run(Replica& replica) {
  undefer_run(replica);
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  run.left = 0;
  run.chained = false;
}

void Simulation::defer_run(Replica& replica, double start, double end) {
  // A chunk prices the run up to its end (the next finish bounds `left`), at most 128 repeats:
  // in a fleet a queued end costs more than pricing repeats that an arrival's cut wastes (the
  // end's event reads the replica's state cold; the pricing reads the run alone), so chunks
  // start large (against chunks doubling from 8: 0.97 of the CPU at 10,000 replicas,
  // bench/sim/README.md).
  constexpr std::int64_t kChunk = 128;
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  assert(!run.deferred() && run.left > 0 && !handoff_.head());
  check_time(end, EventKind::kIterationEnd, replica.index());
  // Only a hand-off that waits undefers every run (undefer_runs): without hand-offs, no list.
  if (char& listed = listed_deferred_[static_cast<std::size_t>(replica.index())]; handoff_.enabled() && !listed) {
    listed = 1;
    deferred_.push_back(replica.index());
  }
  run.inflight_start_s = start;
  run.inflight_end_s = end;
  run.ahead.clear();
  run.ahead_started = 0;
  // start_run_iteration's pricing (DecodeRun::repeat_seconds), each repeat one token longer.
  run.ahead.resize(static_cast<std::size_t>(std::min(run.left, kChunk)));
  replica.cost().decode_repeat_seconds(run.shape, run.price, run.swap_s, run.ahead);
  double last_start = start, last_end = end;
  for (std::size_t i = 0; i < run.ahead.size(); ++i) {
    const double next = last_end + run.ahead[i];
    if (!(next <= kMaxSimulatedSeconds)) {  // the replay meets it and says so
      run.ahead.resize(i);
      break;
    }
    last_start = last_end;
    last_end = next;
  }
  schedule(last_end, last_start, EventKind::kIterationEnd, replica.index(), run.stamp);
}

void Simulation::replay_run(Replica& replica, const Event* before) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  while (run.deferred()) {
    const double t = run.inflight_end_s;
    if (before && !queue_->pops_before(t, run.inflight_start_s, EventKind::kIterationEnd, replica.index(), *before))
      return;
    if (run.begins_at_end) {
      // on_iteration_end at the end of the iteration begin_ahead deferred from: its plan
      // applied ahead, the run begun then.
      run.begins_at_end = false;
      replica.busy = false;
      mark_load(replica);
    } else {
      // on_iteration_end's loop at t, the run going on (no token observers: run_ahead_).
      run.count_tokens(t);
    }
    start_run_iteration(replica, t);
    run.inflight_start_s = t;
    run.inflight_end_s = t + run.sample.duration_s;
  }
}

void Simulation::begin_run(Replica& replica, const IterationSample& s, const BatchShape& shape, double swap_s) {
  const Scheduler& scheduler = replica.scheduler();
  const IterationPlan& plan = replica.plan;
  if (!scheduler.traits().repeats_decode_plans || !plan.prefills.empty() || plan.decodes.empty() ||
      s.preemptions > 0 || s.swap_out_blocks > 0 || s.swap_in_blocks > 0 || !replica.held.empty() ||
      plan.decodes.size() != scheduler.num_running() || (global_ && replica.num_waiting() > 0))
    return;
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  assert(run.left == 0 && run.lag == 0 && run.tokens == 0);
  run.chained = false;
  run.members.clear();
  // Iteration j after this one repeats it when no request finished at the ends of 0..j-1.
  std::int64_t left = std::numeric_limits<std::int64_t>::max();
  for (const Request* r : plan.decodes) {
    // Speculative steps emit a drawn number of tokens: never a run.
    if (r->beam_width > 1 || r->first_token_s < 0 || r->spec_step) return;
    const std::int64_t rest = r->output_tokens - r->generated - 1;  // after this iteration's token
    left = std::min(left, rest);
    run.members.push_back({run.started + rest, static_cast<std::int32_t>(r->seqs.size())});
  }
  if (left <= 0) return;
  const std::int64_t next_finish = run.started + left;
  left = run_limit(replica, left);
  if (left <= 0) return;
  run.seqs.clear();
  for (const Request* r : plan.decodes) run.seqs.insert(run.seqs.end(), r->seqs.begin(), r->seqs.end());
  replica.allocator().decode_run_rounds(run.seqs, scheduler.decode_repeat_free_slots(plan), left, &run.rounds);
  if (run.rounds.rounds <= 0) return;
  run.left = run.rounds.rounds;
  run.round = 0;
  run.sample = s;
  run.waiting = static_cast<std::int64_t>(replica.num_waiting());
  run.shape = shape;
  run.price = replica.cost().decode_run_constant(shape);
  run.swap_s = swap_s;
  replica.plan.tier = {};  // priced for this iteration only
  run.next_finish = next_finish;
  run.chained = scheduler.decodes_running_in_order(plan);
}

bool Simulation::may_begin_run_at_end(const Replica& replica) const {
  const Scheduler& scheduler = replica.scheduler();
  return scheduler.traits().repeats_decode_plans && replica.held.empty() && replica.pending_swap_out == 0 &&
         replica.pending_swap_in == 0 && !global_ && !scheduler.adapters() && scheduler.settings().async_steps == 0 &&
         !replica.allocator().caches_prefixes();
}

bool Simulation::next_plan_decodes_running(const Replica& replica) const {
  const Scheduler& scheduler = replica.scheduler();
  // The decodes' appends take at most a block a running sequence: an admission that even the
  // most they take leaves room for is sure. (A backlog stands behind a non-empty queue, whose
  // head refill_waiting does not change.)
  return scheduler.num_running() > 0 && !scheduler.admits_after_decodes(scheduler.num_running_seqs()) &&
         (scheduler.num_waiting() > 0 || replica.backlog.empty()) && scheduler.promises_running_decodes();
}

bool Simulation::begin_run_at_end(Replica& replica) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  if (run.prepared) {
    // Prepared as the iteration started (apply_ahead). Only arrivals came since, which change
    // the waiting queue alone: what reads the queue is asked again.
    run.prepared = false;
    if (!next_plan_decodes_running(replica)) return false;
#ifndef NDEBUG
    {  // what begin_run_at_end would prepare now, from the requests and the allocator
      const DecodeRun prepared = run;
      [[maybe_unused]] const bool again = may_begin_run_at_end(replica) && prepare_run_at_end(replica);
      assert(again && run.members == prepared.members && run.seqs == prepared.seqs && run.rounds == prepared.rounds &&
             run.shape == prepared.shape && run.next_finish == prepared.next_finish);
    }
#endif
  } else if (!may_begin_run_at_end(replica) || !next_plan_decodes_running(replica) || !prepare_run_at_end(replica)) {
    return false;
  }
  if (!start_rounds(replica, run.shape)) return false;
  run.chained = true;
  return true;
}

bool Simulation::prepare_run_at_end(Replica& replica) {
  Scheduler& scheduler = replica.scheduler();
  IterationPlan& plan = replica.plan;  // applied: schedule() would clear it first too
  if (!scheduler.plan_running_decodes(plan)) return false;
  // Iteration j from the next (j = 1) is planned so when no request finished at the ends of
  // 1..j-1.
  std::int64_t rest_least = std::numeric_limits<std::int64_t>::max();
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  assert(run.left == 0 && run.lag == 0 && run.tokens == 0);
  run.chained = false;
  run.seqs.clear();
  run.members.clear();
  BatchShape shape;  // the next iteration's, one token shorter per sequence (run.shape's way)
  for (const Request* r : plan.decodes) {
    if (r->beam_width > 1 || r->first_token_s < 0 || r->in_prefill() || r->spec_step) return false;
    const std::int64_t rest = r->output_tokens - r->generated;
    rest_least = std::min(rest_least, rest);
    run.members.push_back({run.started + rest, static_cast<std::int32_t>(r->seqs.size())});
    const std::int64_t context = r->prompt_tokens + r->generated - 1;
    for (const alloc::SeqHandle& h : r->seqs) {
      run.seqs.push_back(h);
      shape.add_decode_seq(context);
    }
  }
  const std::int64_t left = run_limit(replica, rest_least);
  if (left <= 0) return false;
  replica.allocator().decode_run_rounds(run.seqs, scheduler.decode_repeat_free_slots(plan), left, &run.rounds);
  if (run.rounds.rounds <= 0) return false;
  run.shape = shape;
  run.next_finish = run.started + rest_least;
  return true;
}

void Simulation::apply_ahead(Replica& replica, double end) {
  const IterationPlan& plan = replica.plan;
  if (!may_begin_run_at_end(replica)) return;
  // apply_plan then changes these requests alone (no global cache, hand-off, fork, beam,
  // speculative step or finish), and no one reads them before `end` (apply_ahead_).
  for (const PrefillWork& w : plan.prefills) {
    const Request* r = w.request;
    if (!w.completes || r->width() != 1 || r->spec_step || r->generated + 1 >= r->output_tokens) return;
  }
  for (const Request* r : plan.decodes)
    if (r->beam_width > 1 || r->spec_step || r->generated + 1 >= r->output_tokens) return;
  for (const PrefillWork& w : plan.prefills) {
    Request* r = w.request;
    r->to_prefill = r->prefilled = 0;  // apply_plan's: the prefill completes
    emit_token(r, end);
  }
  for (Request* r : plan.decodes) emit_token(r, end);
  assert(std::none_of(plan.decodes.begin(), plan.decodes.end(),
                      [](const Request* r) { return r->state == RequestState::kFinished; }));
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  run.applied = true;
  run.prepared = next_plan_decodes_running(replica) && prepare_run_at_end(replica);
}

bool Simulation::begin_ahead(Replica& replica, double start, double end) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  assert(run.prepared && run.applied && run.left == 0 && !run.deferred());
  if (!defer_runs_ || progress_due() || handoff_.head()) return false;
  if (!begin_run_at_end(replica)) {
    run.prepared = true;  // it read what `end` would read; `end` asks again
    return false;
  }
  run.applied = false;
  run.begins_at_end = true;
  defer_run(replica, start, end);
  if (!run.deferred()) {
    // Its first repeat would end past the clock's range: defer_run queued `end`, which then
    // begins the run as if nothing had been done ahead (and meets the range there).
    run.unbegin();
  }
  return true;
}

std::int64_t Simulation::run_limit(const Replica& replica, std::int64_t left) const {
  for (const IterationObserver* o : observers_)
    left = std::min(left, o->decode_run_limit(replica.index(), replica.iterations));
  for (const IterationObserver* o : observers_of(replica.index()))
    left = std::min(left, o->decode_run_limit(replica.index(), replica.iterations));
  return left;
}

bool Simulation::begin_rounds(Replica& replica, std::int64_t left, const BatchShape& shape) {
  if (left <= 0) return false;
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  replica.allocator().decode_run_rounds(run.seqs, replica.scheduler().decode_repeat_free_slots(replica.plan), left,
                                        &run.rounds);
  return start_rounds(replica, shape);
}

bool Simulation::start_rounds(Replica& replica, const BatchShape& shape) {
  Scheduler& scheduler = replica.scheduler();
  const IterationPlan& plan = replica.plan;
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  alloc::KvAllocator& a = replica.allocator();
  if (run.rounds.rounds <= 0 || scheduler.admits_after_decodes(run.rounds.cycle_blocks.front())) return false;
  // The sample start_iteration would take before the plan's appends (the first round).
  IterationSample& s = run.sample;
  s = IterationSample{};
  s.batch_requests = plan.batched_requests();
  s.batch_seqs = plan.decode_seqs;
  s.decode_tokens = shape.decode_seqs;
  sample_state(replica, s);  // (unusable_free, like every repeat's, before the appends: runs leave it alone)
  a.take_pending_copies();
  const CostModel& cost = replica.cost();
  run.left = run.rounds.rounds;
  run.round = 0;
  run.waiting = s.waiting;
  run.shape = shape;
  run.price = cost.decode_run_constant(shape);
  run.swap_s = cost.swap_seconds(0, a.block_size()) + cost.swap_seconds(0, a.block_size());
  return true;
}

Simulation::RunEnd Simulation::continue_run(Replica& replica, double t) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  Scheduler& scheduler = replica.scheduler();
  IterationPlan& plan = replica.plan;
  assert(run.chained && run.left == 0 && !run.deferred());
  // begin_run_at_end's conditions that a finish cannot change, and apply_plan's that let the
  // others' tokens wait (no token observer) and reads nothing else of theirs.
  if (run.started != run.next_finish || !token_observers_.empty() || handoff_.head() || !may_begin_run_at_end(replica))
    return RunEnd::kNotFinish;
  assert(run.members.size() == plan.decodes.size() && scheduler.decodes_running_in_order(plan));
  settle_rounds(replica);  // every sequence, as settle_run: the blocks the rounds take stay the same
  // apply_plan for the finished (plan order), who leave the plan, its shape and run.seqs; the
  // others' token at t waits with theirs before it.
  finished_.clear();
  std::size_t kept = 0, from = 0, seqs_kept = 0;
  std::int64_t next_finish = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < plan.decodes.size(); ++i) {
    const DecodeRun::Member m = run.members[i];
    Request* r = plan.decodes[i];
    if (m.finish == run.started) {
      catch_up_tokens(run, *r);
      emit_token(r, t);
      assert(r->state == RequestState::kFinished && static_cast<std::int32_t>(r->seqs.size()) == m.seqs);
      // Its sequences' contexts in run.shape, as begin_run_at_end counts them.
      run.shape.decode_seqs -= m.seqs;
      run.shape.decode_context_tokens -= m.seqs * (r->prompt_tokens + r->generated - 1);
      plan.decode_seqs -= m.seqs;
    } else {
      next_finish = std::min(next_finish, m.finish);
      plan.decodes[kept] = r;
      run.members[kept++] = m;
      std::copy_n(run.seqs.begin() + static_cast<std::ptrdiff_t>(from), m.seqs,
                  run.seqs.begin() + static_cast<std::ptrdiff_t>(seqs_kept));
      seqs_kept += static_cast<std::size_t>(m.seqs);
    }
    from += static_cast<std::size_t>(m.seqs);
  }
  assert(!finished_.empty() && from == run.seqs.size());
  plan.decodes.resize(kept);
  run.members.resize(kept);
  run.seqs.resize(seqs_kept);
  run.count_tokens(t);
  for (Request* r : finished_) {
    scheduler.on_finished(r);
    finish_request(replica, r);
  }
  // plan_running_decodes' plan: the running requests (in order, as the plan kept them).
  plan.prefills.clear();
  plan.preempted.clear();
  plan.swap_out_blocks = plan.swap_in_blocks = 0;
  plan.recompute_preemptions = plan.swap_preemptions = 0;
  plan.tier = {};
  assert(scheduler.decodes_running_in_order(plan));
  // begin_run_at_end's checks on what the finish changed (they read no request).
  if (!next_plan_decodes_running(replica) ||
      !begin_rounds(replica, run_limit(replica, next_finish - run.started), run.shape)) {
    settle_run(replica);
    run.chained = false;
    return RunEnd::kFinished;
  }
#ifndef NDEBUG
  {  // begin_run_at_end's shape, from the requests (their tokens caught up here in thought)
    BatchShape shape;
    for (const Request* r : plan.decodes)
      for (std::size_t k = 0; k < r->seqs.size(); ++k) shape.add_decode_seq(r->prompt_tokens + r->generated + run.tokens - 1);
    assert(shape.decode_seqs == run.shape.decode_seqs && shape.decode_context_tokens == run.shape.decode_context_tokens);
  }
#endif
  run.next_finish = next_finish;
  return RunEnd::kContinued;
}

void Simulation::start_run_iteration(Replica& replica, double now_s) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  IterationSample& s = run.sample;
  run.shape.decode_context_tokens += run.shape.decode_seqs;  // every context one token longer
  s.index = replica.iterations;
  s.start_s = now_s;
  assert(run.waiting == static_cast<std::int64_t>(replica.num_waiting()));
  s.waiting = run.waiting;  // arrivals join behind (on_arrival)
  if (run.deferred()) {
    s.duration_s = run.ahead[run.ahead_started++];
    assert(s.duration_s == run.repeat_seconds(replica.cost(), run.shape));
  } else {
    s.duration_s = run.repeat_seconds(replica.cost(), run.shape);
  }
  const alloc::DecodeRound round = run.rounds.round(run.round);
  if (++run.round == run.rounds.cycle_size()) run.round = 0;
  round.apply_to(s.memory);
  replica.run_free_slots += round.free;
  mark_free_slots(replica);
  s.logical_blocks += round.blocks;
  s.physical_blocks += round.blocks;
  s.swap_out_blocks = s.swap_in_blocks = 0;
  s.preemptions = 0;
  for (IterationObserver* o : iteration_observers_) o->on_replica_iteration(replica.index(), s, replica.plan);
  for (IterationObserver* o : observers_of(replica.index()))
    o->on_iteration(s, replica.plan);
  ++replica.iterations;
  ++iterations_;
  ++run.lag;
  --run.left;
  ++run.started;
  replica.busy = true;
}

void Simulation::settle_run(Replica& replica) {
  settle_rounds(replica);
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  if (run.tokens > 0) {
    for (Request* r : replica.plan.decodes) catch_up_tokens(run, *r);
    run.tokens = 0;
  }
}

void Simulation::catch_up_tokens(const DecodeRun& run, Request& r) {
  if (run.tokens == 0) return;
  // emit_token's updates, `tokens` times: the largest gap is the largest of the gaps (all >= 0).
  r.generated += run.tokens;
  r.max_token_gap_s = std::max({r.max_token_gap_s, run.first_token_s - r.last_token_s, run.max_gap_s});
  r.last_token_s = run.last_token_s;
}

void Simulation::settle_rounds(Replica& replica) {
  DecodeRun& run = runs_[static_cast<std::size_t>(replica.index())];
  if (run.lag > 0) {
#ifndef NDEBUG
    const std::int64_t free_before = replica.allocator().breakdown().free;
#endif
    replica.allocator().grow_rounds(run.seqs, run.lag);
    assert(replica.allocator().breakdown().free == free_before + replica.run_free_slots &&
           "a round's memory is what grow_rounds does");
    run.lag = 0;
    replica.run_free_slots = 0;
  }
}

}  // namespace pagesim::sim
