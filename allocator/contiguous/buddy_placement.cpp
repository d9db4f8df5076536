#include "allocator/contiguous/buddy_placement.h"

#include <algorithm>
#include <bit>
#include <cassert>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

namespace {

bool is_power_of_two(std::int64_t v) {
  return v > 0 && std::has_single_bit(static_cast<std::uint64_t>(v));
}

std::int64_t chunk_blocks(int order) { return std::int64_t{1} << order; }

[[noreturn]] void violation(const std::string& what) {
  throw InvariantViolation("BuddyPlacement: " + what);
}

}  // namespace

BuddyPlacement::BuddyPlacement(std::int64_t capacity_slots, std::int64_t block_size,
                               std::int64_t max_chunk_blocks) {
  if (capacity_slots < 1) {
    throw AllocatorError("buddy placement: capacity_slots must be >= 1, got " +
                         std::to_string(capacity_slots));
  }
  if (!is_power_of_two(block_size)) {
    throw AllocatorError("buddy placement: block_size must be a power of two, got " +
                         std::to_string(block_size));
  }
  if (!is_power_of_two(max_chunk_blocks)) {
    throw AllocatorError("buddy placement: max_chunk_blocks must be a power of two, got " +
                         std::to_string(max_chunk_blocks));
  }
  if (capacity_slots % block_size != 0) {
    throw AllocatorError("buddy placement: capacity_slots (" + std::to_string(capacity_slots) +
                         ") must be a multiple of block_size (" + std::to_string(block_size) + ")");
  }
  block_size_ = block_size;
  num_blocks_ = capacity_slots / block_size;
  max_order_ = std::countr_zero(static_cast<std::uint64_t>(max_chunk_blocks));
  max_range_blocks_ =
      std::min(max_chunk_blocks,
               static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(num_blocks_))));
  free_chunks_.resize(static_cast<std::size_t>(max_order_) + 1);
  free_blocks_ = num_blocks_;

  // Maximal aligned chunks, left to right: at each offset the largest order that is aligned
  // there and still fits in the pool.
  for (std::int64_t offset = 0; offset < num_blocks_;) {
    int order = max_order_;
    while (offset % chunk_blocks(order) != 0 || chunk_blocks(order) > num_blocks_ - offset) {
      --order;
    }
    free_chunks_[static_cast<std::size_t>(order)].insert(offset);
    offset += chunk_blocks(order);
  }
  check_expensive();
}

std::string BuddyPlacement::name() const {
  return std::string(to_string(PlacementKind::kBuddy)) + "(block=" + std::to_string(block_size_) +
         ",max_chunk=" + std::to_string(chunk_blocks(max_order_)) + ")";
}

int BuddyPlacement::order_for(std::int64_t slots) const {
  assert(slots >= 1 && slots <= max_range_slots());
  const std::int64_t blocks = (slots + block_size_ - 1) / block_size_;
  return static_cast<int>(std::bit_width(static_cast<std::uint64_t>(blocks - 1)));
}

std::int64_t BuddyPlacement::range_slots(std::int64_t slots) const {
  assert(slots >= 1);
  if (slots > max_range_slots()) return slots;  // never fits; no rounding that could overflow
  return chunk_blocks(order_for(slots)) * block_size_;
}

std::optional<int> BuddyPlacement::smallest_free_order_at_least(int order) const {
  for (int k = order; k <= max_order_; ++k) {
    if (!free_chunks_[static_cast<std::size_t>(k)].empty()) return k;
  }
  return std::nullopt;
}

bool BuddyPlacement::can_place(std::int64_t range_slots) const {
  if (range_slots > max_range_slots()) return false;
  return smallest_free_order_at_least(order_for(range_slots)).has_value();
}

std::optional<std::int64_t> BuddyPlacement::place(std::int64_t range_slots) {
  assert(range_slots >= 1 && this->range_slots(range_slots) == range_slots);
  if (range_slots > max_range_slots()) return std::nullopt;
  const int order = order_for(range_slots);
  const std::optional<int> found = smallest_free_order_at_least(order);
  if (!found) return std::nullopt;

  int k = *found;
  auto& source = free_chunks_[static_cast<std::size_t>(k)];
  const std::int64_t offset = *source.begin();  // lowest address: the deterministic choice
  source.erase(source.begin());
  // Split down to the needed order, keeping the lower half and freeing the upper one.
  while (k > order) {
    --k;
    free_chunks_[static_cast<std::size_t>(k)].insert(offset + chunk_blocks(k));
  }
  free_blocks_ -= chunk_blocks(order);
  check_expensive();
  return offset * block_size_;
}

