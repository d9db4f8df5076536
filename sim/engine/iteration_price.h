// Iteration pricing: the seconds one planned iteration of a replica takes, in one place — its
// forward pass (the replica's cost model over the plan's batch), the swaps charged to it, the
// offload tiers' transfers, the global cache's fetches and the LoRA adapters loaded for its
// admissions — so the Simulation only schedules what it is told (docs/engine.md).
//
// price_iteration consumes what the iteration's planning left to price: the allocator's tier
// transfer and remote fetch and the adapter cache's load seconds (each taken once), and
// records what it priced in the replica (Replica::plan's TierCost, Replica::global_fetch).
// The floating-point operations are those of the engine before this split, in that order.
#pragma once

#include <cstdint>

#include "sim/cluster/global_cache.h"
#include "sim/cluster/replica.h"
#include "sim/cost/batch_shape.h"

namespace pagesim::sim {

struct IterationPrice {
  BatchShape shape;             // the plan's batch: prefill chunks, decode sequences, verified tokens
  std::int64_t batch_seqs = 0;  // its sequences (IterationSample::batch_seqs)
  double swap_s = 0;            // the swaps' seconds, out and in
  double seconds = 0;           // the iteration's duration: everything above and below
};

// Prices replica.plan with swap_out and swap_in blocks charged to it; `global` is the
// cluster's global cache when it has one (its fetches are priced), else null.
// REQUIRES: replica.plan.has_compute().
IterationPrice price_iteration(Replica& replica, std::int64_t swap_out, std::int64_t swap_in,
                               const GlobalCache* global);

}  // namespace pagesim::sim
