// AdapterCache: one replica's LoRA adapters — which are on the GPU, which in the host's cache,
// which the running requests pin — under one of LoraSettings' placements (lora_settings.h).
//
// The scheduler asks before admitting a request that names an adapter: can_pin() (vllm: a
// slot holds it or one can be freed of an idle adapter), blocks_to_pin() (unified: how much of
// the KV pool loading or pinning it takes), then pin() when it admits, unpin() when the
// request's sequences are freed. A pin that loads the adapter adds its transfer time to
// take_load_seconds(), which the engine adds to the iteration being planned. Adapter weights
// are blocks of the PagedAllocator (its fixed region for vllm, adapter pages for unified), so
// the breakdown's adapter_weights class and the KV compete exactly.
// The allocator is borrowed and must outlive the cache. Not thread-safe.
#pragma once

#include <cstdint>
#include <list>
#include <utility>
#include <unordered_map>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/scheduler/lora_settings.h"

namespace pagesim::sim {

struct AdapterCounters {
  std::int64_t loads = 0;        // host-to-GPU adapter loads (GPU misses)
  std::int64_t cpu_misses = 0;   // of those, adapters not in the host cache either
  std::int64_t evictions = 0;    // adapters dropped from the GPU to make room
  double load_bytes = 0;
  double load_seconds = 0;
};

class AdapterCache {
 public:
  // adapter_bytes: one adapter's weights; slot_bytes: one vllm slot (>= adapter_bytes);
  // block_bytes: one KV block; load_bytes_per_s: host-to-GPU bandwidth (> 0).
  // REQUIRES (the config checks them): vllm: the region of max_loras slots is already
  // reserved in `pool` (PagedAllocatorSettings::adapter_region_blocks); unified: one adapter's
  // blocks fit the pool.
  AdapterCache(const LoraSettings& settings, alloc::PagedAllocator& pool, double adapter_bytes, double block_bytes,
               double load_bytes_per_s);

  // Blocks of the KV pool one adapter's pages take (unified).
  std::int64_t adapter_blocks() const { return adapter_blocks_; }
  // Whether adapter a is on the GPU now.
  bool resident(alloc::AdapterId a) const;
  // vllm: a is resident or an idle slot can take it; unified: always (memory decides,
  // blocks_to_pin). False means no batch can hold a now (vLLM skips the request).
  bool can_pin(alloc::AdapterId a) const;
  // KV-pool blocks pin(a) takes from the allocator's num_free_blocks(); 0 under vllm.
  std::int64_t blocks_to_pin(alloc::AdapterId a) const {
    return settings_.placement == LoraPlacement::kUnified ? pool_.adapter_blocks_to_pin(a, adapter_blocks_) : 0;
  }
  // Whether admission `a` of a request naming adapter `ad` (-1: none; else not pinned by it)
  // fits the pool now with the adapter's pages: blocks_to_admit(a) + blocks_to_pin(ad) <=
  // num_free_blocks(), the test PagedAllocator::can_admit makes for the KV alone.
  bool fits(const alloc::AdmitRequest& a, alloc::AdapterId ad) const {
    return pool_.blocks_to_admit(a) + (ad >= 0 ? blocks_to_pin(ad) : 0) <= pool_.num_free_blocks();
  }
  // Slots of the KV pool no request can ever use beside r's adapter: the vllm region, or one
  // adapter's pages under unified (when r names one).
  std::int64_t reserved_slots(bool names_adapter) const {
    const std::int64_t blocks = settings_.placement == LoraPlacement::kVllm ? pool_.adapter_region_blocks()
                                : names_adapter                            ? adapter_blocks_
                                                                           : 0;
    return blocks * pool_.block_size();
  }
  // One more running request uses a: loads it if needed (priced). REQUIRES: can_pin(a), and
  // under unified blocks_to_pin(a) <= the pool's num_free_blocks().
  void pin(alloc::AdapterId a);
  // REQUIRES: a pinned.
  void unpin(alloc::AdapterId a);

  // Seconds of adapter loads since the last call, and forgets them.
  double take_load_seconds() { return std::exchange(pending_load_s_, 0.0); }
  AdapterCounters counters() const;
  const LoraSettings& settings() const { return settings_; }
  // Checks slot and pin identities; throws std::logic_error naming the first broken.
  void validate() const;

 private:
  void load(alloc::AdapterId a);  // counts a GPU load and the host cache's hit or miss

  LoraSettings settings_;
  alloc::PagedAllocator& pool_;
  double adapter_bytes_;
  double load_bytes_per_s_;
  std::int64_t adapter_blocks_;
  double pending_load_s_ = 0;
  AdapterCounters counters_;
  // vllm: the slots (adapter or kNoAdapter, pins) and their last use, for LRU replacement.
  struct Slot {
    alloc::AdapterId adapter = -1;
    std::int32_t pins = 0;
    std::uint64_t last_used = 0;
  };
  std::vector<Slot> slots_;
  std::unordered_map<alloc::AdapterId, std::size_t> slot_of_;
  std::uint64_t clock_ = 0;
  // The host cache: most recently used last.
  std::list<alloc::AdapterId> cpu_lru_;
  std::unordered_map<alloc::AdapterId, std::list<alloc::AdapterId>::iterator> cpu_pos_;
};

}  // namespace pagesim::sim
