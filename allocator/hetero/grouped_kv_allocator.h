// GroupedKvAllocator: the KV manager of a heterogeneous model — one block table per
// TableGroup of a KvLayout (kv_layout.h) over a LargePagePool (large_page_pool.h). The
// layout is the policy: uniform_layout gives the waste baseline `uniform`, hybrid_layout
// vLLM v1's hybrid KV cache manager `hybrid`, jenga_layout Jenga's two-level allocator
// `jenga` (make_allocator builds each from an AllocatorSpec).
//
// A sequence holds, per table: kTokens, entry i for tokens [i*B, (i+1)*B), kNoBlock for the
// pages it no longer keeps (below first_kept_token(keep, W, attended_from) / B, attended_from
// being the first query position of the step that last grew it: the pages that fell wholly
// out of the window of every query of that step or a past chunk, released then, the way
// vLLM's remove_skipped_blocks(num_computed_tokens) frees them and puts a null block in
// their place);
// kEncoder, ceil(encoder_tokens / B) pages from admission to free; kState, its state pages.
// New tokens get pages in every kTokens table first and out-of-window pages are dropped after
// (vLLM allocates a prefill chunk's pages in sliding-window groups too and frees the skipped
// ones at the next step: PR vllm-project/vllm#30166 describes it), so a long prompt's peak is
// its whole length in every table.
//
// Prefix caching (prefix_cache): a full prompt page of a kTokens table is cached under
// (table, hash of its block) (vLLM keys its cached blocks by BlockHashWithGroupId,
// vllm/v1/core/kv_cache_utils.py; Jenga caches per layer type alike); a hit of k blocks needs, in every kTokens table, the pages a
// query at position k*B attends: all k in a kFull table, the last ceil((W-1)/B) for a
// sliding window (vLLM SlidingWindowManager.find_longest_cache_hit), those of the current
// chunk for chunked-local (ChunkedLocalAttentionManager), and the longest such k wins
// (vLLM's HybridKVCacheCoordinator). Encoder pages are never shared across requests; a model
// with a recurrent group gets no hits (its state at a block boundary is not kept: vLLM before
// its Mamba prefix caching, RFC vllm-project/vllm#11382).
//
// Which page a table gets is the pool's choice (large_page_pool.h). With single_free_queue
// (the experiment sets it for scheduler.kind: vllm-v1) the pool keeps vLLM v1's one
// free-block queue, as PagedAllocator's option of that name: vLLM's hybrid manager has one
// BlockPool, one FreeKVCacheBlockQueue, for all its KV cache groups, and free() puts a
// request's pages at the queue's tail table by table, each table last page first (vLLM's
// coordinator frees its groups in turn, each in reverse). It needs one page per large page:
// uniform and hybrid always have it; jenga has it when every table's page has one size (then
// its two levels are one, a block pool; on a single-group model always). A single-group model
// then runs as PagedAllocator with that option: same admissions, hits and evictions. jenga
// with pages of several sizes keeps its own order: a freed small page serves only its own
// table until its whole large page is free, so one queue over pages of every size would hand
// out pages no table can use.
//
// fork() shares every token and encoder page (copy-on-write of a partly filled last page
// when one of them appends) and copies the state pages, so it fails without room for them.
//
// Units (kv_layout.h): capacity_slots() and max_group_slots() in full-attention token
// equivalents (layout().token_bytes each); breakdown() in bytes, classes partitioning
// capacity_bytes(). A slot of a page shared by sequences of different lengths counts as
// token_states while any of them still attends it. Unlike the single-group allocators,
// breakdown() is not O(1): it scans every table entry of every sequence (that sharing rule
// has no cheap incremental form), O(Σ table entries) with no allocation after the first call.
//
// Invariants (validate):
//   ref_count(p) == references from block tables; the pool's own identities
//   every table of a sequence has the shape above (entries, kNoBlock exactly below the kept
//   range, filled == tokens in the page, each page of its table's kind)
//   breakdown classes sum to capacity_bytes(); allocated bytes == referenced pages' bytes
// Not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "allocator/hetero/kv_layout.h"
#include "allocator/hetero/large_page_pool.h"
#include "allocator/kv_allocator.h"
#include "allocator/layer_group.h"

