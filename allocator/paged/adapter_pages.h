// AdapterPages: the LoRA adapters whose weights live in a PagedAllocator's GPU pool, in blocks
// of the pool (S-LoRA's unified paging: adapter weights and KV share one pool of pages; Sheng
// et al., "S-LoRA: Serving Thousands of Concurrent LoRA Adapters", MLSys 2024, Section 4.1).
//
// Bookkeeping only: which adapter holds which blocks, how many running requests pin it, and
// the least-recently-used order of the idle (unpinned) ones, which the pool evicts under
// pressure. The PagedAllocator owns one and takes and returns the blocks itself.
//
// Invariants (validate() checks them):
//   blocks() == Σ |blocks of a| over resident adapters
//   idle_blocks() == Σ |blocks of a| over resident adapters with pins == 0
//   the idle list holds exactly the resident adapters with pins == 0, each once
// Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <vector>

#include "allocator/block.h"

namespace pagesim::alloc {

using AdapterId = std::int32_t;  // >= 0; chosen by the workload (a trace's adapter column)

class AdapterPages {
 public:
  bool resident(AdapterId a) const { return adapters_.count(a) != 0; }
  // Requests pinning a. REQUIRES: resident(a).
  std::int32_t pins(AdapterId a) const { return adapters_.at(a).pins; }
  // Blocks a holds. REQUIRES: resident(a).
  std::int64_t blocks_of(AdapterId a) const { return static_cast<std::int64_t>(adapters_.at(a).blocks.size()); }
  std::int64_t num_resident() const { return static_cast<std::int64_t>(adapters_.size()); }
  std::int64_t blocks() const { return blocks_; }
  // Blocks of idle adapters: what eviction can give back.
  std::int64_t idle_blocks() const { return idle_blocks_; }

  // Makes a resident with `blocks`, idle, the most recently used. REQUIRES: !resident(a).
  void add(AdapterId a, std::vector<BlockId> blocks);
  void pin(AdapterId a);
  // REQUIRES: pins(a) > 0. At 0, a becomes the most recently used idle adapter.
  void unpin(AdapterId a);
  // The least recently used idle adapter. REQUIRES: idle_blocks() > 0.
  AdapterId victim() const { return idle_.front(); }
  // Forgets a and returns its blocks. REQUIRES: resident(a), pins(a) == 0.
  std::vector<BlockId> remove(AdapterId a);

  // Calls f(adapter, its blocks) for every resident adapter (any order).
  void for_each(const std::function<void(AdapterId, const std::vector<BlockId>&)>& f) const;
  // Throws InvariantViolation naming the first identity above that is broken.
  void validate() const;

 private:
  struct Entry {
    std::vector<BlockId> blocks;
    std::int32_t pins = 0;
    std::list<AdapterId>::iterator idle_pos;  // valid while pins == 0
  };
  std::unordered_map<AdapterId, Entry> adapters_;
  std::list<AdapterId> idle_;  // least recently used first
  std::int64_t blocks_ = 0;
  std::int64_t idle_blocks_ = 0;
};

}  // namespace pagesim::alloc
