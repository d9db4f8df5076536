#include "sim/cluster/kv_handoff.h"

#include <cassert>

#include <fmt/format.h>

#include "sim/core/simulation_error.h"

namespace pagesim::sim {

KvHandoff::KvHandoff(const DisaggregationSettings& settings, std::size_t replicas, double kv_bytes_per_token,
                     std::uint64_t seed)
    : settings_(settings), kv_bytes_per_token_(kv_bytes_per_token) {
  if (!enabled()) return;
  if (static_cast<std::size_t>(settings_.prefill) >= replicas)
    throw SimulationError(
        fmt::format("{} prefill replicas of {} leave none to decode", settings_.prefill, replicas));
  assert(settings_.transfer_gbps > 0 && kv_bytes_per_token_ > 0 && settings_.transfer_latency_us >= 0);
  RouterSettings router{settings_.decode_router};
  router.seed = seed ^ 0x6465636f6465ULL;  // "decode": apart from the prefill router's draws
  decode_router_ = make_router(router);
}

void KvHandoff::queue(Replica& from, Request* r) {
  from.scheduler().hand_off(r);
  r->prefill_replica = from.index();
  queue_.push_back(r);
}

std::optional<double> KvHandoff::start(Replica& to, double now_s) {
  Request* r = queue_.front();
  if (!to.scheduler().reserve_hand_in(r)) return std::nullopt;
  queue_.pop_front();
  ++to.handed_in;
  r->transfer_start_s = now_s;
  in_flight_.emplace(r->id, r);
  return now_s + settings_.transfer_seconds(r->prompt_tokens, kv_bytes_per_token_);
}

Request* KvHandoff::arrived(std::uint64_t id) {
  const auto it = in_flight_.find(id);
  assert(it != in_flight_.end());
  Request* r = it->second;
  in_flight_.erase(it);
  return r;
}

void KvHandoff::move(Replica& from, Replica& to, Request* r, double t) {
  from.scheduler().release_handed_off(r);
  to.scheduler().take_handed_in(r);
  r->replica = to.index();
  r->transfer_end_s = t;
}

}  // namespace pagesim::sim
