// DecodeRounds: what an allocator promises about a run of decode rounds (a round: every
// sequence of a set grows by one token, in the set's order), so that an engine can advance
// identical decode iterations without growing the sequences one token at a time
// (KvAllocator::decode_run_rounds, sim/engine/decode_run.h).
//
// Round j (from 1) changes breakdown() by cycle[(j - 1) % cycle.size()].memory and takes
// cycle[...].blocks new blocks (stats().logical_blocks and physical_blocks grow by as many);
// nothing else an observer can read changes (free-memory queries move with breakdown().free).
// A plain value type.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/memory_breakdown.h"

namespace pagesim::alloc {

struct DecodeRound {
  MemoryBreakdown memory;   // how breakdown() moves in this round
  std::int64_t blocks = 0;  // blocks the round takes
};

struct DecodeRounds {
  std::int64_t rounds = 0;         // rounds promised; 0: none
  std::vector<DecodeRound> cycle;  // round j's change is cycle[(j - 1) % cycle.size()]
};

}  // namespace pagesim::alloc
