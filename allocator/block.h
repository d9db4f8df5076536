// Blocks: the unit in which KV memory is handed out, named by dense ids.
//
// A block holds the KV of block_size() consecutive tokens of one sequence (all layers).
// Paged pools number their blocks [0, num_blocks); a contiguous pool is a run of
// consecutive ids (its block size is its placement unit), so every allocator can describe
// a sequence as a block table. A BlockMove is one block-sized copy the kernels perform
// (copy-on-write, swap out, swap in).
#pragma once

#include <cstdint>

namespace pagesim::alloc {

using BlockId = std::int32_t;
inline constexpr BlockId kNoBlock = -1;

struct BlockMove {
  BlockId src = kNoBlock;
  BlockId dst = kNoBlock;
  friend bool operator==(const BlockMove&, const BlockMove&) = default;
};

}  // namespace pagesim::alloc
