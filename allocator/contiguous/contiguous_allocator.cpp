#include "allocator/contiguous/contiguous_allocator.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <utility>
#include <vector>

#include "allocator/contiguous/buddy_placement.h"
#include "allocator/contiguous/fit_placement.h"

namespace pagesim::alloc {

namespace {

[[noreturn]] void bad_setting(const std::string& field, const std::string& expected,
                              std::int64_t got) {
  throw AllocatorError("contiguous allocator: setting " + field + " must be " + expected +
                       ", got " + std::to_string(got));
}

std::unique_ptr<Placement> make_placement(const ContiguousSettings& s) {
  if (s.capacity_slots < 1) bad_setting("capacity_slots", ">= 1", s.capacity_slots);
  if (s.max_seq_len < 1) bad_setting("max_seq_len", ">= 1", s.max_seq_len);
  switch (s.placement) {
    case PlacementKind::kBuddy: {
      const auto is_pow2 = [](std::int64_t v) {
        return v > 0 && std::has_single_bit(static_cast<std::uint64_t>(v));
      };
      if (!is_pow2(s.block_size)) {
        bad_setting("block_size", "a power of two for buddy placement", s.block_size);
      }
      if (!is_pow2(s.max_chunk_blocks)) {
        bad_setting("max_chunk_blocks", "a power of two", s.max_chunk_blocks);
      }
      if (s.capacity_slots % s.block_size != 0) {
        bad_setting(
            "capacity_slots",
            "a multiple of block_size (" + std::to_string(s.block_size) + ") for buddy placement",
            s.capacity_slots);
      }
      return std::make_unique<BuddyPlacement>(s.capacity_slots, s.block_size, s.max_chunk_blocks);
    }
    case PlacementKind::kFirstFit:
      return std::make_unique<FitPlacement>(s.capacity_slots, FitPlacement::Rule::kFirstFit);
    case PlacementKind::kBestFit:
      return std::make_unique<FitPlacement>(s.capacity_slots, FitPlacement::Rule::kBestFit);
  }
  throw AllocatorError("contiguous allocator: setting placement has an unknown value " +
                       std::to_string(static_cast<int>(s.placement)));
}

[[noreturn]] void violation(const std::string& what) {
  throw InvariantViolation("ContiguousAllocator: " + what);
}

}  // namespace

ContiguousAllocator::ContiguousAllocator(const ContiguousSettings& settings)
    : settings_(settings), placement_(make_placement(settings)) {}

ContiguousAllocator::~ContiguousAllocator() = default;

std::string ContiguousAllocator::name() const {
  return "contiguous(" + std::string(to_string(settings_.placement)) + "," +
         settings_.reservation.to_string() + ")";
}

// --- accounting -----------------------------------------------------------------------------

MemoryBreakdown ContiguousAllocator::classify(const Sequence& s) {
  return classify_allocation(s.tokens, std::max(s.final_tokens, s.tokens), s.reservation,
                             s.range.slots);
}

void ContiguousAllocator::add_to_totals(const Sequence& s) { used_ += classify(s); }

void ContiguousAllocator::remove_from_totals(const Sequence& s) { used_ -= classify(s); }

MemoryBreakdown ContiguousAllocator::breakdown() const {
  MemoryBreakdown b = used_;
  b.free = capacity_slots() - used_.allocated();
  assert(b.free == placement_->free_slots());
  return b;
}

// --- argument checks ------------------------------------------------------------------------

// Its messages name the operation, not the allocator.
std::string ContiguousAllocator::misuse_prefix(std::string_view op) const { return std::string(op); }

const ContiguousAllocator::Sequence& ContiguousAllocator::live(SeqId seq, const char* op) const {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    throw AllocatorError(std::string(op) + ": " + seq_name(seq) +
                         " is not live (never admitted, or already freed)");
  }
  return it->second;
}

ContiguousAllocator::Sequence& ContiguousAllocator::live(SeqId seq, const char* op) {
  return const_cast<Sequence&>(std::as_const(*this).live(seq, op));
}

void ContiguousAllocator::check_not_live(SeqId seq, const char* op) const {
  if (sequences_.contains(seq)) {
    throw AllocatorError(std::string(op) + ": " + seq_name(seq) + " is already live");
  }
}

// --- sizing ---------------------------------------------------------------------------------

std::int64_t ContiguousAllocator::reservation_of(const AdmitRequest& req) const {
  return settings_.reservation.reservation_slots(req, settings_.max_seq_len);
}

bool ContiguousAllocator::ever_fits(const AdmitRequest& req) const {
  if (req.tokens_at_admission() > settings_.max_seq_len) return false;
  return placement_->range_slots(reservation_of(req)) <= placement_->max_range_slots();
}

