// DecodeRounds: what an allocator promises about a run of decode rounds (a round: every
// sequence of a set grows by one token, in the set's order), so that an engine can advance
// identical decode iterations without growing the sequences one token at a time
// (KvAllocator::decode_run_rounds, sim/engine/decode_run.h).
//
// Round j (from 1) changes breakdown() as cycle[(j - 1) % cycle.size()] says and takes its
// `blocks` new blocks (stats().logical_blocks and physical_blocks grow by as many); nothing
// else an observer can read changes (free-memory queries move with breakdown().free).
// A round only appends tokens into blocks the sequences own or take off the free list, so
// it moves three fields of breakdown() and no other: token states, rounding and free. The
// cycle keeps just those (an engine rewrites it at every run's start, and adds one round
// per repeat). Plain value types.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/memory_breakdown.h"

namespace pagesim::alloc {

struct DecodeRound {
  std::int64_t token_states = 0;  // how breakdown().token_states moves in this round
  std::int64_t rounding = 0;      // breakdown().rounding's move
  std::int64_t free = 0;          // breakdown().free's move
  std::int64_t blocks = 0;        // blocks the round takes

  // m moved by this round: every other field of m stays as it is.
  void apply_to(MemoryBreakdown& m) const {
    m.token_states += token_states;
    m.rounding += rounding;
    m.free += free;
  }
  friend bool operator==(const DecodeRound&, const DecodeRound&) = default;
};

struct DecodeRounds {
  std::int64_t rounds = 0;         // rounds promised; 0: none
  std::vector<DecodeRound> cycle;  // round j's change is cycle[(j - 1) % cycle.size()]
  friend bool operator==(const DecodeRounds&, const DecodeRounds&) = default;
};

}  // namespace pagesim::alloc
