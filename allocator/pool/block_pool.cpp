#include "allocator/pool/block_pool.h"

namespace pagesim::alloc {

BlockPool::BlockPool(std::int64_t num_blocks, std::int32_t block_size)
    : block_size_(block_size),
      meta_(static_cast<std::size_t>(num_blocks)) {
  free_list_.reserve(static_cast<std::size_t>(num_blocks));
  // Highest id at the bottom of the stack: block 0 is handed out first.
  for (std::int64_t b = num_blocks - 1; b >= 0; --b) free_list_.push_back(static_cast<BlockId>(b));
}

}  // namespace pagesim::alloc
