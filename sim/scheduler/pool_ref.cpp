#include "sim/scheduler/pool_ref.h"

#include "allocator/paged/paged_allocator.h"
#include "allocator/radix/radix_allocator.h"

namespace pagesim::sim {

PoolRef::PoolRef(alloc::PagedAllocator& pool) : any_(&pool), paged_(&pool) {}
PoolRef::PoolRef(alloc::RadixAllocator& pool) : any_(&pool), radix_(&pool) {}

}  // namespace pagesim::sim
