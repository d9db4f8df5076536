// RadixAllocator: a KV pool managed as SGLang manages it — token slots in pages of
// page_size tokens (1 by default, SGLang's default), a page table per sequence, and every
// full prompt page with an identity kept in a radix tree (radix_tree.h) that outlives the
// sequence: later prompts reuse the longest cached prefix, and unreferenced pages are
// evicted LRU, leaves first, only when a new page is needed.
//
// Page identities are the chained keys of AdmitRequest::prompt_block_hashes at page
// granularity (sim/engine/prefix_keys.h with block size = page_size): the key of page j
// chains the previous key, the trace hash id(s) covering its tokens and j. With page_size 1
// a token's identity is (its hash block's chained id, its offset), so two prompts match
// token by token exactly as far as their hash ids agree.
//
// A sequence's table is a run of tree pages (its cached or inserted prompt prefix, a path
// from the root) followed by private pages. A new full prompt page joins the tree when the
// page before it is a tree page and its key is not there yet; otherwise (another sequence
// inserted the same key meanwhile, SGLang's in-batch duplicate) it stays private: the
// sequence computed it itself, and it is freed with the sequence. Pages enter the tree
// when they are allocated (at admit, or append_prompt for a later chunk); SGLang inserts
// them after the chunk's forward pass, which the caller models by matching before it
// admits anything in an iteration (admit_matched). Generated tokens are never inserted:
// the trace gives them no identity (SGLang's cache_finished_req inserts them too).
// fork() shares the tree pages and copies the private ones (queued block moves): no
// copy-on-write bookkeeping, at the price of copying a partly filled last page at once.
// No swapping.
//
// Memory classes (DESIGN.md): token_states = tokens held in referenced pages (a tree page
// is full; shared pages count once); rounding = the unfilled part of referenced pages;
// free = pages no table holds, of which cached_free = unreferenced tree pages (reusable
// KV, evicted on demand). reserved and over_reserved are always 0: nothing is allocated
// ahead. stats().prefix counts pages as blocks.
//
// Invariants (validate()): those of RadixTree; table size == ceil(tokens / page_size);
// the first tree_pages entries of a table are a root path, the rest private; token_states
// and owned-page counters match a full scan; breakdown classes sum to capacity.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/radix/radix_tree.h"

namespace pagesim::alloc {

struct RadixAllocatorSettings {
  std::int64_t num_pages = 0;     // pool size in pages (> 0)
  std::int32_t page_size = 1;     // tokens per page (>= 1): 1 matches prefixes token by
                                  // token; larger pages match only whole pages
};

class RadixAllocator final : public KvAllocator {
 public:
  // Throws AllocatorError on num_pages <= 0 or page_size < 1.
  explicit RadixAllocator(const RadixAllocatorSettings& settings);

  // KvAllocator
  std::string name() const override;
  std::int64_t capacity_slots() const override { return tree_.num_pages() * page_size_; }
  std::int32_t block_size() const override { return page_size_; }
  bool caches_prefixes() const override { return true; }
  bool can_admit(const AdmitRequest& req) const override;
  bool can_ever_admit(const AdmitRequest& req) const override;
  std::int64_t max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  // Reuses the longest cached prefix of req's page keys (at most the full pages of the
  // tokens it holds) and allocates the rest.
  AdmitResult admit(const AdmitRequest& req) override;
  bool can_append(SeqId seq, std::int64_t n) const override;
  bool can_append_all(std::span<const SeqId> group, std::int64_t n) const override;
  bool append(SeqId seq, std::int64_t n) override;
  // False (nothing changed) when the private pages cannot be copied.
  bool fork(SeqId parent, SeqId child) override;
  void free(SeqId seq) override;
  bool contains(SeqId seq) const override { return seqs_.count(seq) != 0; }
  std::int64_t num_sequences() const override { return static_cast<std::int64_t>(seqs_.size()); }
  std::int64_t sequence_tokens(SeqId seq) const override { return get(seq).tokens; }
  std::vector<BlockId> block_table(SeqId seq) const override { return get(seq).table; }
  MemoryBreakdown breakdown() const override;
  AllocatorStats stats() const override;
  std::vector<BlockMove> take_pending_copies() override;
  std::int64_t unusable_free(const AdmitRequest&) const override { return 0; }
  void validate() const override;

  // Radix specifics
  std::int64_t num_pages() const { return tree_.num_pages(); }
  // Pages a new owner can get now: free + cached-but-free (SGLang: available + evictable).
  std::int64_t num_available_pages() const { return tree_.num_available(); }
  // Longest cached prefix of `keys`, in pages (SGLang match_prefix), counting only pages
  // inserted by logical time `inserted_by` (clock()). O(log pages).
  std::int64_t match_pages(std::span<const BlockHash> keys,
                           std::uint64_t inserted_by = std::numeric_limits<std::uint64_t>::max()) const {
    return tree_.match(keys, inserted_by);
  }
  // The logical clock: advanced by every admit, append and free.
  std::uint64_t clock() const { return tree_.clock(); }
  // Pages admitting req with at most `max_hit_pages` reused pages would take out of
  // num_available_pages() (new pages + reused pages that were unreferenced).
  std::int64_t pages_to_admit(const AdmitRequest& req, std::int64_t max_hit_pages) const;
  // admit() reusing at most `max_hit_pages` cached pages: the match the caller made before
  // this iteration's admissions, so pages inserted by them are not hit in the same
  // iteration. False (nothing changed) when the pages do not fit.
  AdmitResult admit_matched(const AdmitRequest& req, std::int64_t max_hit_pages);
  // Grows seq by n prompt tokens of a later prefill chunk; full pages among them whose
  // keys (`keys` = all the prompt's page keys) can join the tree do. False (nothing
  // changed) when the pages do not fit.
  bool append_prompt(SeqId seq, std::int64_t n, std::span<const BlockHash> keys);
  // New pages append(seq, n) would take.
  std::int64_t pages_to_append(SeqId seq, std::int64_t n) const;

 private:
  struct Sequence {
    std::vector<BlockId> table;
    std::int64_t tokens = 0;
    std::int64_t tree_pages = 0;  // leading table entries that are tree pages
  };

  const Sequence& get(SeqId seq) const;
  Sequence& get(SeqId seq);
  std::int64_t pages_for(std::int64_t tokens) const { return (tokens + page_size_ - 1) / page_size_; }
  // Takes a page for s's next table entry, inserting it in the tree when page index i has
  // a key in `keys` and s's table so far is all tree pages.
  void add_page(Sequence& s, std::span<const BlockHash> keys);
  void check_request(const AdmitRequest& req) const;

  std::int32_t page_size_;
  RadixTree tree_;
  std::unordered_map<SeqId, Sequence> seqs_;
  std::vector<BlockMove> pending_copies_;
  // Incremental counters behind breakdown() and stats().
  std::int64_t owned_pages_ = 0;     // pages with ref > 0
  std::int64_t token_states_ = 0;    // tokens held in owned pages, shared pages once
  std::int64_t logical_pages_ = 0;   // Σ table lengths
  PrefixCacheStats prefix_;
};

}  // namespace pagesim::alloc