std::int64_t ContiguousAllocator::reservation_slots(const AdmitRequest& req) const {
  check_request(req, "reservation_slots");
  return reservation_of(req);
}

std::int64_t ContiguousAllocator::range_slots(const AdmitRequest& req) const {
  check_request(req, "range_slots");
  return placement_->range_slots(reservation_of(req));
}

bool ContiguousAllocator::do_can_ever_admit(const AdmitRequest& req) const {
  return ever_fits(req);
}

std::string ContiguousAllocator::do_limiting_setting(const AdmitRequest& req) const {
  if (req.tokens_at_admission() > settings_.max_seq_len) return "max_seq_len";
  // A `max` reservation is max_seq_len slots for every request: when that alone exceeds the
  // pool, max_seq_len is what to lower, whatever the placement's largest range.
  if (settings_.reservation.kind() == ReservationPolicy::Kind::kMax &&
      placement_->range_slots(reservation_of(req)) > placement_->capacity_slots())
    return "max_seq_len";
  if (placement_->max_range_slots() < placement_->capacity_slots()) return "max_chunk_blocks";
  return "capacity_slots";
}

// --- operations -----------------------------------------------------------------------------

bool ContiguousAllocator::do_can_admit(const AdmitRequest& req) const {
  return ever_fits(req) && placement_->can_place(placement_->range_slots(reservation_of(req)));
}

AdmitResult ContiguousAllocator::do_admit(const AdmitRequest& req) {
  if (!ever_fits(req)) return {};
  Sequence s;
  s.reservation = reservation_of(req);
  s.range.slots = placement_->range_slots(s.reservation);
  const std::optional<std::int64_t> offset = placement_->place(s.range.slots);
  if (!offset) return {};
  s.range.offset = *offset;
  s.tokens = req.held_tokens(0);
  s.final_tokens = req.final_tokens();
  assert(1 <= s.tokens && s.tokens <= s.reservation && s.reservation <= s.range.slots);
  try {
    sequences_.emplace(req.seq, s);
  } catch (...) {
    placement_->release(s.range);  // keep "on failure nothing changes" even on bad_alloc
    throw;
  }
  add_to_totals(s);
  check_expensive();
  return {.admitted = true, .cached_tokens = 0, .held_tokens = s.tokens};
}

bool ContiguousAllocator::can_append(SeqId seq, std::int64_t n) const {
  if (n < 0) {
    throw AllocatorError("can_append: " + seq_name(seq) + ": n must be >= 0, got " +
                         std::to_string(n));
  }
  const Sequence& s = live(seq, "can_append");
  return n <= s.range.slots - s.tokens;
}

bool ContiguousAllocator::append(SeqId seq, std::int64_t n) {
  if (n < 0) {
    throw AllocatorError("append: " + seq_name(seq) + ": n must be >= 0, got " + std::to_string(n));
  }
  Sequence& s = live(seq, "append");
  if (n > s.range.slots - s.tokens) return false;  // the range never grows
  remove_from_totals(s);
  s.tokens += n;
  add_to_totals(s);
  check_expensive();
  return true;
}

bool ContiguousAllocator::fork(SeqId parent, SeqId child) {
  const Sequence source = live(parent, "fork");  // a copy: emplace below may rehash
  check_not_live(child, "fork");
  const std::optional<std::int64_t> offset = placement_->place(source.range.slots);
  if (!offset) return false;
  Sequence copy = source;
  copy.range.offset = *offset;
  try {
    sequences_.emplace(child, copy);
  } catch (...) {
    placement_->release(copy.range);
    throw;
  }
  add_to_totals(copy);
  check_expensive();
  return true;
}

void ContiguousAllocator::free(SeqId seq) {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    throw AllocatorError("free: " + seq_name(seq) +
                         " is not live (double free, or never admitted)");
  }
  remove_from_totals(it->second);
  placement_->release(it->second.range);
  sequences_.erase(it);
  check_expensive();
}

std::int64_t ContiguousAllocator::sequence_tokens(SeqId seq) const {
  return live(seq, "sequence_tokens").tokens;
}

SlotRange ContiguousAllocator::range_of(SeqId seq) const { return live(seq, "range_of").range; }

std::int64_t ContiguousAllocator::do_max_group_slots(const AdmitRequest& req, std::int32_t width) const {
  AdmitRequest fresh = req;
  fresh.generated_tokens = 0;
  return width * placement_->range_slots(reservation_of(fresh));
}

std::int32_t ContiguousAllocator::block_size() const {
  return settings_.placement == PlacementKind::kBuddy ? static_cast<std::int32_t>(settings_.block_size) : 1;
}

bool ContiguousAllocator::can_append_all(std::span<const SeqHandle> group, std::int64_t n) const {
  return std::all_of(group.begin(), group.end(), [&](const SeqHandle& s) { return can_append(s.id, n); });
}

