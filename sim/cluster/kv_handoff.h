// KvHandoff: a disaggregated cluster's hand-off of requests from its prefill replicas to its
// decode replicas (DisaggregationSettings, docs/engine.md).
//
// A request whose prefill ends on a prefill replica joins a FIFO (queue()); the decode router
// picks a decode replica for the FIFO's head, whose transfer starts once that replica's
// scheduler reserves the KV (start(): the head waits otherwise, and everyone behind it); when
// the transfer ends (arrived(), then move()) the request leaves the prefill replica's
// scheduler for the decode replica's. It owns the FIFO, the transfers in flight and the
// decode router; the Simulation owns the requests, the clock, the events and the observers,
// and calls it at each of those points. Requests are borrowed: live while queued or in flight.
// Not thread-safe; owned by one Simulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>

#include "sim/cluster/disaggregation_settings.h"
#include "sim/cluster/replica.h"
#include "sim/cluster/router.h"
#include "sim/core/request.h"

namespace pagesim::sim {

class KvHandoff {
 public:
  // Co-located: every replica prefills and decodes; nothing is handed off.
  KvHandoff() = default;
  // Throws SimulationError where settings.prefill leaves none of `replicas` to decode.
  // REQUIRES when enabled: transfer_gbps and kv_bytes_per_token > 0, transfer_latency_us >= 0
  // (the config checks them). `seed` is the experiment's; the decode router draws apart from
  // the prefill router.
  KvHandoff(const DisaggregationSettings& settings, std::size_t replicas, double kv_bytes_per_token,
            std::uint64_t seed);

  bool enabled() const { return settings_.enabled(); }
  // Replicas [0, P) prefill and [P, N) decode; co-located, every replica is a prefill replica.
  std::span<Replica> prefill_replicas(std::span<Replica> all) const {
    return enabled() ? all.first(static_cast<std::size_t>(settings_.prefill)) : all;
  }
  std::span<Replica> decode_replicas(std::span<Replica> all) const {
    return all.subspan(static_cast<std::size_t>(settings_.prefill));
  }
  bool is_prefill_replica(const Replica& replica) const { return enabled() && replica.index() < settings_.prefill; }
  // REQUIRES: enabled().
  Router& decode_router() const { return *decode_router_; }
  const Router* decode_router_or_null() const { return decode_router_.get(); }

  // r's prefill ended on prefill replica `from` with its first token: it leaves from's
  // running set (its KV stays allocated there) and joins the FIFO.
  void queue(Replica& from, Request* r);
  // The FIFO's head, null when it is empty.
  Request* head() const { return queue_.empty() ? nullptr : queue_.front(); }
  std::size_t num_queued() const { return queue_.size(); }
  // Nothing queued or in flight: no replica waits on a hand-off.
  bool idle() const { return queue_.empty() && in_flight_.empty(); }

  // Starts the head's transfer to decode replica `to` at now_s, when to's scheduler reserves
  // its KV: the head leaves the FIFO and its transfer's end time is returned. nullopt when
  // `to` has no room (nothing changes). REQUIRES: head() != null.
  std::optional<double> start(Replica& to, double now_s);
  // The transfer of request `id` ended: the request, no longer in flight. REQUIRES: a transfer
  // of `id` in flight.
  Request* arrived(std::uint64_t id);
  // r's KV has moved from prefill replica `from` to decode replica `to` at t: from's scheduler
  // frees it, to's takes r in.
  static void move(Replica& from, Replica& to, Request* r, double t);

 private:
  DisaggregationSettings settings_;
  double kv_bytes_per_token_ = 0;
  std::unique_ptr<Router> decode_router_;  // enabled() only
  std::deque<Request*> queue_;             // prefill done, waiting for decode memory, FIFO
  // Transfers in flight, by request id (the transfer's end event names its request).
  std::unordered_map<std::uint64_t, Request*> in_flight_;
};

}  // namespace pagesim::sim
