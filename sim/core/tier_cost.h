// TierCost: what the offload tiers cost one iteration, as the engine priced it (all zero
// without tiers, or when the iteration moved no block). A plain value carried by the
// IterationPlan to the observers.
#pragma once

#include <cstdint>

namespace pagesim::sim {

struct TierCost {
  double transfer_s = 0;  // the tiers' loads and stores (alloc::TierTransfer::seconds)
  double added_s = 0;     // what they added to the iteration: transfer_s when serial,
                          // max(0, transfer_s - compute) when overlapped
  // Net prefill time saved: the iteration's duration had it recomputed the tokens it loaded
  // (priced as one more prefill chunk of that many tokens in the same batch, no transfer),
  // minus its actual duration. Negative when the transfers cost more than recomputing.
  double prefill_saved_s = 0;
  std::int64_t loaded_tokens = 0;  // loaded blocks × block size
};

}  // namespace pagesim::sim