std::vector<BlockId> ContiguousAllocator::block_table(SeqId seq) const {
  const Sequence& s = live(seq, "block_table");
  const std::int64_t bs = block_size();
  const std::int64_t first = s.range.offset / bs;
  const std::int64_t blocks = (s.tokens + bs - 1) / bs;
  std::vector<BlockId> ids(static_cast<std::size_t>(blocks));
  for (std::int64_t i = 0; i < blocks; ++i) ids[static_cast<std::size_t>(i)] = static_cast<BlockId>(first + i);
  return ids;
}

std::int64_t ContiguousAllocator::do_unusable_free(const AdmitRequest& head) const {
  if (!ever_fits(head)) return placement_->free_slots();
  return placement_->unusable_free(placement_->range_slots(reservation_of(head)));
}

// --- validation -----------------------------------------------------------------------------

void ContiguousAllocator::validate() const {
  placement_->validate();
  validate_own();
}

void ContiguousAllocator::validate_own() const {
  const std::int64_t capacity = capacity_slots();

  MemoryBreakdown recomputed;
  std::int64_t held = 0;
  struct Piece {
    SlotRange range;
    bool is_hole;
    SeqId seq;  // holder of the range; unused for a hole
  };
  std::vector<Piece> held_ranges;
  held_ranges.reserve(sequences_.size());
  for (const auto& [seq, s] : sequences_) {
    placement_->check_range_shape(s.range);
    // Copies seq: Clang before 16 cannot capture a structured binding (C++20 P1091).
    const auto who = [id = seq] { return seq_name(id); };  // built only on failure
    if (s.tokens < 1 || s.tokens > s.range.slots) {
      violation("1 <= tokens <= range: " + who() + " holds " + std::to_string(s.tokens) +
                " tokens in a range of " + std::to_string(s.range.slots) + " slots");
    }
    if (s.reservation < 1 || s.reservation > s.range.slots) {
      violation("1 <= reservation <= range: " + who() + " reserved " +
                std::to_string(s.reservation) + " slots in a range of " +
                std::to_string(s.range.slots));
    }
    recomputed += classify(s);
    held += s.range.slots;
    held_ranges.push_back({s.range, false, seq});
  }
  const std::int64_t free = placement_->free_slots();
  if (free + held != capacity) {
    violation("free + allocated = capacity: " + std::to_string(free) + " + " +
              std::to_string(held) + " != " + std::to_string(capacity));
  }
  if (recomputed != used_) {
    violation("running breakdown totals = recomputation: token_states " +
              std::to_string(used_.token_states) + " vs " +
              std::to_string(recomputed.token_states) + ", reserved " +
              std::to_string(used_.reserved) + " vs " + std::to_string(recomputed.reserved) +
              ", over_reserved " + std::to_string(used_.over_reserved) + " vs " +
              std::to_string(recomputed.over_reserved) + ", rounding " +
              std::to_string(used_.rounding) + " vs " + std::to_string(recomputed.rounding));
  }
  if (breakdown().total() != capacity) {
    violation("breakdown classes sum to capacity: " + std::to_string(breakdown().total()) +
              " != " + std::to_string(capacity));
  }

  // Ranges and holes each lie inside the pool and their sizes sum to capacity, so if none
  // overlaps the next in address order, together they tile the pool exactly. Holes come
  // sorted; merge them with the sorted ranges.
  std::sort(held_ranges.begin(), held_ranges.end(),
            [](const Piece& a, const Piece& b) { return a.range.offset < b.range.offset; });
  const std::vector<SlotRange> holes = placement_->free_holes();
  const auto label = [](const Piece& p) {
    return (p.is_hole ? std::string("a free hole") : "the range of " + seq_name(p.seq)) + " [" +
           std::to_string(p.range.offset) + ", " + std::to_string(p.range.end()) + ")";
  };
  std::size_t next_range = 0;
  std::size_t next_hole = 0;
  Piece previous{{0, 0}, true, 0};
  while (next_range < held_ranges.size() || next_hole < holes.size()) {
    const bool take_hole = next_range == held_ranges.size() ||
                           (next_hole < holes.size() &&
                            holes[next_hole].offset < held_ranges[next_range].range.offset);
    const Piece current =
        take_hole ? Piece{holes[next_hole++], true, 0} : held_ranges[next_range++];
    if (previous.range.end() > current.range.offset) {
      violation("no range overlaps another range or a hole: " + label(previous) + " overlaps " +
                label(current));
    }
    previous = current;
  }
}

void ContiguousAllocator::check_expensive() const {
#ifdef PAGESIM_EXPENSIVE_CHECKS
  validate_own();  // the placement checks itself inside place() and release()
#endif
}

}  // namespace pagesim::alloc
