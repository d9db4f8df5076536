#include "sim/cluster/shared_prefix_pool.h"

#include <cassert>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::sim {

SharedPrefixPool::SharedPrefixPool(std::int64_t capacity_blocks) : capacity_(capacity_blocks) {
  assert(capacity_ >= 1);
}

void SharedPrefixPool::write(std::span<const alloc::BlockHash> hashes) {
  for (alloc::BlockHash h : hashes) {
    ++written_;
    if (auto it = index_.find(h); it != index_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second);  // rewritten: most recent again
      continue;
    }
    lru_.push_front(h);
    index_.emplace(h, lru_.begin());
    if (size() > capacity_) {
      index_.erase(lru_.back());
      lru_.pop_back();
      ++evicted_;
    }
  }
}

void SharedPrefixPool::validate() const {
  if (lru_.size() != index_.size() || size() > capacity_)
    throw alloc::InvariantViolation("shared prefix pool: " + std::to_string(lru_.size()) + " blocks listed, " +
                                    std::to_string(index_.size()) + " indexed, capacity " +
                                    std::to_string(capacity_));
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    const auto found = index_.find(*it);
    if (found == index_.end() || found->second != it)
      throw alloc::InvariantViolation("shared prefix pool: block " + std::to_string(*it) +
                                      " listed but not indexed to its entry");
  }
}

}  // namespace pagesim::sim
