// EvictionPolicy: which unreferenced prefix-cache block to reuse when the free list is empty.
//
// The prefix cache tells the policy when a cached block becomes evictable (its last
// reference was dropped), when it stops being evictable (a new request reused it), when a
// prompt lookup hits it, and (for policies that ask, protects_pending()) whether a waiting
// request's prompt will hit it; the policy names the victim on demand. Policies (n = the
// evictable blocks; every operation's cost):
//   lru   least recently released first (vLLM's default); O(1) via an intrusive list
//   fifo  earliest cached first, regardless of reuse; O(log n)
//   lfu   fewest hits since the block was cached first; ties: least recently released;
//         O(log n)
//   lru_protect_waiting
//         lru over the blocks no waiting request will hit, then lru over the protected
//         ones; O(log n). The waiting-queue-informed LRU of vLLM RFC #48485
//         (github.com/vllm-project/vllm/issues/48485), over the whole waiting queue
//         (the RFC looks at its first max_num_seqs requests).
// "Released" means the block's last reference was dropped; a request frees its blocks last
// to first, so within one release the deepest prefix block counts as released earliest.
// Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "allocator/pool/block_pool.h"

namespace pagesim::alloc {

class EvictionPolicy {
 public:
  virtual ~EvictionPolicy() = default;
  // The policy's name in kEvictionKindNames.
  virtual std::string name() const = 0;
  // b was just cached under a hash (called once per caching of b): it starts with no hits
  // and unprotected. REQUIRES: !contains(b).
  virtual void on_cached(BlockId b) = 0;
  // A prompt lookup hit b (b is referenced: erase(b) came first if it was evictable).
  // Counts toward lfu's frequency; others ignore it. REQUIRES: !contains(b).
  virtual void on_hit(BlockId) {}
  // True when the policy uses set_protected; the cache keeps no waiting-queue bookkeeping
  // for policies that do not.
  virtual bool protects_pending() const { return false; }
  // Whether a waiting request's prompt will hit cached block b; b may be evictable or
  // referenced. Ignored unless protects_pending().
  virtual void set_protected(BlockId, bool) {}
  virtual bool is_protected(BlockId) const { return false; }
  // b became evictable. REQUIRES: !contains(b).
  virtual void insert(BlockId b) = 0;
  // b is referenced again. REQUIRES: contains(b).
  virtual void erase(BlockId b) = 0;
  // Removes and returns the block to evict. REQUIRES: size() > 0.
  virtual BlockId pop_victim() = 0;
  // The block pop_victim() would return now, left in place. REQUIRES: size() > 0.
  virtual BlockId peek_victim() const = 0;
  virtual std::int64_t size() const = 0;
  virtual bool contains(BlockId b) const = 0;
};

enum class EvictionKind { kLru, kFifo, kLfu, kLruProtectWaiting };

// The names configs write (a std::array of pairs, the form of every name table).
inline constexpr std::array<std::pair<EvictionKind, std::string_view>, 4> kEvictionKindNames = {{
    {EvictionKind::kLru, "lru"},
    {EvictionKind::kFifo, "fifo"},
    {EvictionKind::kLfu, "lfu"},
    {EvictionKind::kLruProtectWaiting, "lru_protect_waiting"},
}};

// "lru", "fifo", "lfu", "lru_protect_waiting"; "?" for a value outside the enum.
constexpr std::string_view to_string(EvictionKind kind) {
  for (const auto& [k, name] : kEvictionKindNames)
    if (k == kind) return name;
  return "?";
}

// Which cached block goes first, in a line (`pagesim presets`).
constexpr std::string_view describe(EvictionKind kind) {
  switch (kind) {
    case EvictionKind::kLru: return "the least recently released block (vLLM's prefix cache; the default)";
    case EvictionKind::kFifo: return "the block cached earliest; reuse does not refresh it";
    case EvictionKind::kLfu: return "the block with the fewest prompt hits since cached; ties: least recently released";
    case EvictionKind::kLruProtectWaiting:
      return "lru over blocks no waiting request's prompt will hit, then over those it will";
  }
  return "?";
}

// A policy over block ids [0, num_blocks).
std::unique_ptr<EvictionPolicy> make_eviction_policy(EvictionKind kind, std::int64_t num_blocks);

}  // namespace pagesim::alloc
