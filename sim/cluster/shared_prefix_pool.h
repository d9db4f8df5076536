// SharedPrefixPool: the cluster-wide CPU pool of a global cache with source shared_pool
// (global_cache_settings.h) — which prompt blocks it holds, by their chained hashes, within
// a capacity in blocks. A block is written when a prefill completes on any replica; when the
// pool is full, the least recently written block leaves it. It models only which blocks are
// held (their bytes are priced by the engine). Owned by a GlobalCache; not thread-safe.
//
// Invariant (validate): |lru| == |index| <= capacity, and index maps each hash to its
// entry in lru.
#pragma once

#include <cstdint>
#include <list>
#include <span>
#include <unordered_map>

#include "allocator/remote_prefix.h"

namespace pagesim::sim {

class SharedPrefixPool final : public alloc::RemotePrefixSource {
 public:
  // REQUIRES: capacity_blocks >= 1.
  explicit SharedPrefixPool(std::int64_t capacity_blocks);

  bool holds(alloc::BlockHash h) const override { return index_.count(h) != 0; }
  // Writes the blocks `hashes` (in order; each becomes the most recently written), evicting
  // the least recently written blocks beyond capacity.
  void write(std::span<const alloc::BlockHash> hashes);

  std::int64_t capacity_blocks() const { return capacity_; }
  std::int64_t size() const { return static_cast<std::int64_t>(lru_.size()); }
  std::int64_t written_blocks() const { return written_; }    // blocks written, rewrites included
  std::int64_t evicted_blocks() const { return evicted_; }    // blocks pushed out by capacity

  // Throws InvariantViolation when the invariant above is broken.
  void validate() const;

 private:
  std::int64_t capacity_;
  std::list<alloc::BlockHash> lru_;  // most recently written first
  std::unordered_map<alloc::BlockHash, std::list<alloc::BlockHash>::iterator> index_;
  std::int64_t written_ = 0, evicted_ = 0;
};

}  // namespace pagesim::sim
