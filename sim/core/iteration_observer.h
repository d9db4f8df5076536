// IterationObserver: told what a run does as it does it — each arrival, each iteration at
// scheduling time (after admission, the vLLM paper's sampling point), each token and each
// finished request. Metrics and the batch sampler of kernel validation are observers; tests use one
// to check invariants after every iteration.
//
// The Simulation calls its observers in the order they were added. References passed in
// are valid for the duration of the call only, but for an observer that holds_requests():
// a Request it was shown stays where it is until its on_request_finished. An observer must
// not call back into the simulation or its scheduler (reading the allocator is fine).
#pragma once

#include <cstdint>
#include <limits>

#include "sim/core/iteration_plan.h"
#include "sim/core/iteration_sample.h"
#include "sim/core/request.h"

namespace pagesim::sim {

class IterationObserver {
 public:
  virtual ~IterationObserver() = default;
  // Whether it keeps references to the Requests it is shown; then the engine keeps every
  // arrival a Request of its own until it finishes (no compact backlog: docs/engine.md).
  virtual bool holds_requests() const { return true; }
  // Whether it reads on_iteration / on_replica_iteration at all; false spares the engine the
  // calls (an observer of requests alone). Asked once, before the run. Default: true.
  virtual bool reads_iterations() const { return true; }
  // Whether what it records depends on the order in which different replicas' iterations
  // reach it (rows of one file, sums over all replicas in floating point). False lets the
  // engine start a replica's decode-run iterations ahead of other replicas' earlier events
  // (docs/engine.md): each replica's own iterations still come in order, and arrivals,
  // finished requests and every other call in the order of the clock. Only asked of
  // observers of the whole run (an observer of one replica sees its iterations in order).
  // Default: true.
  virtual bool reads_replica_order() const { return true; }
  // `r` has arrived and joined the waiting queue.
  virtual void on_arrival(const Request& r) { (void)r; }
  // Iteration `s.index` was scheduled: `plan` is what it computes, `s` the state then.
  virtual void on_iteration(const IterationSample& s, const IterationPlan& plan) {
    (void)s;
    (void)plan;
  }
  // The same, in a run of several replicas: `replica` (its index) scheduled the iteration;
  // s.index counts that replica's iterations. The engine calls this one; by default it
  // forwards to on_iteration, for observers that do not tell replicas apart.
  virtual void on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) {
    (void)replica;
    on_iteration(s, plan);
  }
  // Decode runs (docs/engine.md): the engine may start iterations of a run without growing
  // the allocator's sequences and the requests' token counts one iteration at a time (they
  // catch up when the run ends or is cut). Returns how many iterations of replica `replica`,
  // from its iteration `index` on (index included), this observer's on_iteration may see
  // started that way: it reads nothing of them but the sample, the plan's request
  // identities and states, and allocator counters a run leaves alone (stats(), tiers()).
  // Default: any number.
  virtual std::int64_t decode_run_limit(std::int32_t replica, std::int64_t index) const {
    (void)replica;
    (void)index;
    return std::numeric_limits<std::int64_t>::max();
  }
  // `r` generated a token (each sequence of the group one) at the end of an iteration at
  // time `t`; `previous_s` is when its previous token came out, < 0 for its first. Called
  // once per token of every request, and only for observers added to the run with
  // add_observer(observer, /*tokens=*/true): keep it cheap.
  virtual void on_token(const Request& r, double t, double previous_s) {
    (void)r;
    (void)t;
    (void)previous_s;
  }
  // `r` generated its last token; its memory is already released.
  virtual void on_request_finished(const Request& r) { (void)r; }
  // Disaggregated runs (docs/engine.md), the steps of a request between its prefill replica
  // r.prefill_replica and its decode replica, each told to the run's observers and those of
  // the replica named:
  //   handed off     its prefill done, its first token out (at r.first_token_s), it left the
  //                  prefill replica's queues to wait for room on a decode replica (prefill
  //                  replica's observers);
  //   transfer start its KV started moving to decode replica `to` at r.transfer_start_s
  //                  (prefill replica's observers);
  //   transfer end   its KV arrived at r.transfer_end_s: it joined the running queue of
  //                  r.replica, the decode replica (that replica's observers).
  virtual void on_handed_off(const Request& r) { (void)r; }
  virtual void on_transfer_started(const Request& r, std::int32_t to) {
    (void)r;
    (void)to;
  }
  virtual void on_transfer_ended(const Request& r) { (void)r; }
};

}  // namespace pagesim::sim