namespace pagesim::alloc {

class GroupedKvAllocator final : public KvAllocator {
 public:
  // `layout` from one of kv_layout.h's builders for `groups`. Throws AllocatorError for
  // lru_protect_waiting (no waiting-queue bookkeeping here), a pool too large for 32-bit
  // page ids, or single_free_queue with a layout whose pages are of several sizes
  // (one_page_size(layout) is false).
  GroupedKvAllocator(LayerGroups groups, KvLayout layout, bool prefix_cache, EvictionKind eviction,
                     bool single_free_queue = false);
  // Whether every table's page is the layout's large page: what single_free_queue needs.
  static bool one_page_size(const KvLayout& layout);

  // KvAllocator
  std::string name() const override;
  std::int64_t capacity_slots() const override;
  std::int32_t block_size() const override { return layout_.tokens_per_page; }
  bool caches_prefixes() const override { return prefix_cache_; }
  bool can_append(SeqId seq, std::int64_t n) const override;
  bool can_append_all(std::span<const SeqHandle> group, std::int64_t n) const override;
  bool append(SeqId seq, std::int64_t n) override;
  bool fork(SeqId parent, SeqId child) override;
  void free(SeqId seq) override;
  bool contains(SeqId seq) const override { return seqs_.count(seq) != 0; }
  std::int64_t num_sequences() const override { return static_cast<std::int64_t>(seqs_.size()); }
  std::int64_t sequence_tokens(SeqId seq) const override { return get(seq).tokens; }
  // The table of the first kFull kTokens table, else of the first kTokens table (kNoBlock
  // where a page was dropped); page ids of the pool. table() gives any table.
  std::vector<BlockId> block_table(SeqId seq) const override;
  std::int64_t block_id_space() const override { return pool_.id_space(); }
  // The first kTokens table that keeps a sliding window or a chunk, when there is one.
  KernelTable kernel_table() const override;
  std::vector<BlockId> kernel_block_table(SeqId seq) const override;
  // Pages any table can get now (free pages of active large pages, free and released large
  // pages, evictable pages); per kTokens table, the pages kept (kNoBlock entries not counted).
  std::int64_t available_blocks() const override;
  std::vector<std::int64_t> group_blocks(SeqId seq) const override;
  // Caches the full token pages of every kTokens table, as vLLM's coordinator caches each
  // group's blocks; false (nothing cached) with a recurrent group or without the cache.
  bool cache_computed_blocks(SeqId seq, std::span<const BlockHash> keys) override;
  MemoryBreakdown breakdown() const override;
  AllocatorStats stats() const override;
  std::vector<BlockMove> take_pending_copies() override;
  std::int64_t cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const override;
  void validate() const override;

  // Heterogeneous specifics
  const KvLayout& layout() const { return layout_; }
  const LayerGroups& groups() const { return groups_; }
  const LargePagePool& pool() const { return pool_; }
  std::int64_t capacity_bytes() const { return layout_.num_large_pages * layout_.large_page_bytes; }
  // Sequence seq's block table t (kNoBlock for dropped pages). REQUIRES: seq live, t valid.
  const std::vector<BlockId>& table(SeqId seq, std::int32_t t) const;
  // Pages each table would take for admit(req) / append(seq, n) now (0 where none).
  // pages_to_admit throws AllocatorError as can_admit(req) does.
  std::vector<std::int64_t> pages_to_admit(const AdmitRequest& req) const;
  std::vector<std::int64_t> pages_to_append(SeqId seq, std::int64_t n) const;