void BuddyPlacement::release(SlotRange range) {
  assert(range.slots >= 1 && range.slots <= max_range_slots() &&
         this->range_slots(range.slots) == range.slots && range.offset % range.slots == 0 &&
         range.offset >= 0 && range.end() <= capacity_slots());
  int order = order_for(range.slots);
  std::int64_t offset = range.offset / block_size_;
  assert(!free_chunks_[static_cast<std::size_t>(order)].contains(offset));  // double release
  free_blocks_ += chunk_blocks(order);
  // Merge with the buddy while it is free at the same order.
  while (order < max_order_) {
    const std::int64_t buddy = offset ^ chunk_blocks(order);
    if (buddy > num_blocks_ - chunk_blocks(order)) break;  // buddy lies past the pool's end
    if (free_chunks_[static_cast<std::size_t>(order)].erase(buddy) == 0) break;
    offset = std::min(offset, buddy);
    ++order;
  }
  free_chunks_[static_cast<std::size_t>(order)].insert(offset);
  check_expensive();
}

std::int64_t BuddyPlacement::unusable_free(std::int64_t range_slots) const {
  if (range_slots > max_range_slots()) return free_slots();
  const int needed = order_for(range_slots);
  std::int64_t blocks = 0;
  for (int k = 0; k < needed; ++k) {
    blocks += static_cast<std::int64_t>(free_chunks_[static_cast<std::size_t>(k)].size()) *
              chunk_blocks(k);
  }
  return blocks * block_size_;
}

std::vector<std::int64_t> BuddyPlacement::free_chunks(int order) const {
  assert(order >= 0 && order <= max_order_);
  const auto& chunks = free_chunks_[static_cast<std::size_t>(order)];
  return {chunks.begin(), chunks.end()};
}

std::vector<SlotRange> BuddyPlacement::free_holes() const {
  std::vector<SlotRange> holes;
  for (int k = 0; k <= max_order_; ++k) {
    for (std::int64_t offset : free_chunks_[static_cast<std::size_t>(k)]) {
      holes.push_back({offset * block_size_, chunk_blocks(k) * block_size_});
    }
  }
  std::sort(holes.begin(), holes.end(),
            [](const SlotRange& a, const SlotRange& b) { return a.offset < b.offset; });
  return holes;
}

void BuddyPlacement::check_range_shape(SlotRange range) const {
  // Built only on failure: validate() calls this for every held range.
  const auto where = [&] {
    return "range [" + std::to_string(range.offset) + ", " + std::to_string(range.end()) + ")";
  };
  if (range.offset < 0 || range.slots < 1 || range.end() > capacity_slots()) {
    violation(where() + " lies outside the pool of " + std::to_string(capacity_slots()) + " slots");
  }
  if (range.offset % block_size_ != 0 || range.slots % block_size_ != 0) {
    violation(where() + " is not made of whole blocks of " + std::to_string(block_size_));
  }
  const std::int64_t blocks = range.slots / block_size_;
  if (!is_power_of_two(blocks) || blocks > chunk_blocks(max_order_)) {
    violation(where() + " is not a chunk: " + std::to_string(blocks) +
              " blocks is not a power of two <= the max chunk");
  }
  if ((range.offset / block_size_) % blocks != 0) {
    violation(where() + " is not aligned to its chunk size of " + std::to_string(blocks) +
              " blocks");
  }
}

void BuddyPlacement::validate() const {
  if (free_chunks_.size() != static_cast<std::size_t>(max_order_) + 1) {
    violation("one free list per order 0..max_order");
  }
  std::int64_t blocks = 0;
  for (int k = 0; k <= max_order_; ++k) {
    const std::int64_t size = chunk_blocks(k);
    for (std::int64_t offset : free_chunks_[static_cast<std::size_t>(k)]) {
      const auto chunk = [&] {
        return "free chunk at block " + std::to_string(offset) + " of order " + std::to_string(k);
      };
      if (offset < 0 || offset > num_blocks_ - size) violation(chunk() + " lies outside the pool");
      if (offset % size != 0) violation(chunk() + " is not aligned to 2^order blocks");
      if (k < max_order_) {
        const std::int64_t buddy = offset ^ size;
        if (buddy <= num_blocks_ - size &&
            free_chunks_[static_cast<std::size_t>(k)].contains(buddy)) {
          violation(chunk() + " and its buddy at block " + std::to_string(buddy) +
                    " are both free but unmerged");
        }
      }
      blocks += size;
    }
  }
  if (blocks != free_blocks_) {
    violation("free_blocks (" + std::to_string(free_blocks_) + ") != sum of free chunk sizes (" +
              std::to_string(blocks) + ")");
  }
  const std::vector<SlotRange> holes = free_holes();
  for (std::size_t i = 1; i < holes.size(); ++i) {
    if (holes[i - 1].end() > holes[i].offset) {
      violation("free chunks overlap at slot " + std::to_string(holes[i].offset));
    }
  }
}

void BuddyPlacement::check_expensive() const {
#ifdef PAGESIM_EXPENSIVE_CHECKS
  validate();
#endif
}

}  // namespace pagesim::alloc
