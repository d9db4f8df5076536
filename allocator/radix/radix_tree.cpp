#include "allocator/radix/radix_tree.h"

#include <cassert>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {

RadixTree::RadixTree(std::int64_t num_pages) : pages_(static_cast<std::size_t>(num_pages)) {
  free_list_.reserve(pages_.size());
  // Pop from the back: the lowest ids go out first at start-up.
  for (std::int64_t p = num_pages - 1; p >= 0; --p) free_list_.push_back(static_cast<BlockId>(p));
}

BlockId RadixTree::find(BlockHash key) const {
  auto it = nodes_.find(key);
  return it == nodes_.end() ? kNoBlock : it->second;
}

BlockId RadixTree::child(BlockId parent, BlockHash key) const {
  const BlockId p = find(key);
  return p != kNoBlock && at(p).parent == parent ? p : kNoBlock;
}

std::int64_t RadixTree::match(std::span<const BlockHash> keys, std::uint64_t inserted_by) const {
  // Largest n with keys[n - 1] in the tree by `inserted_by` (n = 0 always qualifies).
  std::size_t lo = 0, hi = keys.size();
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo + 1) / 2;
    const BlockId p = find(keys[mid - 1]);
    if (p != kNoBlock && at(p).inserted_at <= inserted_by) lo = mid;
    else hi = mid - 1;
  }
  return static_cast<std::int64_t>(lo);
}

std::int64_t RadixTree::unreferenced_in_path(std::span<const BlockHash> keys, std::int64_t n) const {
  BlockId node = kRoot;
  std::int64_t unref = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    node = child(node, keys[static_cast<std::size_t>(i)]);
    assert(node != kNoBlock && "REQUIRES: n <= match(keys)");
    unref += at(node).ref == 0;
  }
  return unref;
}

BlockId RadixTree::take() {
  assert(num_available() > 0);
  BlockId p;
  if (!free_list_.empty()) {
    p = free_list_.back();
    free_list_.pop_back();
  } else {
    p = evict_one();
  }
  Page& pg = at(p);
  pg = Page{};
  pg.on_free_list = false;
  pg.ref = 1;
  pg.last_access = clock_;
  return p;
}

BlockId RadixTree::evict_one() {
  // Only unreferenced subtrees hold unreferenced nodes, and every such subtree has a leaf.
  assert(!lru_leaves_.empty());
  const BlockId leaf = lru_leaves_.begin()->second;
  lru_leaves_.erase(lru_leaves_.begin());
  BlockId p = leaf;
  for (;;) {
    const bool start = at(p).run_start;
    const BlockId up = at(p).parent;
    remove_leaf(p);
    if (p != leaf) {
      at(p) = Page{};
      free_list_.push_back(p);
    }
    // The run goes on up while its pages are evictable leaves (a page some table holds
    // ends it: a match split the run there in SGLang).
    if (start || up == kRoot || !is_evictable_leaf(at(up))) break;
    lru_leaves_.erase({at(up).last_access, up});
    p = up;
  }
  return leaf;
}

void RadixTree::remove_leaf(BlockId p) {
  Page& pg = at(p);
  nodes_.erase(pg.key);
  pg.in_tree = false;
  --tree_pages_;
  --unreferenced_;
  ++evictions_;
  if (pg.parent != kRoot) {
    Page& up = at(pg.parent);
    --up.children;
    if (up.run_next == p) up.run_next = kNoBlock;
    if (is_evictable_leaf(up)) lru_leaves_.insert({up.last_access, pg.parent});
  }
}

void RadixTree::insert(BlockId p, BlockId parent, BlockHash key) {
  Page& pg = at(p);
  assert(!pg.in_tree && pg.ref == 1 && find(key) == kNoBlock);
  pg.in_tree = true;
  pg.key = key;
  pg.parent = parent;
  pg.last_access = clock_;
  pg.inserted_at = clock_;
  nodes_.emplace(key, p);
  ++tree_pages_;
  pg.run_start = true;
  if (parent != kRoot) {
    Page& up = at(parent);
    assert(up.in_tree && up.ref > 0 && "a table holds the path to what it inserts");
    // The same insert (same clock) under the end of its run continues the run; a sibling
    // splits the parent's run (RadixCache._insert_helper / _split_node).
    if (up.children == 0 && up.inserted_at == clock_) {
      pg.run_start = false;
      up.run_next = p;
    } else {
      split_after(parent);
    }
    ++up.children;  // a referenced parent is never an evictable leaf: nothing to update
  }
}

