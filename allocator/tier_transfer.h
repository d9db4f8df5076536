// TierTransfer: the offload-tier traffic of one iteration, priced (TierStack::take_transfer).
// A plain value; the engine adds `seconds` to the iteration or overlaps it with compute.
#pragma once

#include <cstdint>

namespace pagesim::alloc {

struct TierTransfer {
  double seconds = 0;              // every tier's loads and stores, one after another
  std::int64_t loaded_blocks = 0;  // blocks read from a tier into the GPU pool
  std::int64_t stored_blocks = 0;  // GPU blocks written into a tier (tier-to-tier moves are
                                   // the host's background work: not here)
  bool overlap = false;            // OffloadSettings::overlap of the allocator that moved them

  bool empty() const { return loaded_blocks == 0 && stored_blocks == 0; }
};

}  // namespace pagesim::alloc
