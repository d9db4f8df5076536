// LargePagePool: Jenga's two-level page allocator with a prefix cache of pages keyed per
// block table; with one page per large page it is a plain paged pool (uniform, hybrid).
//
// The pool is num_large large pages. A large page is free, or belongs to one table t and is
// carved into pages_per_large(t) pages of that table's size (Jenga, arXiv 2503.18292: the
// LCM allocator hands large pages to per-type small-page allocators and takes a large page
// back once all of its small pages are free). Page ids are large * max_pages_per_large +
// index; an index at or past pages_per_large(t) is never used. A page is free, referenced
// (ref_count > 0: by block tables) or cached-and-unreferenced ("evictable": it keeps KV that
// a prompt with the same prefix can reuse).
// A large page is *active* while one of its pages is referenced, *inactive* while none is but
// some are cached, and goes back to the free large pages when neither holds.
//
// Which page a table gets (take): a free page of one of its active large pages — the large
// page the same sequence last took from first (Jenga's request-aware allocation: a request's
// pages share large pages, so they come back whole when it ends) — then, with fresh_first, a
// free large page; then the eviction victim among its own evictable pages in active large
// pages (EvictionPolicy per table); then a free large page; then the victim among inactive
// large pages (EvictionPolicy over large pages), whose cached pages are all forgotten. With
// one page per large page the first and third steps find nothing, and the policy over large
// pages is the paged allocator's policy over blocks.
// With `single_free_queue` (vLLM v1's FreeKVCacheBlockQueue, as PagedAllocator's option of
// that name; only with one page per large page: a block pool of one page size, as v1's one
// BlockPool serves every KV cache group) a large page released without a cached page waits
// in a released queue, oldest first, instead of returning to the free large pages, and the
// last two steps become one: the queue's head or the policy's victim, whichever was released
// first (with lru, exactly one queue). The free large pages then hold only those never used
// yet, lowest id first.
// What is pagesim's own reading: Jenga's paper (its abstract: "a two-level memory allocator,
// leveraging the least common multiple (LCM) of embedding sizes", a "prefix-subset evictor")
// evicts so that what stays cached is usable as a prefix by every layer type; here eviction
// stays inside a table while it has evictable pages in its own large pages and otherwise
// frees whole large pages, least recently used first, and the hit rule (GroupedKvAllocator)
// makes a prefix count only when every table holds its part. The paper's section-level
// details were not available to check this against.
// plan() tells whether a batch of takes can succeed and whether it can without eviction;
// GroupedKvAllocator asks it before every change, so a failed admit or append changes nothing.
//
// Built on the paged-pool mechanism of allocator/pool/: the large pages are the blocks of a
// BlockPool (its free list is the free large pages, its ref count a large page's referenced
// pages; its fill level is unused), ordered for reuse by a ReleasedBlockQueue and an
// EvictionPolicy as PagedAllocator orders its blocks; each table's cached pages are a
// BlockHashIndex over page ids. With one page per large page the pool is the paged pool.
//
// Invariants (validate):
//   every large page is exactly one of free (on the free list or, single_free_queue, the
//   released queue; nothing referenced or cached), active (ref count > 0) or inactive (ref
//   count 0, on the large-page policy); its page states partition it
//   a large page's ref count == its pages with ref > 0
//   free_pages(t) == free pages of t's active large pages; partial list == those with one
//   an evictable page of an active large page is on its table's policy, of an inactive one
//   on none; ref_count(p) == references the caller counts (validate's argument)
//   each table's index's own (block_hash_index.h), and it holds only pages of that table
// Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "allocator/block.h"
#include "allocator/kv_allocator.h"
#include "allocator/pool/block_hash_index.h"
#include "allocator/pool/block_pool.h"
#include "allocator/pool/eviction_policy.h"
#include "allocator/pool/released_block_queue.h"

namespace pagesim::alloc {

class LargePagePool {
 public:
  // REQUIRES: num_large >= 1, every pages_per_large[t] >= 1, num_large * max(pages) < 2^31;
  // single_free_queue only with every pages_per_large[t] == 1.
  LargePagePool(std::int64_t num_large, std::vector<std::int64_t> pages_per_large, EvictionKind eviction,
                bool single_free_queue = false);

  std::int64_t num_large() const { return static_cast<std::int64_t>(large_.size()); }
  std::int64_t pages_per_large(std::int32_t t) const { return per_[static_cast<std::size_t>(t)]; }
  // Page ids lie in [0, id_space()).
  std::int64_t id_space() const { return num_large() * stride_; }
  std::int32_t table_of(BlockId p) const { return large_[static_cast<std::size_t>(p / stride_)].table; }

  // What the pages of table t can come from now.
  std::int64_t free_pages(std::int32_t t) const { return free_small_[static_cast<std::size_t>(t)]; }
  std::int64_t evictable_pages(std::int32_t t) const { return type_policy_[static_cast<std::size_t>(t)]->size(); }
  std::int64_t free_large() const { return large_pool_.num_free(); }
  // Free large pages waiting in the released queue (0 unless single_free_queue).
  std::int64_t released_large() const { return released_.size(); }
  bool single_free_queue() const { return single_free_queue_; }
  std::int64_t inactive_large() const { return large_policy_->size(); }
  // Cached unreferenced pages, wherever they are.
  std::int64_t num_evictable() const;

