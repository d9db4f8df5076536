// DecodeRun: a replica's run of identical decode iterations, which the Simulation advances
// without its scheduler and allocator (AdvanceSettings::skip_decode_runs, docs/engine.md).
//
// Most iterations of a serving run decode the same requests as the one before. Once an
// iteration is planned that decodes every running request and does nothing else, and nothing
// can happen before the next `left` iterations start — no request finishes, every sequence
// grows without side effects and leaves the policy the free memory its checks need
// (KvAllocator::decode_run_rounds, Scheduler::decode_repeat_free_slots), no event touches the
// replica, no observer reads what a run leaves behind — those iterations repeat its plan: the
// engine derives each one's sample from the last (contexts one token longer, memory and
// blocks moved as `rounds` says), prices it with the cost model (the terms that stay the same
// computed once: CostModel::decode_run_constant), tells the observers, and
// catches up the rest later. A run may also begin where an iteration ends, when the policy
// promises that its next plan is such an iteration (Scheduler::plan_running_decodes): then
// that iteration is a repeat too, of a sample taken from the replica's state before its
// appends (Simulation::begin_run_at_end).
// What it leaves behind while the run goes on, and settles when the run ends or is cut:
//   - the allocator's sequences lack `lag` rounds of one token each (KvAllocator::grow_rounds);
//   - the plan's requests lack the `tokens` tokens that came out at the iteration ends since
//     the run began, the first at `first_token_s`, the last at `last_token_s`, their largest
//     gap `max_gap_s` (only without token observers, which get every token as it comes).
// When a request finishes at the end of a repeat, the run need not end: the finished request
// alone is caught up, freed and reported, and the others go on in a run begun as
// begin_run_at_end would (Simulation::continue_run), still lagging their tokens.
// Everything else — the clock, each sample, the observers' calls, the event order — is what
// the iteration-by-iteration engine produces, with the same floating-point operations in the
// same order. Owned by the Simulation, one per replica; a plain value type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/decode_rounds.h"
#include "sim/core/iteration_sample.h"
#include "sim/cost/batch_shape.h"
#include "sim/cost/cost_model.h"

namespace pagesim::sim {

struct DecodeRun {
  std::int64_t left = 0;               // iterations still to start as repeats; 0: no run
  std::vector<alloc::SeqHandle> seqs;  // the plan's sequences, in plan order
  IterationSample sample;              // the last iteration started
  std::int64_t waiting = 0;            // the replica's num_waiting(): arrivals that join behind update it
  BatchShape shape;                    // its batch
  DecodeRunConstant price;             // the cost model's terms that stay the same in the run
  alloc::DecodeRounds rounds;          // how the allocator moves per iteration
  std::size_t round = 0;               // the next repeat takes rounds.round(round) (repeats started mod size)
  double swap_s = 0;                   // the swap seconds of an iteration without swaps
  std::int64_t lag = 0;                // rounds the allocator has not grown yet
  std::int64_t tokens = 0;             // tokens per request not handed to the requests yet
  double first_token_s = 0, last_token_s = 0, max_gap_s = 0;
  // Deferred (Simulation::defer_run): the durations of the repeats priced ahead, each started
  // when its turn comes; ahead[ahead_started..] are still to start. The iteration in flight
  // started at inflight_start_s and ends at inflight_end_s; the replica's iteration end is
  // queued at the last priced repeat's end.
  std::vector<double> ahead;
  std::size_t ahead_started = 0;
  double inflight_start_s = 0, inflight_end_s = 0;
  // The replica's queued iteration end carries it (Event::request); one queued before the
  // last requeue (Simulation::undefer_run, as a run stops) carries an older one and is stale.
  std::uint64_t stamp = 0;
  // A finish inside a run (Simulation::continue_run): at the end of the repeat in which a
  // request emits its last token, the run goes on with the others when the policy would plan
  // their decodes again, without reading them. While `chained`, the plan's decodes are the
  // running requests in running order; members[i], plan.decodes[i]'s, says at the end of
  // which repeat (counted by `started`) it finishes and how many of `seqs` are its.
  struct Member {
    std::int64_t finish = 0;  // its last token comes at the end of repeat number `finish`
    std::int32_t seqs = 0;    // its sequences, consecutive in `seqs`
    friend bool operator==(const Member&, const Member&) = default;
  };
  std::vector<Member> members;
  std::int64_t started = 0;      // repeats started on the replica, ever (start_run_iteration)
  std::int64_t next_finish = 0;  // the least members[i].finish
  bool chained = false;          // members and next_finish hold; stop_run clears it
  // The replica's iteration in flight, which begins no run, had its plan applied as it started
  // (Simulation::apply_ahead), while its requests were in the cache: its end applies nothing.
  // `prepared`, besides: members, seqs, rounds, shape and next_finish hold what
  // begin_run_at_end reads of the requests and the allocator for a run that begins at that
  // end, and the replica's plan holds that run's plan (plan_running_decodes).
  bool applied = false;
  bool prepared = false;
  // Deferred from the start of that iteration (Simulation::begin_ahead): the prepared run was
  // begun then, as its end would begin it, and its repeats priced ahead from that end; the
  // first replayed end begins it (its first repeat starts there, no run token counted).
  // `applied` and `prepared` are spent; undefer_run gives them back and requeues that end.
  bool begins_at_end = false;
  // A repeat started ahead of the queue (on_iteration_end's loop) that would end past the
  // clock's range, at this time: the end it starts at is queued, and raises the error when it
  // pops, in the order the engine that plans every iteration would meet it. 0: none.
  double out_of_range_end = 0;
  // A run begun ahead that does not begin after all: its iteration's end, queued again, asks
  // begin_run_at_end itself.
  void unbegin() {
    begins_at_end = false;
    applied = prepared = true;
    left = 0;
    chained = false;
  }

  bool deferred() const { return ahead_started < ahead.size(); }

  // The seconds of a repeat of batch `repeat` (run.shape one token further on): every
  // repeat's duration, started or priced ahead, is this one sum.
  double repeat_seconds(const CostModel& cost, const BatchShape& repeat) const {
    return cost.decode_run_seconds(repeat, price) + swap_s;
  }

  // The iteration that ended at t gave each of the plan's requests a token (held in `tokens`).
  void count_tokens(double t) {
    if (tokens == 0) {
      first_token_s = t;
      max_gap_s = 0;
    } else {
      max_gap_s = std::max(max_gap_s, t - last_token_s);
    }
    last_token_s = t;
    ++tokens;
  }
};

}  // namespace pagesim::sim
