// make_allocator: builds any KV allocator from one plain spec with textual policy names, as
// experiment configs give them. Throws AllocatorError naming the bad field and the values
// allowed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

struct AllocatorSpec {
  std::string kind = "paged";         // paged | contiguous
  std::int64_t capacity_slots = 0;    // pool size in token slots (paged: rounded down to blocks)
  std::int64_t block_size = 16;       // tokens per block (paged, and the contiguous buddy unit)
  bool prefix_cache = false;          // paged
  std::string eviction = "lru";       // paged prefix cache: lru | fifo
  std::int64_t cpu_blocks = 0;        // paged: CPU swap pool in blocks
  std::string reservation = "max";    // contiguous: max | pow2 | oracle | fixed:N
  std::string placement = "buddy";    // contiguous: buddy | first_fit | best_fit
  std::int64_t max_seq_len = 2048;    // contiguous: reservation cap, tokens
  std::int64_t max_chunk_blocks = 128;  // contiguous buddy: largest chunk, blocks
};

class PagedAllocator;

std::unique_ptr<KvAllocator> make_allocator(const AllocatorSpec& spec);
// The paged pool `spec` describes, for callers that drive its own operations (swapping,
// free-block counts). REQUIRES: spec.kind == "paged" (else AllocatorError).
std::unique_ptr<PagedAllocator> make_paged_allocator(const AllocatorSpec& spec);

}  // namespace pagesim::alloc
