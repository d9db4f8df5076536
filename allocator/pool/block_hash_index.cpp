#include "allocator/pool/block_hash_index.h"

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

BlockHashIndex::BlockHashIndex(std::int64_t num_blocks, bool reserve_all)
    : hash_of_(static_cast<std::size_t>(num_blocks), 0), indexed_(static_cast<std::size_t>(num_blocks), false) {
  if (reserve_all) by_hash_.reserve(static_cast<std::size_t>(num_blocks));
}

void BlockHashIndex::validate(const std::string& owner) const {
  std::int64_t n = 0;
  for (std::size_t b = 0; b < indexed_.size(); ++b) {
    if (!indexed_[b]) continue;
    ++n;
    if (find(hash_of_[b]) != static_cast<BlockId>(b))
      throw InvariantViolation(owner + ": block " + std::to_string(b) + " is not indexed by its hash");
  }
  if (n != size())
    throw InvariantViolation(owner + ": hash index has " + std::to_string(size()) + " entries but " +
                             std::to_string(n) + " blocks are indexed");
}

}  // namespace pagesim::alloc
