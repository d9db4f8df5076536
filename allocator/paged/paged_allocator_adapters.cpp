// PagedAllocator: LoRA adapter pages (S-LoRA's unified paging) in the GPU pool.
#include "allocator/paged/paged_allocator.h"

#include <cassert>
#include <string>
#include <utility>
#include <vector>

#include "allocator/paged/paged_misuse.h"

namespace pagesim::alloc {

using paged_detail::misuse;

std::int64_t PagedAllocator::adapter_blocks_to_pin(AdapterId a, std::int64_t blocks) const {
  if (!adapters_.resident(a)) return blocks;
  return adapters_.pins(a) == 0 ? adapters_.blocks_of(a) : 0;
}

bool PagedAllocator::pin_adapter(AdapterId a, std::int64_t blocks) {
  assert(blocks >= 1 && adapter_blocks_to_pin(a, blocks) <= num_free_blocks());
  const bool load = !adapters_.resident(a);
  if (load) {
    std::vector<BlockId> pages;
    pages.reserve(static_cast<std::size_t>(blocks));
    for (std::int64_t i = 0; i < blocks; ++i) {
      pages.push_back(take_gpu_block());
      --owned_blocks_;  // adapter weights, not KV (adapter_weight_blocks)
    }
    adapters_.add(a, std::move(pages));
  }
  adapters_.pin(a);
  return load;
}

void PagedAllocator::unpin_adapter(AdapterId a) {
  if (!adapters_.resident(a) || adapters_.pins(a) == 0) misuse("adapter " + std::to_string(a) + " is not pinned");
  adapters_.unpin(a);
}

void PagedAllocator::evict_idle_adapter() {
  for (BlockId b : adapters_.remove(adapters_.victim())) {
    gpu_.drop_ref(b);
    gpu_.give_back(b);
  }
  ++adapter_evictions_;
}

}  // namespace pagesim::alloc
