// FitPlacement: first-fit or best-fit placement of ranges at slot granularity.
//
// The pool's free space is a set of holes, each a maximal run of free slots. A range of n
// slots is carved from the low end of a hole:
//   first_fit  the lowest-address hole of length >= n
//   best_fit   the shortest hole of length >= n, the lowest address among equals
// Releasing a range merges it with the holes touching it on either side, so no two holes are
// ever adjacent. Both searches, release and unusable_free take expected O(log holes) through
// two augmented HoleTrees (by address and by size); memory is O(holes), not O(slots).
//
// Owns its holes; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "allocator/contiguous/hole_tree.h"
#include "allocator/contiguous/placement.h"

namespace pagesim::alloc {

class FitPlacement final : public Placement {
 public:
  enum class Rule { kFirstFit, kBestFit };

  // REQUIRES (else AllocatorError): capacity_slots >= 1.
  FitPlacement(std::int64_t capacity_slots, Rule rule);

  std::string name() const override;
  std::int64_t capacity_slots() const override { return capacity_slots_; }
  std::int64_t free_slots() const override { return by_address_.total_length(); }
  std::int64_t range_slots(std::int64_t slots) const override { return slots; }
  std::int64_t max_range_slots() const override { return capacity_slots_; }
  bool can_place(std::int64_t range_slots) const override;
  std::optional<std::int64_t> place(std::int64_t range_slots) override;
  void release(SlotRange range) override;
  std::int64_t unusable_free(std::int64_t range_slots) const override;
  std::vector<SlotRange> free_holes() const override;
  void check_range_shape(SlotRange range) const override;
  void validate() const override;

  Rule rule() const { return rule_; }
  std::int64_t num_holes() const { return by_address_.size(); }

 private:
  void add_hole(Hole hole);
  void remove_hole(Hole hole);
  void check_expensive() const;

  Rule rule_;
  std::int64_t capacity_slots_;
  // INVARIANT: holes lie inside [0, capacity_slots_), are non-empty, disjoint and never
  //            adjacent (a freed range always merges with its neighbours).
  // INVARIANT: free slots + slots of held ranges = capacity_slots_.
  HoleTree by_address_;
  HoleTree by_size_;  // INVARIANT: exactly the holes of by_address_
};

}  // namespace pagesim::alloc
