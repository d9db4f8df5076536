#include "allocator/make_allocator.h"

#include <cstdint>
#include <limits>
#include <string>

#include "allocator/allocator_error.h"
#include "allocator/contiguous/contiguous_allocator.h"
#include "allocator/hetero/grouped_kv_allocator.h"
#include "allocator/hetero/kv_layout.h"
#include "allocator/paged/paged_allocator.h"
#include "allocator/radix/radix_allocator.h"

namespace pagesim::alloc {
namespace {

// KvAllocator::block_size() is 32-bit: a larger block would be narrowed to another size (the
// paged pool was built with it: 2^32 + 16 became 16).
void check_block_size_fits(const AllocatorSpec& spec) {
  if (spec.block_size > std::numeric_limits<std::int32_t>::max())
    throw AllocatorError("block_size must be at most " + std::to_string(std::numeric_limits<std::int32_t>::max()) +
                         " tokens, got " + std::to_string(spec.block_size));
}

}  // namespace

std::unique_ptr<PagedAllocator> make_paged_allocator(const AllocatorSpec& spec) {
  if (spec.kind != AllocatorKind::kPaged)
    throw AllocatorError("allocator kind: expected paged, got '" + std::string(to_string(spec.kind)) + "'");
  check_block_size_fits(spec);
  // The allocator checks its settings (a power-of-two block size, at least one block).
  PagedAllocatorSettings s;
  s.block_size = static_cast<std::int32_t>(spec.block_size);
  s.num_blocks = spec.block_size > 0 ? spec.capacity_slots / spec.block_size : 0;
  s.num_cpu_blocks = spec.cpu_blocks;
  s.prefix_cache = spec.prefix_cache;
  s.eviction = spec.eviction;
  s.single_free_queue = spec.single_free_queue;
  s.offload = spec.offload;
  s.adapter_region_blocks = spec.adapter_region_blocks;
  return std::make_unique<PagedAllocator>(s);
}

std::unique_ptr<RadixAllocator> make_radix_allocator(const AllocatorSpec& spec) {
  if (spec.kind != AllocatorKind::kRadix)
    throw AllocatorError("allocator kind: expected radix, got '" + std::string(to_string(spec.kind)) + "'");
  check_block_size_fits(spec);
  RadixAllocatorSettings s;
  s.page_size = static_cast<std::int32_t>(spec.block_size);
  s.num_pages = spec.block_size > 0 ? spec.capacity_slots / spec.block_size : 0;
  return std::make_unique<RadixAllocator>(s);
}

std::unique_ptr<GroupedKvAllocator> make_grouped_allocator(const AllocatorSpec& spec) {
  check_block_size_fits(spec);
  const auto bs = static_cast<std::int32_t>(spec.block_size);
  KvLayout layout;
  switch (spec.kind) {
    case AllocatorKind::kUniform: layout = uniform_layout(spec.layer_groups, spec.pool_bytes, bs); break;
    case AllocatorKind::kHybrid: layout = hybrid_layout(spec.layer_groups, spec.pool_bytes, bs); break;
    case AllocatorKind::kJenga: layout = jenga_layout(spec.layer_groups, spec.pool_bytes, bs); break;
    default:
      throw AllocatorError("allocator kind: expected uniform, hybrid or jenga, got '" +
                           std::string(to_string(spec.kind)) + "'");
  }
  // vLLM v1's one free queue where the pool is a block pool of one page size (jenga with
  // pages of several sizes keeps its own order: grouped_kv_allocator.h).
  const bool single_free_queue = spec.single_free_queue && GroupedKvAllocator::one_page_size(layout);
  return std::make_unique<GroupedKvAllocator>(spec.layer_groups, std::move(layout), spec.prefix_cache, spec.eviction,
                                              single_free_queue);
}

std::unique_ptr<KvAllocator> make_allocator(const AllocatorSpec& spec) {
  switch (spec.kind) {
    case AllocatorKind::kPaged: return make_paged_allocator(spec);
    case AllocatorKind::kRadix: return make_radix_allocator(spec);
    case AllocatorKind::kContiguous: {
      if (spec.contiguous.placement == PlacementKind::kBuddy) check_block_size_fits(spec);  // others report 1
      ContiguousSettings s;
      static_cast<ContiguousPolicy&>(s) = spec.contiguous;
      s.capacity_slots = spec.pool_slots(spec.capacity_slots);  // buddy: whole blocks, as paged
      s.block_size = spec.block_size;
      s.max_seq_len = spec.max_seq_len;
      return std::make_unique<ContiguousAllocator>(s);
    }
    case AllocatorKind::kUniform:
    case AllocatorKind::kHybrid:
    case AllocatorKind::kJenga: return make_grouped_allocator(spec);
    case AllocatorKind::kVattention: {
      VattentionSettings s = spec.vattention;
      s.groups = spec.layer_groups;
      s.pool_bytes = spec.pool_bytes;
      s.max_seq_len = spec.max_seq_len;
      return std::make_unique<VattentionAllocator>(s);
    }
  }
  throw AllocatorError("allocator kind: not one of paged, contiguous, radix, uniform, hybrid, jenga, vattention");  // unreachable: every kind is handled
}

}  // namespace pagesim::alloc
