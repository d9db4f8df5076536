// PromptBlocks: a request's prompt as the sequence of cache blocks an idealised prefix cache
// looks up, each with its chained key and the number of prompt tokens it holds.
//
// Blocks are `block_size` tokens. A full block's key is exactly the simulator's
// (sim/engine/prefix_keys.h: the previous key chained with every hash id overlapping the
// block and its index), so the analysis and a timed run agree on which blocks are equal.
// The last, partial block of a prompt gets a key the same way when `partial_tail` is set: the
// Mooncake paper and `pagesim trace stats` count every hash id, the last one included, while
// the simulator's allocator caches full blocks only (partial_tail = false reproduces it).
// Tokens beyond the given hash ids have no identity and are never a block. Pure function.
#pragma once

#include <cstdint>
#include <vector>

#include "allocator/kv_allocator.h"
#include "traces/trace_request.h"

namespace pagesim::sim {

struct PromptBlock {
  alloc::BlockHash key = 0;  // chained: equal keys mean equal prompts up to this block's end
  std::int64_t tokens = 0;   // prompt tokens in the block, in [1, block_size]
};

// The blocks of `request`'s prompt, in prompt order. REQUIRES: hash_block_tokens >= 1,
// block_size >= 1.
std::vector<PromptBlock> prompt_blocks(const traces::TraceRequest& request, std::int64_t hash_block_tokens,
                                       std::int64_t block_size, bool partial_tail);

}  // namespace pagesim::sim