 private:
  // KvAllocator's admission operations (kv_allocator.h checks req first).
  std::string misuse_prefix(std::string_view op) const override;
  bool do_can_admit(const AdmitRequest& req) const override;
  bool do_can_ever_admit(const AdmitRequest& req) const override;
  std::string do_limiting_setting(const AdmitRequest&) const override { return "pool_bytes"; }
  std::int64_t do_max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  AdmitResult do_admit(const AdmitRequest& req) override;
  std::int64_t do_unusable_free(const AdmitRequest&) const override { return 0; }

  struct Sequence {
    std::vector<std::vector<BlockId>> tables;  // per TableGroup
    std::vector<std::int64_t> hint;            // per table: large page last taken from, -1
    std::int64_t tokens = 0;
    // The first query position of the step that last grew the sequence (tokens before that
    // growth; at admission the prefix hit): pages are dropped only below the keys that query
    // attends, first_kept_token(attended_from), so the step's kernel still finds every key its
    // queries see (vLLM's remove_skipped_blocks takes num_computed_tokens, not the new total).
    // 0 <= attended_from <= tokens.
    std::int64_t attended_from = 0;
    std::int64_t final_tokens = 0;
    std::int64_t encoder_tokens = 0;
    // Chunked prefill with the prefix cache, as PagedAllocator: the prompt's hashes while some
    // of its full blocks are still to be appended; blocks [0, hashed_blocks) were offered.
    std::vector<BlockHash> prompt_hashes;
    std::size_t hashed_blocks = 0;
  };
  // What admit(req) would do: the hit length and, per table, the pages to reuse and take.
  struct AdmitPlan {
    std::int64_t hits = 0;            // leading prompt blocks found (k)
    std::int64_t cached_tokens = 0;
    std::int64_t held_tokens = 0;
    std::vector<std::int64_t> first_hit;  // per kTokens table: first block reused (lo_k)
    std::vector<std::int64_t> need;       // per table: pages to take
    std::vector<BlockId> reused;          // every page reused, all tables
  };

  const Sequence& get(SeqId seq) const;
  Sequence& get(SeqId seq);
  std::int64_t pages_of(std::int64_t tokens) const { return (tokens + block_size() - 1) / block_size(); }
  // Pages of table t a sequence holds at most in its life of `final` tokens (`at_admission` at
  // once when admitted), alone.
  std::int64_t peak_pages(std::size_t t, std::int64_t at_admission, std::int64_t final, std::int64_t encoder) const;
  // Leading prompt blocks whose pages every kTokens table holds as a hit needs; considers at
  // most `limit` of `hashes`. A hit of k blocks by a sequence of `tokens` tokens at admission
  // starts its queries at first_query(k, tokens): a windowed table needs the pages a query
  // there attends.
  std::int64_t count_hits(std::span<const BlockHash> hashes, std::int64_t limit, std::int64_t tokens) const;
  // The position of the first query after a hit of k blocks: k·B, or the last token when the
  // hit covers the whole sequence (that token is always computed: its logits are needed).
  std::int64_t first_query(std::int64_t k, std::int64_t tokens) const {
    return std::min(k * block_size(), tokens - 1);
  }
  AdmitPlan plan_admit(const AdmitRequest& req) const;
  // Releases the pages of kTokens tables that s no longer keeps.
  void drop_out_of_window(Sequence& s);
  void cache_filled_prompt_blocks(Sequence& s);
  BlockId take(Sequence& s, std::size_t t, bool fresh_first);

  LayerGroups groups_;
  KvLayout layout_;
  bool prefix_cache_;
  bool has_state_ = false;
  LargePagePool pool_;
  std::unordered_map<SeqId, Sequence> seqs_;
  std::vector<BlockMove> pending_copies_;
  std::int64_t logical_pages_ = 0;  // Σ non-null entries over every table of every sequence
  PrefixCacheStats prefix_stats_;
  // breakdown()'s scratch: per page, a visit stamp and the shortest holder's length.
  mutable std::vector<std::uint64_t> stamp_;
  mutable std::vector<std::int64_t> min_len_;
  mutable std::uint64_t generation_ = 0;
};

}  // namespace pagesim::alloc
