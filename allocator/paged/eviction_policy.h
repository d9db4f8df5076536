// EvictionPolicy: which unreferenced prefix-cache block to reuse when the free list is empty.
//
// The prefix cache tells the policy when a cached block becomes evictable (its last
// reference was dropped) and when it stops being evictable (a new request reused it); the
// policy names the victim on demand. Policies:
//   lru   least recently released first (vLLM's default); O(1) via an intrusive list
//   fifo  earliest cached first, regardless of reuse; O(log n)
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "allocator/paged/block_pool.h"

namespace pagesim::alloc {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // The policy's name in kEvictionKindNames.
  virtual std::string name() const = 0;
  // b was just cached under a hash (called once per caching of b).
  virtual void on_cached(BlockId b) = 0;
  // b became evictable. REQUIRES: !contains(b).
  virtual void insert(BlockId b) = 0;
  // b is referenced again. REQUIRES: contains(b).
  virtual void erase(BlockId b) = 0;
  // Removes and returns the block to evict. REQUIRES: size() > 0.
  virtual BlockId pop_victim() = 0;
  virtual std::int64_t size() const = 0;
  virtual bool contains(BlockId b) const = 0;
};

enum class EvictionKind { kLru, kFifo };

// The names configs write (a std::array of pairs, the form of every name table).
inline constexpr std::array<std::pair<EvictionKind, std::string_view>, 2> kEvictionKindNames = {{
    {EvictionKind::kLru, "lru"},
    {EvictionKind::kFifo, "fifo"},
}};

// "lru", "fifo"; "?" for a value outside the enum.
constexpr std::string_view to_string(EvictionKind kind) {
  for (const auto& [k, name] : kEvictionKindNames)
    if (k == kind) return name;
  return "?";
}

// A policy over block ids [0, num_blocks).
std::unique_ptr<EvictionPolicy> make_eviction_policy(EvictionKind kind, std::int64_t num_blocks);

}  // namespace pagesim::alloc
