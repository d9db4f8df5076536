// RemotePrefixSource: prefix blocks held somewhere other than this allocator's pool — another
// replica's prefix cache or a cluster-wide pool (a global cache, as Mooncake Store is) —
// which a prefix-caching allocator may copy in at admission instead of computing them.
//
// The allocator borrows the source (KvAllocator::set_remote_prefix_source) and only asks
// holds(); it never changes the source, and the source keeps its copy. RemoteFetch is what
// the allocator copied in since the engine last asked (KvAllocator::take_remote_fetch); the
// engine prices it at the network's bandwidth. Not thread-safe.
#pragma once

#include <cstdint>

namespace pagesim::alloc {

using BlockHash = std::uint64_t;  // as kv_allocator.h

class RemotePrefixSource {
 public:
  virtual ~RemotePrefixSource() = default;
  // True when the block keyed by h can be fetched from elsewhere now. Changes nothing.
  virtual bool holds(BlockHash h) const = 0;
};

// Blocks fetched from a RemotePrefixSource into the GPU pool, and the prompt tokens they
// served (the last prompt token is always computed, so a block may serve fewer than its size).
struct RemoteFetch {
  std::int64_t blocks = 0;
  std::int64_t hit_tokens = 0;              // first admissions
  std::int64_t readmission_hit_tokens = 0;  // re-admissions after recompute preemption

  bool empty() const { return blocks == 0; }
  RemoteFetch& operator+=(const RemoteFetch& o) {
    blocks += o.blocks;
    hit_tokens += o.hit_tokens;
    readmission_hit_tokens += o.readmission_hit_tokens;
    return *this;
  }
};

}  // namespace pagesim::alloc
