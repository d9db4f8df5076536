// Placement: decides where in a pool of token slots a contiguous range goes.
//
// A placement owns the free space of one pool: it hands out ranges ([offset, offset + slots)
// in slots) and takes them back. It does not know which sequence holds a range; the caller
// (ContiguousAllocator) records that and must give back exactly the range it was handed.
// Policies: BuddyPlacement (binary buddy over blocks, the vLLM paper's Orca model) and
// FitPlacement (first fit / best fit over slot-granular holes). Every choice is
// deterministic: ties go to the lowest address.
//
// Running out of room is a return value (place() gives nullopt). Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagesim::alloc {

// Slots [offset, offset + slots) of a pool.
struct SlotRange {
  std::int64_t offset = 0;
  std::int64_t slots = 0;

  std::int64_t end() const { return offset + slots; }
  friend bool operator==(const SlotRange&, const SlotRange&) = default;
};

enum class PlacementKind { kBuddy, kFirstFit, kBestFit };

// The names configs write (a std::array of pairs, the form of every name table).
inline constexpr std::array<std::pair<PlacementKind, std::string_view>, 3> kPlacementKindNames = {{
    {PlacementKind::kBuddy, "buddy"},
    {PlacementKind::kFirstFit, "first_fit"},
    {PlacementKind::kBestFit, "best_fit"},
}};

// "buddy", "first_fit", "best_fit"; "?" for a value outside the enum.
constexpr std::string_view to_string(PlacementKind kind) {
  for (const auto& [k, name] : kPlacementKindNames)
    if (k == kind) return name;
  return "?";
}

class Placement {
 public:
  virtual ~Placement() = default;
  Placement() = default;
  Placement(const Placement&) = delete;
  Placement& operator=(const Placement&) = delete;

  // "buddy", "first_fit" or "best_fit", with parameters where they matter.
  virtual std::string name() const = 0;
  virtual std::int64_t capacity_slots() const = 0;
  // Slots in no handed-out range. O(1).
  virtual std::int64_t free_slots() const = 0;

  // Size of the range that covers `slots` slots: `slots` rounded up to the placement's unit
  // (buddy: a power of two of blocks). A result above max_range_slots() never fits.
  // REQUIRES: slots >= 1.
  virtual std::int64_t range_slots(std::int64_t slots) const = 0;
  // The largest range an empty pool can hold.
  virtual std::int64_t max_range_slots() const = 0;

  // True if place(range_slots) would succeed now. REQUIRES: range_slots is a result of
  // range_slots().
  virtual bool can_place(std::int64_t range_slots) const = 0;
  // Takes a free range of exactly `range_slots` slots and returns its offset, or nullopt
  // (and no change) when no hole is large enough. O(log n). Same REQUIRES as can_place().
  virtual std::optional<std::int64_t> place(std::int64_t range_slots) = 0;
  // Gives back a range from place(); neighbouring free space merges with it. O(log n).
  // REQUIRES: `range` is held (handed out by place() and not released since).
  virtual void release(SlotRange range) = 0;

  // Free slots lying in holes too small to hold a range of `range_slots` slots: the external
  // fragmentation a request of that size sees. Every free slot when range_slots exceeds
  // max_range_slots(). Buddy: O(orders); fit: O(log n).
  virtual std::int64_t unusable_free(std::int64_t range_slots) const = 0;

  // Every free hole (buddy: every free chunk), ascending by offset. O(n); for validation.
  virtual std::vector<SlotRange> free_holes() const = 0;
  // Throws InvariantViolation unless `range` has a shape place() can return (inside the pool;
  // buddy: an aligned power-of-two chunk of blocks). Says nothing about whether it is held.
  virtual void check_range_shape(SlotRange range) const = 0;
  // Checks the placement's own identities by a full scan; throws InvariantViolation.
  virtual void validate() const = 0;
};

}  // namespace pagesim::alloc
