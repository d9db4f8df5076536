#include "allocator/contiguous/hole_tree.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

namespace {

// A well-mixed 64-bit value from a counter (Steele, Lea, Flood: SplitMix64).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string describe(const Hole& h) {
  return "hole [" + std::to_string(h.start) + ", " + std::to_string(h.start + h.length) + ")";
}

}  // namespace

std::int64_t HoleTree::total_length() const { return total_of(root_); }
std::int64_t HoleTree::max_length() const { return max_of(root_); }

bool HoleTree::before(const Hole& a, const Hole& b) const {
  if (order_ == HoleOrder::kByAddress) return a.start < b.start;
  return a.length != b.length ? a.length < b.length : a.start < b.start;
}

void HoleTree::update(Index t) {
  Node& n = nodes_[static_cast<std::size_t>(t)];
  n.max_length = std::max({n.hole.length, max_of(n.left), max_of(n.right)});
  n.total_length = n.hole.length + total_of(n.left) + total_of(n.right);
}

HoleTree::Index HoleTree::new_node(Hole hole) {
  Index t;
  if (!free_nodes_.empty()) {
    t = free_nodes_.back();
    free_nodes_.pop_back();
  } else {
    assert(nodes_.size() < static_cast<std::size_t>(std::numeric_limits<Index>::max()));
    t = static_cast<Index>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[static_cast<std::size_t>(t)];
  n = Node{};
  n.hole = hole;
  n.priority = splitmix64(next_priority_++);
  update(t);
  return t;
}

void HoleTree::split(Index t, const Hole& key, Index& left, Index& right) {
  if (t == kNil) {
    left = right = kNil;
    return;
  }
  Node& n = nodes_[static_cast<std::size_t>(t)];
  if (before(n.hole, key)) {
    Index rest_left = kNil;
    split(n.right, key, rest_left, right);
    n.right = rest_left;
    left = t;
  } else {
    Index rest_right = kNil;
    split(n.left, key, left, rest_right);
    n.left = rest_right;
    right = t;
  }
  update(t);
}

HoleTree::Index HoleTree::merge(Index left, Index right) {
  if (left == kNil) return right;
  if (right == kNil) return left;
  Node& l = nodes_[static_cast<std::size_t>(left)];
  Node& r = nodes_[static_cast<std::size_t>(right)];
  if (l.priority > r.priority) {
    l.right = merge(l.right, right);
    update(left);
    return left;
  }
  r.left = merge(left, r.left);
  update(right);
  return right;
}

HoleTree::Index HoleTree::insert_at(Index t, Index node) {
  if (t == kNil) return node;
  Node& n = nodes_[static_cast<std::size_t>(t)];
  Node& x = nodes_[static_cast<std::size_t>(node)];
  if (x.priority > n.priority) {
    Index left = kNil;
    Index right = kNil;
    split(t, x.hole, left, right);
    x.left = left;
    x.right = right;
    update(node);
    return node;
  }
  if (before(x.hole, n.hole)) {
    n.left = insert_at(n.left, node);
  } else {
    n.right = insert_at(n.right, node);
  }
  update(t);
  return t;
}

void HoleTree::insert(Hole hole) {
  assert(hole.length >= 1);
  assert(!first_not_before(hole) || before(hole, *first_not_before(hole)));  // unique key
  const Index node = new_node(hole);
  root_ = insert_at(root_, node);
  ++size_;
}

HoleTree::Index HoleTree::erase_at(Index t, const Hole& hole) {
  if (t == kNil) return kNil;  // absent: the caller's contract is broken (asserted in erase)
  Node& n = nodes_[static_cast<std::size_t>(t)];
  if (n.hole == hole) {
    const Index merged = merge(n.left, n.right);
    free_nodes_.push_back(t);
    --size_;
    return merged;
  }
  if (before(hole, n.hole)) {
    n.left = erase_at(n.left, hole);
  } else {
    n.right = erase_at(n.right, hole);
  }
  update(t);
  return t;
}

void HoleTree::erase(Hole hole) {
  assert(contains(hole));
  root_ = erase_at(root_, hole);
}

bool HoleTree::contains(Hole hole) const {
  const std::optional<Hole> found = first_not_before(hole);
  return found && *found == hole;
}

std::optional<Hole> HoleTree::first_with_length_at_least(std::int64_t length) const {
  if (max_of(root_) < length) return std::nullopt;
  Index t = root_;
  // Each step goes to the leftmost subtree that still holds a long-enough hole.
  while (t != kNil) {
    const Node& n = nodes_[static_cast<std::size_t>(t)];
    if (max_of(n.left) >= length) {
      t = n.left;
    } else if (n.hole.length >= length) {
      return n.hole;
    } else {
      t = n.right;
    }
  }
  assert(false && "max_length promised a long-enough hole");
  return std::nullopt;
}

std::optional<Hole> HoleTree::last_before(Hole key) const {
  std::optional<Hole> best;
  for (Index t = root_; t != kNil;) {
    const Node& n = nodes_[static_cast<std::size_t>(t)];
    if (before(n.hole, key)) {
      best = n.hole;
      t = n.right;
    } else {
      t = n.left;
    }
  }
  return best;
}

std::optional<Hole> HoleTree::first_not_before(Hole key) const {
  std::optional<Hole> best;
  for (Index t = root_; t != kNil;) {
    const Node& n = nodes_[static_cast<std::size_t>(t)];
    if (!before(n.hole, key)) {
      best = n.hole;
      t = n.left;
    } else {
      t = n.right;
    }
  }
  return best;
}

std::int64_t HoleTree::length_before(Hole key) const {
  std::int64_t sum = 0;
  for (Index t = root_; t != kNil;) {
    const Node& n = nodes_[static_cast<std::size_t>(t)];
    if (before(n.hole, key)) {
      sum += total_of(n.left) + n.hole.length;
      t = n.right;
    } else {
      t = n.left;
    }
  }
  return sum;
}

std::vector<Hole> HoleTree::holes() const {
  std::vector<Hole> out;
  out.reserve(static_cast<std::size_t>(size_));
  std::vector<Index> stack;
  stack.reserve(64);  // a treap of n nodes is about 2.5 log2(n) deep
  Index t = root_;
  while (t != kNil || !stack.empty()) {
    while (t != kNil) {
      stack.push_back(t);
      t = nodes_[static_cast<std::size_t>(t)].left;
    }
    t = stack.back();
    stack.pop_back();
    out.push_back(nodes_[static_cast<std::size_t>(t)].hole);
    t = nodes_[static_cast<std::size_t>(t)].right;
  }
  return out;
}

void HoleTree::validate() const {
  const std::string tree =
      order_ == HoleOrder::kByAddress ? "HoleTree(by address): " : "HoleTree(by size): ";
  auto fail = [&](const std::string& what) { throw InvariantViolation(tree + what); };

  if (nodes_.size() != static_cast<std::size_t>(size_) + free_nodes_.size()) {
    fail("node storage (" + std::to_string(nodes_.size()) + ") != holes (" + std::to_string(size_) +
         ") + free nodes (" + std::to_string(free_nodes_.size()) + ")");
  }
  // One in-order walk checks key order, heap order and the augmentation of every node.
  std::int64_t reached = 0;
  const Node* previous = nullptr;
  std::vector<Index> stack;
  stack.reserve(64);
  Index t = root_;
  while (t != kNil || !stack.empty()) {
    while (t != kNil) {
      if (t < 0 || static_cast<std::size_t>(t) >= nodes_.size() || std::ssize(stack) >= size_) {
        fail("tree links leave the node storage or form a cycle");
      }
      stack.push_back(t);
      t = nodes_[static_cast<std::size_t>(t)].left;
    }
    t = stack.back();
    stack.pop_back();
    if (++reached > size_) fail("tree holds more than the " + std::to_string(size_) + " holes");
    const Node& n = nodes_[static_cast<std::size_t>(t)];
    if (n.hole.length < 1) fail(describe(n.hole) + " is empty");
    if (previous != nullptr && !before(previous->hole, n.hole)) {
      fail(describe(previous->hole) + " is not ordered before " + describe(n.hole));
    }
    for (Index child : {n.left, n.right}) {
      if (child != kNil && nodes_[static_cast<std::size_t>(child)].priority > n.priority) {
        fail(describe(n.hole) + " has a child of higher priority");
      }
    }
    if (n.max_length != std::max({n.hole.length, max_of(n.left), max_of(n.right)}) ||
        n.total_length != n.hole.length + total_of(n.left) + total_of(n.right)) {
      fail(describe(n.hole) + " has stale subtree max/total length");
    }
    previous = &n;
    t = n.right;
  }
  if (reached != size_) {
    fail("tree holds " + std::to_string(reached) + " holes, size says " + std::to_string(size_));
  }
}

}  // namespace pagesim::alloc
