// Router: picks the replica an arriving request goes to (RouterSettings names the policies).
//
// route() is called once per request, at its arrival, before it joins the chosen replica's
// waiting queue; it reads the replicas' state at that instant (the cluster's single event
// queue orders every arrival against every iteration end, see docs/engine.md). Every policy
// breaks ties towards the lowest replica index, so a run is reproducible; random draws from
// its own generator seeded by RouterSettings::seed. A router is owned by one Simulation;
// not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "sim/cluster/load_index.h"
#include "sim/cluster/replica.h"
#include "sim/cluster/router_settings.h"
#include "sim/core/request.h"

namespace pagesim::sim {

// What the Simulation keeps of the routed replicas for a router, so that a least-loaded
// choice costs O(1) (or O(log n)) instead of a scan of every replica.
struct ReplicaLoads {
  // Replica::outstanding() of each replica, by position (Router::reads_outstanding).
  const LoadIndex& outstanding;
  // The position of the lowest-indexed replica with the most free KV slots at this instant
  // (FreeSlotsIndex; Router::reads_free_slots), -1 for a router that does not read it.
  std::int32_t most_free_slots = -1;
};

class Router {
 public:
  virtual ~Router() = default;
  // The index of the replica `r` goes to. What each policy still reads of every replica:
  //   round_robin, random, least_outstanding, least_kv   nothing (O(1); the Simulation's
  //                   indexes cost O(log n) for each replica changed since the last route,
  //                   and least_kv's replays the deferred runs of the best candidates up to
  //                   the arrival: FreeSlotsIndex::most_free);
  //   adapter_aware   the residents of a request's adapter: every replica's adapter cache
  //                   for a LoRA request (base-model requests O(1));
  //   prefix_aware    the balance guard O(1); when balanced, every replica's prefix cache
  //                   (SGLang's router walks its own tree of every worker).
  // A replica's state is what the per-iteration engine would show at this instant, inside a
  // decode run too (docs/engine.md): a run takes free slots, which loads.most_free_slots and
  // Replica::free_kv_slots() count, and never evicts or fills a cached block.
  // REQUIRES: replicas is non-empty; loads' indexes have replicas.size() entries;
  // r.block_hashes are keyed to the replicas' block size (prefix_aware).
  virtual std::int32_t route(const Request& r, std::span<const Replica> replicas, const ReplicaLoads& loads) = 0;
  virtual std::string name() const = 0;
  // Whether route() reads loads.outstanding: the Simulation keeps that index only for a
  // router that does (round_robin, random and least_kv ignore it).
  virtual bool reads_outstanding() const = 0;
  // Whether route() reads loads.most_free_slots: the Simulation keeps its index only for a
  // router that does.
  virtual bool reads_free_slots() const = 0;
};

// REQUIRES: settings checked (thresholds as RouterSettings documents).
std::unique_ptr<Router> make_router(const RouterSettings& settings);

}  // namespace pagesim::sim