void RadixTree::split_after(BlockId p) {
  Page& pg = at(p);
  if (pg.run_next == kNoBlock) return;
  at(pg.run_next).run_start = true;
  pg.run_next = kNoBlock;
}

void RadixTree::lock(BlockId p) {
  Page& pg = at(p);
  assert(pg.in_tree);
  if (pg.ref == 0) {
    --unreferenced_;
    if (pg.children == 0) lru_leaves_.erase({pg.last_access, p});
  }
  ++pg.ref;
}

void RadixTree::release(BlockId p) {
  Page& pg = at(p);
  assert(pg.ref > 0);
  if (!pg.in_tree) {
    assert(pg.ref == 1 && "a private page has one owner");
    pg = Page{};
    free_list_.push_back(p);
    return;
  }
  if (--pg.ref == 0) {
    ++unreferenced_;
    if (pg.children == 0) lru_leaves_.insert({pg.last_access, p});
  }
}

void RadixTree::touch(BlockId p) {
  Page& pg = at(p);
  if (pg.last_access == clock_) return;
  if (is_evictable_leaf(pg)) {
    lru_leaves_.erase({pg.last_access, p});
    lru_leaves_.insert({clock_, p});
  }
  pg.last_access = clock_;
}

void RadixTree::validate(std::span<const std::vector<BlockId>* const> tables) const {
  auto broken = [](const std::string& what) { throw InvariantViolation("radix tree: " + what); };
  std::vector<std::int32_t> refs(pages_.size(), 0);
  for (const std::vector<BlockId>* t : tables)
    for (BlockId p : *t) {
      if (p < 0 || p >= num_pages()) broken("table holds page " + std::to_string(p) + " outside the pool");
      ++refs[static_cast<std::size_t>(p)];
    }
  std::vector<std::int32_t> children(pages_.size(), 0);
  std::int64_t free = 0, tree = 0, unref = 0, leaves = 0;
  for (BlockId p = 0; p < num_pages(); ++p) {
    const Page& pg = at(p);
    const std::string name = "page " + std::to_string(p);
    if (pg.ref != refs[static_cast<std::size_t>(p)])
      broken(name + " has ref " + std::to_string(pg.ref) + " but " + std::to_string(refs[static_cast<std::size_t>(p)]) +
             " tables hold it");
    if (pg.on_free_list) {
      ++free;
      if (pg.ref != 0 || pg.in_tree) broken(name + " is on the free list but referenced or in the tree");
      continue;
    }
    if (!pg.in_tree) {
      if (pg.ref != 1) broken(name + " is private with ref " + std::to_string(pg.ref) + ", expected 1");
      continue;
    }
    ++tree;
    unref += pg.ref == 0;
    if (find(pg.key) != p) broken(name + " is not found under its key");
    if (pg.parent != kRoot) {
      const Page& up = at(pg.parent);
      if (!up.in_tree) broken(name + "'s parent " + std::to_string(pg.parent) + " is not in the tree");
      if (up.ref < pg.ref) broken(name + " has more references than its parent");
      ++children[static_cast<std::size_t>(pg.parent)];
    }
    if (!pg.run_start && (pg.parent == kRoot || at(pg.parent).run_next != p))
      broken(name + " continues a run its parent does not continue into");
    if (pg.run_next != kNoBlock && (!at(pg.run_next).in_tree || at(pg.run_next).parent != p || at(pg.run_next).run_start))
      broken(name + "'s run goes on to page " + std::to_string(pg.run_next) + ", not a continuing child");
    if (is_evictable_leaf(pg)) {
      ++leaves;
      if (!lru_leaves_.count({pg.last_access, p})) broken(name + " is an evictable leaf missing from the LRU order");
    }
  }
  for (BlockId p = 0; p < num_pages(); ++p)
    if (at(p).in_tree && at(p).children != children[static_cast<std::size_t>(p)])
      broken("page " + std::to_string(p) + " counts " + std::to_string(at(p).children) + " children, has " +
             std::to_string(children[static_cast<std::size_t>(p)]));
  if (free != num_free()) broken("free list size != pages marked free");
  if (tree != tree_pages_) broken("tree page count " + std::to_string(tree_pages_) + " != " + std::to_string(tree));
  if (unref != unreferenced_)
    broken("unreferenced count " + std::to_string(unreferenced_) + " != " + std::to_string(unref));
  if (leaves != static_cast<std::int64_t>(lru_leaves_.size())) broken("LRU order holds pages that are not evictable leaves");
  if (static_cast<std::int64_t>(nodes_.size()) != tree_pages_) broken("key map size != tree pages");
}

}  // namespace pagesim::alloc
