// DecodeRounds: what an allocator promises about a run of decode rounds (a round: every
// sequence of a set grows by one token, in the set's order), so that an engine can advance
// identical decode iterations without growing the sequences one token at a time
// (KvAllocator::decode_run_rounds, sim/engine/decode_run.h).
//
// Round j (from 1) changes breakdown() as round((j - 1) % cycle_size()) says and takes its
// `blocks` new blocks (stats().logical_blocks and physical_blocks grow by as many); nothing
// else an observer can read changes (free-memory queries move with breakdown().free).
// A round only appends tokens into blocks the sequences own or take off the free list, so
// it moves three fields of breakdown() and no other: token states, rounding and free (an
// engine rewrites the cycle at every run's start, and adds one round per repeat). Plain
// value types.
#pragma once

#include <cstdint>

#include <boost/container/small_vector.hpp>

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

// The cycle is kept as the blocks each round takes: a round adds one token state per
// sequence, and each block it takes moves block_slots slots off the free list, those the
// round does not write into rounding. So a cycle of a 16-slot block size is one cache line
// inside the owner (an engine reads it at every repeat; a fleet's replica, cold).
struct DecodeRounds {
  std::int64_t rounds = 0;       // rounds promised; 0: none
  std::int64_t seqs = 0;         // token states a round adds: one per sequence
  std::int64_t block_slots = 0;  // slots of a block
  // Round j (from 1) takes cycle_blocks[(j - 1) % cycle_blocks.size()] blocks. Invariant:
  // 0 <= each <= seqs.
  boost::container::small_vector<std::int32_t, 16> cycle_blocks;

  std::size_t cycle_size() const { return cycle_blocks.size(); }
  // Round j's change, for k = (j - 1) % cycle_size(). REQUIRES: k < cycle_size().
  DecodeRound round(std::size_t k) const {
    const std::int64_t b = cycle_blocks[k];
    return {.token_states = seqs, .rounding = b * block_slots - seqs, .free = -b * block_slots, .blocks = b};
  }
  friend bool operator==(const DecodeRounds&, const DecodeRounds&) = default;
};

}  // namespace pagesim::alloc
