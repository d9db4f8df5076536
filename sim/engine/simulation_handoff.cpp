// Simulation's disaggregated prefill/decode (docs/engine.md): the hand-off queue, the KV
// transfers it starts, and their ends.
#include "sim/engine/simulation.h"

#include <algorithm>
#include <cassert>
#include <limits>

#include <fmt/format.h>

namespace pagesim::sim {

void Simulation::hand_off(Replica& replica, Request* r) {
  replica.scheduler().hand_off(r);
  r->prefill_replica = replica.index();
  handoffs_.push_back(r);
  for (IterationObserver* o : observers_) o->on_handed_off(*r);
  for (IterationObserver* o : replica_observers_[static_cast<std::size_t>(replica.index())]) o->on_handed_off(*r);
}

void Simulation::start_transfers(double now_s) {
  const std::span<Replica> decode = std::span<Replica>(replicas_).subspan(static_cast<std::size_t>(disagg_.prefill_replicas));
  while (!handoffs_.empty()) {
    Request* r = handoffs_.front();
    const std::int32_t d = disagg_.prefill_replicas + decode_router_->route(*r, decode, loads_for(*decode_router_, decode, true));
    Replica& q = replicas_[static_cast<std::size_t>(d)];
    cut_run(q);
    if (!q.scheduler().reserve_hand_in(r)) return;  // the head waits; so does everyone behind it
    mark_load(q);
    handoffs_.pop_front();
    ++q.handed_in;
    ++transfers_in_flight_;
    r->transfer_start_s = now_s;
    transferring_.emplace(r->id, r);
    schedule(now_s + disagg_.transfer_seconds(r->prompt_tokens), now_s, EventKind::kTransferEnd, d, r->id);
    for (IterationObserver* o : observers_) o->on_transfer_started(*r, d);
    for (IterationObserver* o : replica_observers_[static_cast<std::size_t>(r->replica)]) o->on_transfer_started(*r, d);
  }
}

void Simulation::on_transfer_end(const Event& e) {
  const auto it = transferring_.find(e.request);
  assert(it != transferring_.end());
  Request* r = it->second;
  transferring_.erase(it);
  Replica& from = replicas_[static_cast<std::size_t>(r->replica)];
  Replica& to = replicas_[static_cast<std::size_t>(e.replica)];
  cut_run(from);
  cut_run(to);
  from.scheduler().release_handed_off(r);
  to.scheduler().take_handed_in(r);
  r->replica = to.index();
  r->transfer_end_s = e.time;
  --transfers_in_flight_;
  // Only the prompt's KV moved: parallel samples and beams fork from it here, sharing its
  // blocks, as they would have on the prefill replica (a failed fork recomputes there).
  if (r->width() > 1) {
    const bool forked = to.scheduler().fork_to_width(r);
    if (forked && r->beam_width > 1) beams_->on_group_forked(r->id, static_cast<std::int32_t>(r->seqs.size()));
  }
  for (IterationObserver* o : observers_) o->on_transfer_ended(*r);
  for (IterationObserver* o : replica_observers_[static_cast<std::size_t>(to.index())]) o->on_transfer_ended(*r);
  if (!from.busy) start_iteration(from);
  if (!to.busy) start_iteration(to);
  mark_load(from);
  mark_load(to);
}

}  // namespace pagesim::sim