  struct Plan {
    bool feasible = false;     // every take below can succeed
    bool fresh_first = false;  // ... without evicting anything (pass to take)
  };
  // Whether need[t] new pages of each table t can be taken after `hits` (cached pages, each
  // to be reused once, distinct) are reused. O(tables + hits).
  Plan plan(std::span<const std::int64_t> need, std::span<const BlockId> hits) const;

  // A page of table t, ref 1, filled 0, uncached (see the header for which). `hint`: the
  // large page the caller's sequence last took for t, or -1. REQUIRES: a plan said so.
  BlockId take(std::int32_t t, std::int64_t hint, bool fresh_first);
  // A prompt lookup hit cached page p: one more reference (an evictable page leaves its
  // policy; an inactive large page becomes active).
  void reuse(BlockId p);
  void add_ref(BlockId p) { ++page(p).ref; }
  // Drops one reference; at zero p becomes evictable (if cached) or free.
  void release(BlockId p);

  std::int32_t ref_count(BlockId p) const { return page(p).ref; }
  std::int64_t filled(BlockId p) const { return page(p).filled; }
  void set_filled(BlockId p, std::int64_t f) { page(p).filled = f; }
  // The large page p lies in.
  std::int64_t large_of(BlockId p) const { return p / stride_; }
  // Pages with ref > 0; cached pages with ref 0 of table t.
  std::int64_t referenced_pages() const { return referenced_pages_; }
  std::int64_t unreferenced_cached(std::int32_t t) const { return unreferenced_cached_[static_cast<std::size_t>(t)]; }

  // The page table t cached under h, or kNoBlock.
  BlockId lookup(std::int32_t t, BlockHash h) const { return index_[static_cast<std::size_t>(t)].find(h); }
  // Caches p (of table t, referenced) under h unless h is cached for t already.
  void cache(BlockId p, BlockHash h);
  // REQUIRES: p's large page belongs to a table (p is referenced or cached).
  bool cached(BlockId p) const { return index_[static_cast<std::size_t>(table_of(p))].contains(p); }
  std::int64_t evictions() const { return evictions_; }
  std::string eviction_name() const { return large_policy_->name(); }

  // Checks the identities above; refs[p] is the number of block-table references to p.
  void validate(const std::vector<std::int32_t>& refs) const;

 private:
  struct Page {
    std::int32_t ref = 0;
    std::int64_t filled = 0;  // tokens (token / encoder tables) or state bytes (state tables)
  };
  // What a large page is beyond its BlockPool entry (whose ref count counts its pages with
  // ref > 0).
  struct Large {
    std::int32_t table = -1;            // -1: free
    std::int32_t cached = 0;            // cached pages (referenced or not)
    std::vector<std::int32_t> free_slots;  // free page indices (a stack)
    std::int64_t partial_pos = -1;      // index in partial_[table] while active with a free slot
  };

  Page& page(BlockId p) { return pages_[static_cast<std::size_t>(p)]; }
  const Page& page(BlockId p) const { return pages_[static_cast<std::size_t>(p)]; }
  Large& large(std::int64_t l) { return large_[static_cast<std::size_t>(l)]; }
  const Large& large(std::int64_t l) const { return large_[static_cast<std::size_t>(l)]; }
  BlockId id(std::int64_t l, std::int64_t slot) const { return static_cast<BlockId>(l * stride_ + slot); }

  // Takes a free slot of large page l (ref 1). REQUIRES: l's ref count includes this page.
  BlockId take_slot(std::int64_t l);
  // Gives large page l, taken off the free list, the released queue or the policy with ref
  // count 1, to table t, and takes its first page.
  BlockId assign(std::int64_t l, std::int32_t t);
  // Forgets cached page p's key (it stays wherever it is).
  void uncache(BlockId p);
  void partial_add(std::int64_t l);
  void partial_remove(std::int64_t l);
  // Large page l lost its last reference: inactive (some page cached) or free.
  void deactivate(std::int64_t l);
  // Inactive large page l gets a reference again.
  void activate(std::int64_t l);

  std::vector<std::int64_t> per_;
  std::int64_t stride_;
  std::vector<Page> pages_;
  std::vector<Large> large_;
  BlockPool large_pool_;  // over large pages: free list (LIFO; lowest id first at start-up), ref counts
  // single_free_queue only: large pages released holding nothing cached, oldest first (free,
  // off the free list), and the release time of each inactive one (read for the victim).
  bool single_free_queue_;
  ReleasedBlockQueue released_;
  std::vector<std::vector<std::int64_t>> partial_;  // per table: active large pages with a free slot
  std::vector<std::int64_t> free_small_;            // per table: free slots of its active large pages
  std::int64_t inactive_cached_ = 0;                // cached pages of inactive large pages
  std::vector<std::unique_ptr<EvictionPolicy>> type_policy_;  // per table, over page ids
  std::unique_ptr<EvictionPolicy> large_policy_;              // over large page ids
  std::vector<BlockHashIndex> index_;                         // per table: its cached pages
  std::int64_t evictions_ = 0;  // cached pages forgotten to make room
  std::int64_t referenced_pages_ = 0;
  std::vector<std::int64_t> unreferenced_cached_;  // per table
};

}  // namespace pagesim::alloc
