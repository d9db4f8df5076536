// BlockHashIndex: which block of a pool holds the KV keyed by each block hash — the lookup
// half of a prefix cache, shared by the GPU prefix cache (PrefixCache), each offload tier
// (KvTier) and each block table of a large-page pool (LargePagePool).
//
// A one-to-one map between indexed blocks and their hashes: a hash names at most one block
// and a block holds at most one hash. What a hash means (its chaining, block_hash.h) and
// when a block is indexed or forgotten are the owner's; the index neither owns block memory
// nor orders anything.
//
// Invariants (validate):  find(h) == b  <=>  contains(b) && hash_of(b) == h;
//   size() == the blocks contained
// Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/block.h"
#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

class BlockHashIndex {
 public:
  BlockHashIndex() = default;
  // Over blocks [0, num_blocks). reserve_all: room for every block indexed without a rehash
  // (a pool's GPU prefix cache, looked up on every admission); else it grows as it fills.
  // REQUIRES: num_blocks >= 0.
  explicit BlockHashIndex(std::int64_t num_blocks, bool reserve_all = false);

  // The block indexed under h, or kNoBlock.
  BlockId find(BlockHash h) const {
    auto it = by_hash_.find(h);
    return it == by_hash_.end() ? kNoBlock : it->second;
  }
  bool contains(BlockId b) const { return indexed_[static_cast<std::size_t>(b)]; }
  // REQUIRES: contains(b).
  BlockHash hash_of(BlockId b) const { return hash_of_[static_cast<std::size_t>(b)]; }
  std::int64_t size() const { return static_cast<std::int64_t>(by_hash_.size()); }

  // Indexes b under h unless h names a block already; true when b was indexed.
  // REQUIRES: !contains(b).
  bool insert(BlockId b, BlockHash h) {
    if (!by_hash_.emplace(h, b).second) return false;
    hash_of_[static_cast<std::size_t>(b)] = h;
    indexed_[static_cast<std::size_t>(b)] = true;
    return true;
  }
  // Forgets b's hash and returns it. REQUIRES: contains(b).
  BlockHash erase(BlockId b) {
    const BlockHash h = hash_of_[static_cast<std::size_t>(b)];
    by_hash_.erase(h);
    indexed_[static_cast<std::size_t>(b)] = false;
    return h;
  }

  // Calls f(hash, block) for every indexed block, in no particular order.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [h, b] : by_hash_) f(h, b);
  }

  // Throws InvariantViolation, its message starting with `owner`, when an identity above is
  // broken. O(num_blocks).
  void validate(const std::string& owner) const;

 private:
  std::unordered_map<BlockHash, BlockId> by_hash_;
  std::vector<BlockHash> hash_of_;  // per block; meaningful while indexed_
  std::vector<bool> indexed_;
};

}  // namespace pagesim::alloc
