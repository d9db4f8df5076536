// ContiguousPolicy: the contiguous layout's own choices, apart from the pool it lays out: how
// much a request reserves and where its range goes. An experiment's allocator.reservation,
// allocator.placement and allocator.max_chunk_blocks keys are these fields
// (AllocatorSpec::contiguous); ContiguousSettings adds the pool's size, block and row length.
// Plain data, no invariants beyond ContiguousAllocator's checks of it.
#pragma once

#include <cstdint>

#include "allocator/contiguous/placement.h"
#include "allocator/contiguous/reservation_policy.h"

namespace pagesim::alloc {

struct ContiguousPolicy {
  // How much output to reserve for: max (default, Orca's policy), pow2, oracle, fixed:N.
  ReservationPolicy reservation;
  PlacementKind placement = PlacementKind::kBuddy;
  // buddy only: largest chunk in blocks, a power of two. 128 blocks of 16 = 2,048 tokens as in
  // the paper; a request needing more is never admitted.
  std::int64_t max_chunk_blocks = 128;
};

}  // namespace pagesim::alloc
