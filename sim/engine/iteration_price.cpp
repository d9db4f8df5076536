#include "sim/engine/iteration_price.h"

#include <algorithm>
#include <cassert>

#include "sim/scheduler/adapter_cache.h"

namespace pagesim::sim {
namespace {

// Offload tiers: the blocks loaded for this iteration, overlapped with its compute or added to
// it, and what recomputing their tokens would have cost (TierCost).
void price_tiers(Replica& replica, const BatchShape& shape, double swap_s, const alloc::TierTransfer& moved,
                 double& dt) {
  TierCost& c = replica.plan.tier;
  const double base = dt;
  c.transfer_s = moved.seconds;
  dt = moved.overlap ? std::max(base, moved.seconds) : base + moved.seconds;
  c.added_s = moved.overlap ? std::max(0.0, moved.seconds - base) : moved.seconds;
  c.loaded_tokens = moved.loaded_blocks * replica.allocator().block_size();
  BatchShape recompute = shape;
  if (c.loaded_tokens > 0) recompute.add_prefill_chunk(c.loaded_tokens, 0, false);
  c.prefill_saved_s = replica.cost().iteration_seconds(recompute) + swap_s - dt;
}

// Global cache: what the replica's admissions fetched, added to dt and replica.global_fetch.
void price_fetch(Replica& replica, const GlobalCache& g, double& dt) {
  const alloc::RemoteFetch f = replica.allocator().take_remote_fetch();
  if (f.empty()) return;
  const std::int64_t block_size = replica.allocator().block_size();
  const double seconds = g.fetch_seconds(f.blocks, block_size);
  dt += seconds;
  GlobalFetchCounters& c = replica.global_fetch;
  c.blocks += f.blocks;
  c.hit_tokens += f.hit_tokens;
  c.readmission_hit_tokens += f.readmission_hit_tokens;
  c.bytes += g.fetch_bytes(f.blocks, block_size);
  c.seconds += seconds;
  ++c.iterations;
}

}  // namespace

IterationPrice price_iteration(Replica& replica, std::int64_t swap_out, std::int64_t swap_in,
                               const GlobalCache* global) {
  const IterationPlan& plan = replica.plan;
  assert(plan.has_compute());
  IterationPrice price;
  BatchShape& shape = price.shape;
  for (const PrefillWork& w : plan.prefills) {
    shape.add_prefill_chunk(w.new_tokens, w.cached_before, w.completes);
    ++price.batch_seqs;
  }
  for (const Request* r : plan.decodes) {
    const std::int64_t context = r->prompt_tokens + r->generated;
    for (std::size_t i = 0; i < r->seqs.size(); ++i) shape.add_decode_seq(context);
    // spec_proposed > 0 only in a speculative step; spec_step shares the line this pass reads.
    assert(r->spec_step || (r->spec_proposed == 0 && r->spec_accepted == 0));
    if (r->spec_step && r->spec_proposed > 0) shape.add_verified_tokens(r->spec_proposed, context);
    price.batch_seqs += static_cast<std::int64_t>(r->seqs.size());
  }
  alloc::KvAllocator& a = replica.allocator();
  const std::int64_t block_size = a.block_size();
  const CostModel& cost = replica.cost();
  price.swap_s = cost.swap_seconds(swap_out, block_size) + cost.swap_seconds(swap_in, block_size);
  double dt = cost.iteration_seconds(shape) + price.swap_s;
  if (const alloc::TierTransfer moved = a.take_tier_transfer(); !moved.empty())
    price_tiers(replica, shape, price.swap_s, moved, dt);
  if (global) price_fetch(replica, *global, dt);
  // LoRA adapters loaded for this iteration's admissions: before its forward pass.
  if (AdapterCache* adapters = replica.scheduler().adapters()) dt += adapters->take_load_seconds();
  price.seconds = dt;
  return price;
}

}  // namespace pagesim::sim
