// PoolRef: the KV pool a scheduler is built over, seen through the interfaces policies drive:
// the KvAllocator interface every pool offers, and the PagedAllocator or RadixAllocator itself
// when the pool is one (for policies that drive its own operations: swapping and free-block
// counts, the radix tree). A non-owning view, cheap to copy; the pool must outlive every
// scheduler built over it. Its constructors are implicit, so that make_scheduler(settings,
// pool) takes any allocator: a pool passed as its KvAllocator base offers that interface only.
#pragma once

#include <string_view>

#include "allocator/kv_allocator.h"

namespace pagesim::alloc {
class PagedAllocator;
class RadixAllocator;
}  // namespace pagesim::alloc

namespace pagesim::sim {

// The interface of a pool a policy drives (SchedulerDescriptor::drives).
enum class PoolInterface {
  kKvAllocator,  // the KvAllocator interface alone: every pool
  kPaged,        // a PagedAllocator's own operations (swap pool, free blocks, watermark)
  kRadix,        // a RadixAllocator's tree (SGLang's cache-aware order, retraction)
};

// The pool that offers `i`, as make_scheduler's errors name it: "a paged allocator
// (allocator.kind: paged)", "the radix allocator (allocator.kind: radix)", "any allocator".
constexpr std::string_view pool_phrase(PoolInterface i) {
  switch (i) {
    case PoolInterface::kKvAllocator: return "any allocator";
    case PoolInterface::kPaged: return "a paged allocator (allocator.kind: paged)";
    case PoolInterface::kRadix: return "the radix allocator (allocator.kind: radix)";
  }
  return "?";
}

class PoolRef {
 public:
  PoolRef(alloc::KvAllocator& pool) : any_(&pool) {}
  PoolRef(alloc::PagedAllocator& pool);
  PoolRef(alloc::RadixAllocator& pool);

  alloc::KvAllocator& any() const { return *any_; }
  // The pool itself when it is one (and was given as one), else null.
  alloc::PagedAllocator* paged() const { return paged_; }
  alloc::RadixAllocator* radix() const { return radix_; }
  // Whether a policy driving `i` can run over this pool.
  bool offers(PoolInterface i) const {
    return i == PoolInterface::kKvAllocator || (i == PoolInterface::kPaged && paged_ != nullptr) ||
           (i == PoolInterface::kRadix && radix_ != nullptr);
  }

 private:
  alloc::KvAllocator* any_;
  alloc::PagedAllocator* paged_ = nullptr;
  alloc::RadixAllocator* radix_ = nullptr;
};

}  // namespace pagesim::sim
