#include "allocator/pool/block_pool.h"

namespace pagesim::alloc {

BlockPool::BlockPool(std::int64_t num_blocks, std::int32_t block_size)
    : block_size_(block_size), num_blocks_(num_blocks) {
  // Reserved, not written: the pages behind a block's entry and free-list place are touched
  // when the block is first taken.
  meta_.reserve(static_cast<std::size_t>(num_blocks));
  free_list_.reserve(static_cast<std::size_t>(num_blocks));
}

}  // namespace pagesim::alloc
