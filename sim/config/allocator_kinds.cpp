#include "sim/config/allocator_kinds.h"

#include <memory>
#include <utility>

#include "allocator/paged/paged_allocator.h"
#include "allocator/radix/radix_allocator.h"
#include "sim/config/experiment_config.h"

namespace pagesim::sim {

BuiltPool build_paged_pool(const alloc::AllocatorSpec& spec) {
  std::unique_ptr<alloc::PagedAllocator> paged = alloc::make_paged_allocator(spec);
  PoolRef pool(*paged);
  return {std::move(paged), pool};
}

BuiltPool build_radix_pool(const alloc::AllocatorSpec& spec) {
  std::unique_ptr<alloc::RadixAllocator> radix = alloc::make_radix_allocator(spec);
  PoolRef pool(*radix);
  return {std::move(radix), pool};
}

BuiltPool build_kv_pool(const alloc::AllocatorSpec& spec) {
  std::unique_ptr<alloc::KvAllocator> any = alloc::make_allocator(spec);
  PoolRef pool(*any);
  return {std::move(any), pool};
}

bool vattention_section_at_default(const AllocatorConfig& a) { return a.vattention_at_default(); }

}  // namespace pagesim::sim
