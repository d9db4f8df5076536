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

class Router {
 public:
  virtual ~Router() = default;
  // The index of the replica `r` goes to. `outstanding` holds replicas[i].outstanding() at
  // entry i (the Simulation keeps it as they change), so a least-loaded choice costs O(1)
  // instead of a scan of every replica. What each policy still reads of every replica:
  //   round_robin, random, least_outstanding   nothing (O(1));
  //   adapter_aware   the residents of a request's adapter: every replica's adapter cache
  //                   for a LoRA request (base-model requests O(1));
  //   least_kv        every replica's free slots (memory changes every iteration, inside
  //                   decode runs too: no index holds it);
  //   prefix_aware    the balance guard O(1); when balanced, every replica's prefix cache
  //                   and free slots (SGLang's router walks its own tree of every worker).
  // REQUIRES: replicas is non-empty; outstanding.size() == replicas.size(); r.block_hashes
  // are keyed to the replicas' block size (prefix_aware).
  virtual std::int32_t route(const Request& r, std::span<const Replica> replicas, const LoadIndex& outstanding) = 0;
  virtual std::string name() const = 0;
  // Whether route() reads a replica's KV memory (free slots, prefix cache), which a decode
  // run (docs/engine.md) leaves as it stood when the run began, so the engine ends the
  // candidates' runs before routing. Queue lengths (Replica::outstanding) and resident
  // adapters stay exact during a run: it admits, finishes and preempts nothing.
  virtual bool reads_kv_state() const = 0;
  // Whether route() reads `outstanding`: the Simulation keeps that index only for a router
  // that does (round_robin, random and least_kv ignore it).
  virtual bool reads_outstanding() const = 0;
};

// REQUIRES: settings checked (thresholds as RouterSettings documents).
std::unique_ptr<Router> make_router(const RouterSettings& settings);

}  // namespace pagesim::sim
