// HoleTree: an ordered set of free holes, augmented so that fit queries take O(log n).
//
// A hole is a run of free slots [start, start + length). The tree orders holes either by
// address (start) or by size (length, then start), and every subtree knows its largest hole
// and its total length. That answers, in expected O(log n):
//   first_with_length_at_least(n)  by address: first fit;  by size: best fit
//   length_before(key)             by size: slots in holes shorter than n (unusable free)
//   last_before / first_not_before by address: the neighbours a freed range merges with
// It is a treap whose priorities come from a counter hashed by splitmix64, so its shape,
// and everything above, is deterministic. Nodes live in one vector reused through a free
// list: no allocation per operation once the tree has reached its peak size.
//
// The tree does not check that holes are disjoint; FitPlacement keeps them so. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace pagesim::alloc {

struct Hole {
  std::int64_t start = 0;
  std::int64_t length = 0;

  std::int64_t end() const { return start + length; }
  friend bool operator==(const Hole&, const Hole&) = default;
};

enum class HoleOrder { kByAddress, kBySize };

class HoleTree {
 public:
  explicit HoleTree(HoleOrder order) : order_(order) {}

  HoleOrder order() const { return order_; }
  std::int64_t size() const { return size_; }
  bool empty() const { return root_ == kNil; }
  // Sum of all hole lengths, and the longest hole (0 when empty). O(1).
  std::int64_t total_length() const;
  std::int64_t max_length() const;

  // REQUIRES: no hole with the same key (by address: same start) is present; length >= 1.
  void insert(Hole hole);
  // REQUIRES: `hole` is present (same start and length).
  void erase(Hole hole);
  // True if this exact hole is present.
  bool contains(Hole hole) const;

  // The first hole in tree order whose length is >= `length`, or nullopt.
  std::optional<Hole> first_with_length_at_least(std::int64_t length) const;
  // The last hole ordered before `key` / the first hole not ordered before `key`.
  std::optional<Hole> last_before(Hole key) const;
  std::optional<Hole> first_not_before(Hole key) const;
  // Sum of the lengths of the holes ordered before `key`. By size, with
  // key = {kMinStart, n}: the slots in holes shorter than n.
  std::int64_t length_before(Hole key) const;

  // Every hole in tree order. O(n).
  std::vector<Hole> holes() const;
  // Checks order, heap priorities, subtree augmentation and node accounting by a full scan;
  // throws InvariantViolation.
  void validate() const;

  static constexpr std::int64_t kMinStart = std::numeric_limits<std::int64_t>::min();

 private:
  using Index = std::int32_t;
  static constexpr Index kNil = -1;

  struct Node {
    Hole hole;
    std::uint64_t priority = 0;     // INVARIANT: >= the priorities of both children
    Index left = kNil;              // INVARIANT: every hole below `left` orders before `hole`
    Index right = kNil;             // INVARIANT: every hole below `right` orders after `hole`
    std::int64_t max_length = 0;    // INVARIANT: longest hole in this subtree
    std::int64_t total_length = 0;  // INVARIANT: sum of lengths in this subtree
  };

  bool before(const Hole& a, const Hole& b) const;
  std::int64_t max_of(Index t) const { return t == kNil ? 0 : nodes_[t].max_length; }
  std::int64_t total_of(Index t) const { return t == kNil ? 0 : nodes_[t].total_length; }
  void update(Index t);
  Index new_node(Hole hole);
  // Splits t into holes ordered before `key` and the rest.
  void split(Index t, const Hole& key, Index& left, Index& right);
  Index insert_at(Index t, Index node);
  Index erase_at(Index t, const Hole& hole);
  Index merge(Index left, Index right);

  HoleOrder order_;
  std::vector<Node> nodes_;        // node storage; INVARIANT: size = size_ + |free_nodes_|
  std::vector<Index> free_nodes_;  // reusable slots of nodes_
  Index root_ = kNil;
  std::int64_t size_ = 0;            // holes in the tree
  std::uint64_t next_priority_ = 0;  // counter hashed into each new node's priority
};

}  // namespace pagesim::alloc
