// Simulation's side of disaggregated prefill/decode (docs/engine.md): the events, runs, loads
// and observers around KvHandoff's queue and transfers.
#include "sim/engine/simulation.h"

#include <cassert>

namespace pagesim::sim {

void Simulation::hand_off(Replica& replica, Request* r) {
  handoff_.queue(replica, r);
  for (IterationObserver* o : observers_) o->on_handed_off(*r);
  for (IterationObserver* o : observers_of(replica.index())) o->on_handed_off(*r);
}

void Simulation::start_transfers(double now_s) {
  const std::span<Replica> decode = handoff_.decode_replicas(replicas_);
  const std::int32_t first_decode = static_cast<std::int32_t>(replicas_.size() - decode.size());
  Router& router = handoff_.decode_router();
  while (Request* r = handoff_.head()) {
    const std::int32_t d = first_decode + router.route(*r, decode, loads_for(router, decode, true));
    Replica& decoder = replicas_[static_cast<std::size_t>(d)];
    cut_run(decoder);
    const std::optional<double> end = handoff_.start(decoder, now_s);
    if (!end) {  // the head waits; so does everyone behind it
      // It is routed again at every iteration end from now on (hand-offs come at the end of
      // a prefill replica's iteration popped from the queue, current_, never inside a run).
      assert(deferred_.empty() || now_s == current_.time);
      undefer_runs();
      return;
    }
    mark_load(decoder);
    schedule(*end, now_s, EventKind::kTransferEnd, d, r->id);
    for (IterationObserver* o : observers_) o->on_transfer_started(*r, d);
    for (IterationObserver* o : observers_of(r->replica)) o->on_transfer_started(*r, d);
  }
}

void Simulation::on_transfer_end(const Event& e) {
  Request* r = handoff_.arrived(e.request);
  Replica& from = replicas_[static_cast<std::size_t>(r->replica)];
  Replica& to = replicas_[static_cast<std::size_t>(e.replica)];
  cut_run(from);
  cut_run(to);
  KvHandoff::move(from, to, r, e.time);
  // Only the prompt's KV moved: parallel samples and beams fork from it here, sharing its
  // blocks, as they would have on the prefill replica (a failed fork recomputes there).
  if (r->width() > 1) {
    const bool forked = to.scheduler().fork_to_width(r);
    if (forked && r->beam_width > 1) beams_->on_group_forked(r->id, static_cast<std::int32_t>(r->seqs.size()));
  }
  for (IterationObserver* o : observers_) o->on_transfer_ended(*r);
  for (IterationObserver* o : observers_of(to.index())) o->on_transfer_ended(*r);
  if (!from.busy) start_iteration(from);
  if (!to.busy) start_iteration(to);
  mark_load(from);
  mark_load(to);
}

}  // namespace pagesim::sim
