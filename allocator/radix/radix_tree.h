// RadixTree: SGLang's radix-tree prefix cache over a pool of KV pages, one tree node per page.
//
// The pool holds num_pages pages of page_size token slots, ids [0, num_pages). A page is in
// exactly one state:
//   free      on the free list: holds nothing
//   private   held by one sequence's table and not in the tree (generated tokens, prompt
//             pages without identity, a partly filled last page)
//   tree      a node of the tree: a full page of prompt tokens with an identity key, child
//             of the page before it in the prompt (or of the root). Referenced (ref > 0)
//             while a table holds it, else cached-but-free: reusable KV, evicted on demand
// Keys are the chained page keys of prefix_keys.h (KvAllocator's contract: equal keys mean
// equal prefixes), so a key names one node: the child of the node keyed by the page before.
// A path from the root is a prompt prefix and the longest matching path is the longest
// cached prefix (SGLang python/sglang/srt/mem_cache/radix_cache.py, RadixCache.match_prefix
// / _match_prefix_helper). Because every ancestor of a tree node is in the tree, "page i's
// key is in the tree" is monotone in i, and match() binary-searches it: O(log pages) key
// lookups, not one per page (SGLang walks the tree token by token; a simulator must not). ref(node) counts the tables holding the node; a table holds the
// whole path to each node it holds, so ref(parent) >= ref(child) and the unreferenced nodes
// form whole subtrees. This ref is SGLang's lock_ref (inc_lock_ref / dec_lock_ref along the
// path of a request's last node).
// Eviction takes unreferenced leaves by least recent access (RadixCache.evict: a heap of
// evictable leaves keyed by last_access_time; a parent left childless and unlocked becomes
// a candidate), and frees a whole SGLang node, which may free more than asked: the pages
// form runs, each SGLang's node (a run starts at a page inserted under the root, under a
// page inserted by an earlier call, i.e. at an earlier clock(), or beside a sibling, which
// splits its parent's run there as _split_node does; split_after() splits where a match
// ends), and evicting a run's last page evicts the run up to its first page.
// Access times are a logical clock (touch()), so runs are deterministic; ties go to the
// lower page id.
//
// Invariants (validate() checks them, with the tables the caller passes):
//   free + private + tree pages == num_pages; a free page has ref 0
//   ref(p) == occurrences of p in the callers' tables; private pages have ref 1
//   for every tree node: its key maps to it, children == its child count,
//     ref(parent) >= ref(node)
//   evictable leaves == tree nodes with ref 0 and no children; unreferenced == tree nodes
//     with ref 0
//   a page continuing a run is its parent's run_next; run_next is a child that is no
//     run's start
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "allocator/block.h"
#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

class RadixTree {
 public:
  static constexpr BlockId kRoot = -1;  // the parent of a prompt's first page

  // REQUIRES: num_pages >= 1 (checked by the owner).
  explicit RadixTree(std::int64_t num_pages);

  std::int64_t num_pages() const { return static_cast<std::int64_t>(pages_.size()); }
  std::int64_t num_free() const { return static_cast<std::int64_t>(free_list_.size()); }
  // Tree pages no table holds: evictable, counted in cached_free.
  std::int64_t num_unreferenced() const { return unreferenced_; }
  std::int64_t num_tree_pages() const { return tree_pages_; }
  // Pages a new owner can get now: free + unreferenced tree pages.
  std::int64_t num_available() const { return num_free() + unreferenced_; }
  std::int64_t evictions() const { return evictions_; }

  // The tree page keyed `key`, or kNoBlock.
  BlockId find(BlockHash key) const;
  // The child of `parent` keyed `key`, or kNoBlock.
  BlockId child(BlockId parent, BlockHash key) const;
  // Number of leading `keys` whose path is in the tree (the longest cached prefix, pages),
  // counting only pages inserted at or before logical time `inserted_by` (clock()).
  // REQUIRES: chained keys (see above).
  std::int64_t match(std::span<const BlockHash> keys,
                     std::uint64_t inserted_by = std::numeric_limits<std::uint64_t>::max()) const;
  // How many of the first `n` matched pages are unreferenced (cost nothing to reuse but
  // leave the evictable pool when locked). REQUIRES: n <= match(keys).
  std::int64_t unreferenced_in_path(std::span<const BlockHash> keys, std::int64_t n) const;

  // Takes a page for a new owner (free list first, else evicts the least recently used
  // unreferenced leaf) with ref 1, private. REQUIRES: num_available() > 0.
  BlockId take();
  // Makes private page `p` (just taken) the tree child of `parent` keyed `key`.
  // REQUIRES: p private; parent is kRoot or a tree page; find(key) == kNoBlock.
  void insert(BlockId p, BlockId parent, BlockHash key);
  // One more table holds tree page p (a hit or a fork).
  void lock(BlockId p);
  // Ends p's run at p (a match ending at p splits its node, RadixCache._split_node).
  void split_after(BlockId p);
  // A table drops p: a private page goes to the free list; a tree page loses a reference
  // and, at zero, becomes cached-but-free.
  void release(BlockId p);
  // Marks p as accessed now (LRU); a tree leaf without references moves in the LRU order.
  void touch(BlockId p);
  // Advances the logical clock; every touch until the next tick shares one time.
  void tick() { ++clock_; }
  std::uint64_t clock() const { return clock_; }

  bool in_tree(BlockId p) const { return pages_[static_cast<std::size_t>(p)].in_tree; }
  std::int32_t ref(BlockId p) const { return pages_[static_cast<std::size_t>(p)].ref; }
  BlockId parent(BlockId p) const { return pages_[static_cast<std::size_t>(p)].parent; }

  // Checks the invariants above against `tables` (every live table, each listed once).
  // Throws InvariantViolation naming the first one broken. O(pages + table entries).
  void validate(std::span<const std::vector<BlockId>* const> tables) const;

 private:
  struct Page {
    BlockHash key = 0;
    BlockId parent = kRoot;
    std::int32_t ref = 0;
    std::int32_t children = 0;
    std::uint64_t last_access = 0;
    std::uint64_t inserted_at = 0;  // clock() when it joined the tree (a page's ancestors are older)
    bool in_tree = false;
    bool on_free_list = true;
    bool run_start = false;       // first page of its run (SGLang node)
    BlockId run_next = kNoBlock;  // the child continuing its run, if any
  };

  Page& at(BlockId p) { return pages_[static_cast<std::size_t>(p)]; }
  const Page& at(BlockId p) const { return pages_[static_cast<std::size_t>(p)]; }
  bool is_evictable_leaf(const Page& pg) const { return pg.in_tree && pg.ref == 0 && pg.children == 0; }
  // Slow path of take(): removes the LRU evictable leaf's whole run from the tree, puts
  // all but the leaf on the free list and returns the leaf.
  BlockId evict_one();
  // Removes evictable leaf p from the tree (not from lru_leaves_).
  void remove_leaf(BlockId p);

  std::vector<Page> pages_;
  std::vector<BlockId> free_list_;  // LIFO after the initial ascending order
  std::unordered_map<BlockHash, BlockId> nodes_;  // key -> tree page
  std::set<std::pair<std::uint64_t, BlockId>> lru_leaves_;  // (last_access, page) of evictable leaves
  std::int64_t unreferenced_ = 0;
  std::int64_t tree_pages_ = 0;
  std::int64_t evictions_ = 0;
  std::uint64_t clock_ = 0;
};

}  // namespace pagesim::alloc
