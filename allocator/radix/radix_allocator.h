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
// from the root) followed by private pages. admit() looks the whole prompt up (all of
// AdmitRequest::prompt_block_hashes) and holds the hits plus at most max_new_tokens more
// (chunked prefill); the keys are kept while prompt pages remain to be filled. Each full
// prompt page joins the tree as soon as the sequence holds it (at admit, or when append()
// fills it); when another sequence inserted the same key meanwhile (SGLang's in-batch
// duplicate), the table takes that tree page and the computed copy is freed, as SGLang's
// RadixCache.insert does, so the rest of the prompt still joins the tree. SGLang inserts
// pages after the chunk's forward pass, which the caller models by matching before it
// admits anything in an iteration (admit_matched). Generated tokens are never inserted:
// the trace gives them no identity (SGLang's cache_finished_req inserts them too).
// Hits are whole pages of all but the last token held (SGLang computes at least one token
// and matches whole pages); the paged pool instead keeps its last full hit block and
// recomputes one token, so a prompt found whole in both counts up to page_size - 1 more
// cached tokens there. Prefix statistics follow PrefixCacheStats: a first admission counts
// every prompt token in prompt_tokens and its hits in hit_tokens; a re-admission after a
// recompute preemption counts its hits in readmission_hit_tokens only.
// The waiting queue's pending-prefix holds (KvAllocator::hold_pending_prefix) are ignored:
// eviction is SGLang's LRU over unreferenced leaves, with no policy that protects them.
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
// the first tree_pages entries of a table are a root path, the rest private; while a
// sequence keeps its prompt keys, its tree pages are exactly its full keyed pages;
// token_states and owned-page counters match a full scan; breakdown classes sum to
// capacity.
// Not thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
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

// Not final: a test derives from it to count the pending-prefix holds it ignores.
class RadixAllocator : public KvAllocator {
 public:
  // Throws AllocatorError on num_pages <= 0 or page_size < 1.
  explicit RadixAllocator(const RadixAllocatorSettings& settings);

  // KvAllocator
  std::string name() const override;
  std::int64_t capacity_slots() const override { return tree_.num_pages() * page_size_; }
  std::int32_t block_size() const override { return page_size_; }
  bool caches_prefixes() const override { return true; }
  bool can_append(SeqId seq, std::int64_t n) const override;
  bool can_append_all(std::span<const SeqHandle> group, std::int64_t n) const override;
  // Grows seq by n tokens; full prompt pages among them join the tree (or are swapped for
  // the tree's copy). False (nothing changed) when the pages do not fit.
  bool append(SeqId seq, std::int64_t n) override;
  // False (nothing changed) when the private pages cannot be copied.
  bool fork(SeqId parent, SeqId child) override;
  void free(SeqId seq) override;
  bool contains(SeqId seq) const override { return seqs_.count(seq) != 0; }
  std::int64_t num_sequences() const override { return static_cast<std::int64_t>(seqs_.size()); }
  std::int64_t sequence_tokens(SeqId seq) const override { return get(seq).tokens; }
  std::vector<BlockId> block_table(SeqId seq) const override { return get(seq).table; }
  std::int64_t available_blocks() const override { return num_available_pages(); }
  MemoryBreakdown breakdown() const override;
  AllocatorStats stats() const override;
  std::vector<BlockMove> take_pending_copies() override;
  // match() of the keys, in tokens; touches nothing.
  std::int64_t cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const override;
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
  // How many of the first n pages of `keys`' cached path no table holds (they stop being
  // available once a request locks the path). REQUIRES: n <= match_pages(keys).
  std::int64_t unreferenced_matched_pages(std::span<const BlockHash> keys, std::int64_t n) const {
    return tree_.unreferenced_in_path(keys, n);
  }
  // The logical clock: advanced by every admit, append and free.
  std::uint64_t clock() const { return tree_.clock(); }
  // Pages admitting req with at most `max_hit_pages` reused pages would take out of
  // num_available_pages() (new pages + reused pages that were unreferenced). Throws
  // AllocatorError as can_admit(req) does.
  std::int64_t pages_to_admit(const AdmitRequest& req, std::int64_t max_hit_pages) const {
    check_admission(req, "pages_to_admit");
    check_prompt_keys(req);
    return pages_needed(req, max_hit_pages);
  }
  // admit() reusing at most `max_hit_pages` cached pages: the match the caller made before
  // this iteration's admissions, so pages inserted by them are not hit in the same
  // iteration. False (nothing changed) when the pages do not fit.
  AdmitResult admit_matched(const AdmitRequest& req, std::int64_t max_hit_pages) {
    check_admission(req, "admit_matched");
    check_prompt_keys(req);
    return admit_checked(req, max_hit_pages);
  }
  // New pages append(seq, n) would take.
  std::int64_t pages_to_append(SeqId seq, std::int64_t n) const;

 private:
  struct Sequence {
    std::vector<BlockId> table;
    std::int64_t tokens = 0;
    std::int64_t tree_pages = 0;  // leading table entries that are tree pages
    // All the prompt's page keys while some keyed page is not yet full; then empty.
    // Invariant: non-empty => tree_pages == min(keys, tokens / page_size).
    std::vector<BlockHash> prompt_keys;
  };

  const Sequence& get(SeqId seq) const;
  Sequence& get(SeqId seq);
  std::int64_t pages_for(std::int64_t tokens) const { return (tokens + page_size_ - 1) / page_size_; }
  // Pages of req's match it may reuse: at most max_hit_pages, and whole pages of all but
  // the last token it holds.
  std::int64_t hit_pages(const AdmitRequest& req, std::int64_t max_hit_pages) const;
  // Puts s's full keyed prompt pages past its tree prefix into the tree (or swaps each for
  // the tree page another sequence inserted under the same key), then drops the keys
  // once none is left.
  void settle_prompt_pages(Sequence& s);
  // KvAllocator's admission operations (kv_allocator.h checks req first).
  std::string misuse_prefix(std::string_view op) const override;
  bool do_can_admit(const AdmitRequest& req) const override;
  bool do_can_ever_admit(const AdmitRequest& req) const override;
  std::int64_t do_max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  // Reuses the longest cached prefix of req's page keys (whole pages of all but the last
  // token) and allocates req.held_tokens(cached) - cached more tokens.
  AdmitResult do_admit(const AdmitRequest& req) override;
  std::int64_t do_unusable_free(const AdmitRequest&) const override { return 0; }
  // Throws AllocatorError for more keys than full prompt pages: radix's own check beyond the
  // interface's (which allows keys of generated tokens), as generated tokens never join the tree.
  void check_prompt_keys(const AdmitRequest& req) const;
  // pages_to_admit and admit_matched, req checked already.
  std::int64_t pages_needed(const AdmitRequest& req, std::int64_t max_hit_pages) const;
  AdmitResult admit_checked(const AdmitRequest& req, std::int64_t max_hit_pages);

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
