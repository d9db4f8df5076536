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

std::string_view contiguous_key_given(const AllocatorConfig& a, const AllocatorDescriptor& under) {
  const alloc::ContiguousPolicy defaults;
  if (!(a.contiguous.reservation == defaults.reservation)) return "allocator.reservation";
  if (a.contiguous.placement != defaults.placement) return "allocator.placement";
  // A kind whose rows follow the model's context writes the row length and buddy chunk it
  // derives for them (build_run), as contiguous would: whatever the file gave, it writes its own.
  if (under.row_length == RowLength::kModelContext) return {};
  if (a.contiguous.max_chunk_blocks != defaults.max_chunk_blocks) return "allocator.max_chunk_blocks";
  // vattention writes its rows' length, max_model_len, there.
  if (under.row_length == RowLength::kAsConfigured && a.max_seq_len != alloc::AllocatorSpec{}.max_seq_len)
    return "allocator.max_seq_len";
  return {};
}

std::string_view vattention_key_given(const AllocatorConfig& a, const AllocatorDescriptor&) {
  return a.vattention_at_default() ? std::string_view() : "allocator.vattention";
}

}  // namespace pagesim::sim
