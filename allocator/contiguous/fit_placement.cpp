#include "allocator/contiguous/fit_placement.h"

#include <cassert>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

namespace {

[[noreturn]] void violation(const std::string& what) {
  throw InvariantViolation("FitPlacement: " + what);
}

std::string describe(std::int64_t start, std::int64_t end) {
  // Appended piece by piece: `"[" + std::to_string(...)` trips GCC 12's -Wrestrict.
  std::string out = "[";
  out += std::to_string(start);
  out += ", ";
  out += std::to_string(end);
  out += ")";
  return out;
}

}  // namespace

FitPlacement::FitPlacement(std::int64_t capacity_slots, Rule rule)
    : rule_(rule),
      capacity_slots_(capacity_slots),
      by_address_(HoleOrder::kByAddress),
      by_size_(HoleOrder::kBySize) {
  if (capacity_slots < 1) {
    throw AllocatorError("fit placement: capacity_slots must be >= 1, got " +
                         std::to_string(capacity_slots));
  }
  add_hole({0, capacity_slots});
}

std::string FitPlacement::name() const {
  return std::string(to_string(rule_ == Rule::kFirstFit ? PlacementKind::kFirstFit : PlacementKind::kBestFit));
}

void FitPlacement::add_hole(Hole hole) {
  by_address_.insert(hole);
  by_size_.insert(hole);
}

void FitPlacement::remove_hole(Hole hole) {
  by_address_.erase(hole);
  by_size_.erase(hole);
}

bool FitPlacement::can_place(std::int64_t range_slots) const {
  assert(range_slots >= 1);
  return by_address_.max_length() >= range_slots;
}

std::optional<std::int64_t> FitPlacement::place(std::int64_t range_slots) {
  assert(range_slots >= 1);
  const std::optional<Hole> hole = rule_ == Rule::kFirstFit
                                       ? by_address_.first_with_length_at_least(range_slots)
                                       : by_size_.first_with_length_at_least(range_slots);
  if (!hole) return std::nullopt;
  remove_hole(*hole);
  if (hole->length > range_slots) add_hole({hole->start + range_slots, hole->length - range_slots});
  check_expensive();
  return hole->start;
}

void FitPlacement::release(SlotRange range) {
  assert(range.slots >= 1 && range.offset >= 0 && range.end() <= capacity_slots_);
  Hole merged{range.offset, range.slots};
  const std::optional<Hole> left = by_address_.last_before({range.offset, 0});
  const std::optional<Hole> right = by_address_.first_not_before({range.offset, 0});
  assert(!left || left->end() <= range.offset);   // released range overlaps a hole:
  assert(!right || range.end() <= right->start);  // it was not held
  if (left && left->end() == range.offset) {
    remove_hole(*left);
    merged = {left->start, left->length + merged.length};
  }
  if (right && right->start == range.end()) {
    remove_hole(*right);
    merged.length += right->length;
  }
  add_hole(merged);
  check_expensive();
}

std::int64_t FitPlacement::unusable_free(std::int64_t range_slots) const {
  // By size, {kMinStart, n} orders after exactly the holes shorter than n.
  return by_size_.length_before({HoleTree::kMinStart, range_slots});
}

std::vector<SlotRange> FitPlacement::free_holes() const {
  std::vector<SlotRange> out;
  out.reserve(static_cast<std::size_t>(by_address_.size()));
  for (const Hole& h : by_address_.holes()) out.push_back({h.start, h.length});
  return out;
}

void FitPlacement::check_range_shape(SlotRange range) const {
  if (range.offset < 0 || range.slots < 1 || range.offset > capacity_slots_ - range.slots) {
    violation("range " + describe(range.offset, range.end()) + " lies outside the pool of " +
              std::to_string(capacity_slots_) + " slots");
  }
}

void FitPlacement::validate() const {
  by_address_.validate();
  by_size_.validate();
  if (by_address_.size() != by_size_.size()) {
    violation("by-address tree holds " + std::to_string(by_address_.size()) +
              " holes, by-size tree " + std::to_string(by_size_.size()));
  }
  const std::vector<Hole> holes = by_address_.holes();
  std::int64_t prev_end = -1;
  for (const Hole& h : holes) {
    const auto where = [&] { return "hole " + describe(h.start, h.end()); };
    if (h.start < 0 || h.length < 1 || h.start > capacity_slots_ - h.length) {
      violation(where() + " lies outside the pool of " + std::to_string(capacity_slots_) +
                " slots");
    }
    if (h.start < prev_end) violation(where() + " overlaps the hole before it");
    if (h.start == prev_end) violation(where() + " touches the hole before it but is not merged");
    if (!by_size_.contains(h)) violation(where() + " is missing from the by-size tree");
    prev_end = h.end();
  }
  if (by_size_.total_length() != by_address_.total_length()) {
    violation("the two hole trees disagree on the free slot count");
  }
}

void FitPlacement::check_expensive() const {
#ifdef PAGESIM_EXPENSIVE_CHECKS
  validate();
#endif
}

}  // namespace pagesim::alloc
