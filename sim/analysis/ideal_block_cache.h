// IdealBlockCache: a prefix cache of a fixed number of blocks under one replacement policy,
// simulated directly, with no timing and no pinned blocks (the idealised model of the
// Mooncake paper's Fig. 9; a timed run's allocator is allocator/paged/).
//
// Requests are served as in lru_stack_distance.h: look the prompt's blocks up in order (a
// miss ends the hit run), then use every block in order: a present block is touched, an
// absent one inserted, evicting the policy's victim when the cache is full (possibly a block
// of the same request: nothing is pinned). Victims:
//   lru   least recently used
//   fifo  earliest inserted (touching a present block does not move it)
//   lfu   fewest uses since insertion (a block's count restarts when it is evicted and
//         comes back), ties broken by least recent use
// O(log n) per access; memory one entry per cached block. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <span>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "sim/analysis/prompt_blocks.h"

namespace pagesim::sim {

enum class IdealPolicy { kLru, kFifo, kLfu };

inline constexpr std::array<std::pair<IdealPolicy, std::string_view>, 3> kIdealPolicyNames = {{
    {IdealPolicy::kLru, "lru"},
    {IdealPolicy::kFifo, "fifo"},
    {IdealPolicy::kLfu, "lfu"},
}};

class IdealBlockCache {
 public:
  // REQUIRES: capacity_blocks >= 0 (0: nothing is ever cached).
  IdealBlockCache(IdealPolicy policy, std::int64_t capacity_blocks);

  // Serves one request. Returns how many of its leading blocks hit.
  std::size_t lookup_then_use(std::span<const PromptBlock> blocks);

  std::int64_t cached_blocks() const { return static_cast<std::int64_t>(entries_.size()); }

 private:
  // Victim order: the smallest rank is evicted first; the key makes ranks unique.
  using Rank = std::tuple<std::int64_t, std::int64_t, alloc::BlockHash>;
  struct Entry {
    std::int64_t inserted = 0;   // access time of insertion
    std::int64_t last_use = 0;   // access time of the latest use
    std::int64_t uses = 0;       // uses since insertion
  };
  Rank rank_of(alloc::BlockHash key, const Entry& e) const;
  void use(alloc::BlockHash key);

  IdealPolicy policy_;
  std::int64_t capacity_;
  std::int64_t clock_ = 0;  // access counter
  std::unordered_map<alloc::BlockHash, Entry> entries_;  // invariant: size() <= capacity_
  std::set<Rank> order_;  // one rank per entry, rank_of(its current state)
};

}  // namespace pagesim::sim
