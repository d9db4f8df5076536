// PagedAllocator: PagedAttention's KV manager — fixed-size blocks, a block table per
// sequence, reference counts, copy-on-write, swapping, and an optional prefix cache.
//
// The GPU pool holds num_blocks blocks of block_size token slots. A sequence's block table
// lists the blocks holding its tokens in order; block i holds tokens [i*B, (i+1)*B). Blocks
// are allocated on demand (a new block when the last one is full), so nothing is reserved
// ahead: the only waste is the unfilled part of each sequence's last block (`rounding`).
// fork() shares every block of the parent; the first append to a shared, partly filled
// last block copies it (copy-on-write) and queues the copy for the kernels
// (take_pending_copies). swap_out/swap_in move a group of sequences to and from a CPU pool
// of its own capacity and return the block moves a kernel would perform. With the prefix
// cache on, full prompt blocks are keyed by chained hashes and reused across requests: the
// whole prompt is looked up at admission, and blocks of a prompt admitted in chunks are
// cached as append fills them (the sequence keeps its prompt hashes until then).
// Optional offload tiers below the prefix cache (allocator/tier/tier_stack.h) take the
// blocks it evicts and serve prompt blocks the GPU no longer holds: a lower-tier hit is
// loaded into a fresh GPU block at admission (and priced by take_tier_transfer). The CPU
// tier stores into the CPU swap pool: swapped blocks and tier blocks share its budget.
// An optional remote prefix source (a global cache, allocator/remote_prefix.h) serves the
// prompt blocks neither the GPU nor a tier holds: fetched into a fresh GPU block at
// admission, cached here like a computed block, and reported by take_remote_fetch.
//
// Which free block a new owner gets: blocks never used yet go first (lowest id first). Then,
// by default, blocks that hold no cached prefix (the free list, LIFO), and a cached block is
// evicted (EvictionPolicy) only when none is left. With `single_free_queue` (vLLM v1's
// FreeKVCacheBlockQueue, vllm/v1/core/kv_cache_utils.py, used by BlockPool.get_new_blocks
// and free_blocks in vllm/v1/core/block_pool.py) every released block, cached or not, waits
// in release order: the new owner gets the least recently released one, evicting its hash if
// it has one. Precisely: a never-cached block released before the policy's victim goes
// first; with `lru` that is exactly one queue.
//
// LoRA adapter weights (sim/scheduler/adapter_cache.h) can take blocks of the pool in two
// ways, both in breakdown()'s adapter_weights class and never KV: a fixed region taken at
// construction (vLLM's max_loras GPU slots, reserved apart from the KV cache), and adapter
// pages (S-LoRA's unified paging, AdapterPages): an adapter is loaded into blocks taken like
// any new block, pinned while requests use it, and, once idle, evicted (least recently used
// first) when a new owner finds no free block and no evictable cached block.
// Speculative decoding (proposed_slots.h): grow_proposed appends the newest token and a
// step's proposed and lookahead slots like any tokens (fresh blocks, copy-on-write of a shared
// last block), and the sequence keeps them pending until verify_proposed, which drops the
// rejected and lookahead tokens from its end, giving back blocks left empty. vLLM v1 keeps
// those blocks with the request (its block tables only grow); they are taken again by the
// next step's reservation, which always needs at least as many, so the blocks held at each
// scheduling point agree unless a request planned earlier in the pass takes the freed block.
// Pending tokens are never cached: prompt blocks are cached only up to the committed tokens.
//
// Sequences live in a vector of slots (a freed slot is reused), found by id through a flat
// hash index (seq_slot_index.h) or by their SeqHandle without one. The per-token path, grow(handle, 1) into the
// sequence's own partly filled last block, touches that slot (and the block's entry once the
// pool keeps entries, below) only: each sequence keeps its last block and the free slots left
// in it.
//
// Invariants (validate() checks all of them):
//   free list + released queue + owned + evictable-cached == num_blocks  (one state each;
//   the released queue is empty unless single_free_queue)
//   a live sequence's slot is indexed by its id; room == |table| * B - tokens; a free slot
//   holds no table, prompt hashes or pending slots (new_slot writes only its first line);
//   last == table.back()
//   ref_count(b) == number of occurrences of b in GPU block tables, for every block not on
//   the free list (a free block's entry is meaningless: BlockPool::give_back_sole);
//   shared_blocks() == the blocks that occur more than once
//   a block on the free list occurs in no table and is not cached
//   filled(b) == min(B, tokens - i*B) for every sequence holding b at index i
//   (the two entry identities for GPU blocks in tables only once entries_kept_; before,
//   every such block occurs once, and its entry is meaningless)
//   token_states_ == Σ filled over owned blocks (pending proposed slots included);
//   proposed_accepted_ + proposed_rejected_ + lookahead_ == Σ pending over sequences, each
//   split as its ProposedSlots; no block holding a pending token is cached; a swapped
//   sequence has nothing pending; breakdown classes sum to capacity
//   the same identities for the CPU pool and swapped sequences, a CPU block held by the
//   CPU tier counting as kept (swapped + tier + free CPU blocks == num_cpu_blocks)
//   the tier stack's own identities (tier_stack.h)
// Not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/paged/adapter_pages.h"
#include "allocator/paged/seq_slot_index.h"
#include "allocator/pool/block_pool.h"
#include "allocator/pool/eviction_policy.h"
#include "allocator/pool/prefix_cache.h"
#include "allocator/pool/released_block_queue.h"
#include "allocator/tier/tier_stack.h"

namespace pagesim::alloc {

struct PagedAllocatorSettings {
  std::int64_t num_blocks = 0;      // GPU pool size in blocks (> 0)
  std::int32_t block_size = 16;     // tokens per block, a power of two; larger = fewer table
                                    // entries but more rounding waste per sequence
  std::int64_t num_cpu_blocks = 0;  // CPU swap pool in blocks; 0 disables swapping
  bool prefix_cache = false;        // reuse full prompt blocks across requests by hash
  EvictionKind eviction = EvictionKind::kLru;  // which cached block to reuse first
  // vLLM v1's single free-block queue (see above): cached blocks can be evicted while
  // never-cached free blocks wait; false: never-cached free blocks are always used first.
  bool single_free_queue = false;
  OffloadSettings offload;          // tiers below the prefix cache; empty: none
  // Blocks reserved for LoRA adapter weights at construction (vLLM's max_loras slots), in
  // [0, num_blocks); the KV gets the rest. 0: none.
  std::int64_t adapter_region_blocks = 0;
};

class PagedAllocator final : public KvAllocator {
 public:
  // Throws AllocatorError on num_blocks <= 0, a block size that is not a power of two,
  // num_cpu_blocks < 0, offload tiers without the prefix cache, or bad tier settings
  // (TierStack's constructor).
  explicit PagedAllocator(const PagedAllocatorSettings& settings);

  // KvAllocator
  std::string name() const override;
  std::int64_t capacity_slots() const override { return gpu_.num_blocks() * block_size_; }
  bool can_append(SeqId seq, std::int64_t n) const override;
  bool append(SeqId seq, std::int64_t n) override { return append_to(get(seq), seq, n); }
  // The sequence's slot: valid until free(seq).
  SeqHandle handle(SeqId seq) const override;
  bool grow(SeqHandle h, std::int64_t n) override { return append_to(at(h), h.id, n); }
  // Rounds that write only into each sequence's own last block or new blocks off the free
  // list (no copy-on-write, no eviction, no prompt block left to cache): a sequence with r
  // free slots in its last block takes a block in rounds r + 1, r + 1 + B, ..., so the
  // rounds' changes repeat with period B.
  void decode_run_rounds(std::span<const SeqHandle> seqs, std::int64_t keep_free_slots, std::int64_t max_rounds,
                         DecodeRounds* out) const override;
  void grow_rounds(std::span<const SeqHandle> seqs, std::int64_t rounds) override;
  void prefetch(std::span<const SeqHandle> seqs) const override {
    for (const SeqHandle& h : seqs)
      if (h.slot < slots_.size()) __builtin_prefetch(&slots_[h.slot]);  // line 0: what a round reads
    gpu_.prefetch_take();  // the free list's top: the blocks a round takes first
  }
  bool holds_proposed_slots() const override { return true; }
  bool grow_proposed(SeqHandle h, const ProposedSlots& p) override;
  void verify_proposed(SeqHandle h) override;
  // Always succeeds for a GPU-resident parent with nothing pending.
  bool fork(SeqId parent, SeqId child) override;
  void free(SeqId seq) override;
  void hold_pending_prefix(std::span<const BlockHash> hashes) override {
    if (cache_) cache_->hold_pending(hashes);
  }
  void release_pending_prefix(std::span<const BlockHash> hashes) override {
    if (cache_) cache_->release_pending(hashes);
  }
  // An id above every id ever indexed is not live: a scheduler's fresh ids (which count up)
  // are told apart without a lookup.
  bool contains(SeqId seq) const override { return seq <= max_indexed_ && index_.contains(seq); }
  std::int64_t num_sequences() const override { return static_cast<std::int64_t>(index_.size()); }
  std::int64_t sequence_tokens(SeqId seq) const override { return get(seq).tokens; }
  // GPU block ids; while the sequence is swapped out, its CPU block ids.
  std::vector<BlockId> block_table(SeqId seq) const override { return get(seq).table; }
  std::int64_t available_blocks() const override { return num_free_blocks(); }
  bool cache_computed_blocks(SeqId seq, std::span<const BlockHash> keys) override;
  std::int32_t block_size() const override { return block_size_; }
  bool caches_prefixes() const override { return cache_ != nullptr; }
  bool can_append_all(std::span<const SeqHandle> group, std::int64_t n) const override;
  MemoryBreakdown breakdown() const override;
  // logical_blocks / physical_blocks is the memory saved by sharing (fork, prefix cache);
  // prefix counters are zero when the prefix cache is off.
  AllocatorStats stats() const override;
  std::vector<BlockMove> take_pending_copies() override;
  // Lower-tier blocks count as cached: they are loaded, not recomputed.
  std::int64_t cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const override;
  const TierStack* tiers() const override { return tiers_.get(); }
  TierTransfer take_tier_transfer() override { return tiers_ ? tiers_->take_transfer() : TierTransfer{}; }
  // Needs the prefix cache (false without it). A remote hit is looked up after the GPU and
  // the tiers, block by block, and taken like a tier hit: a fresh GPU block, cached here.
  bool set_remote_prefix_source(const RemotePrefixSource* source) override;
  RemoteFetch take_remote_fetch() override { return std::exchange(fetched_, RemoteFetch{}); }
  void validate() const override;

  // Paged specifics
  std::int64_t num_blocks() const { return gpu_.num_blocks(); }
  // Blocks a new owner can get now: the free list plus evictable cached blocks and the pages
  // of idle adapters.
  std::int64_t num_free_blocks() const {
    return gpu_.num_free() + released_.size() + (cache_ ? cache_->num_evictable() : 0) +
           adapters_.idle_blocks();
  }
  // How much num_free_blocks() would drop if req were admitted now, holding
  // req.held_tokens(cached) tokens (cache hits on blocks referenced elsewhere cost nothing).
  // Throws AllocatorError as can_admit(req) does.
  std::int64_t blocks_to_admit(const AdmitRequest& req) const {
    check_admission(req, "blocks_to_admit");
    return blocks_needed(req);
  }
  // New blocks append(seq, n) would take now (including a copy-on-write copy).
  std::int64_t blocks_to_append(SeqId seq, std::int64_t n) const;

  bool is_swapped(SeqId seq) const { return get(seq).swapped; }
  // Distinct prompt block hashes held by hold_pending_prefix and not yet released (tracked
  // only by an eviction policy that protects them; else 0).
  std::int64_t num_pending_prefix_hashes() const { return cache_ ? cache_->num_pending() : 0; }

  // Moves every sequence of `group` to the CPU pool; blocks shared inside the group move
  // once. Returns the GPU->CPU moves, or nullopt (nothing changed) when the CPU pool lacks
  // room, counting the CPU tier's blocks as room (they are evicted down first). REQUIRES: every sequence live and GPU-resident; ids distinct.
  std::optional<std::vector<BlockMove>> swap_out(std::span<const SeqId> group);
  // CPU blocks the group holds (what swap_out needed), and whether they fit on the GPU now.
  std::int64_t blocks_to_swap_in(std::span<const SeqId> group) const;
  bool can_swap_in(std::span<const SeqId> group) const {
    return blocks_to_swap_in(group) <= num_free_blocks();
  }
  // Moves a swapped group back; returns the CPU->GPU moves, or nullopt when the GPU lacks
  // room. REQUIRES: every sequence live and swapped.
  std::optional<std::vector<BlockMove>> swap_in(std::span<const SeqId> group);
  std::int64_t num_cpu_blocks() const { return cpu_.num_blocks(); }
  std::int64_t num_free_cpu_blocks() const { return cpu_.num_free(); }

  // ---- LoRA adapter weights (see the header comment). ----
  // Blocks holding adapter weights: the fixed region plus every resident adapter's pages.
  std::int64_t adapter_weight_blocks() const { return region_blocks_ + adapters_.blocks(); }
  std::int64_t adapter_region_blocks() const { return region_blocks_; }
  const AdapterPages& adapter_pages() const { return adapters_; }
  // How much num_free_blocks() drops if pin_adapter(a, blocks) runs now: `blocks` when a is
  // not resident, its pages when it is resident and idle, 0 when it is pinned already.
  std::int64_t adapter_blocks_to_pin(AdapterId a, std::int64_t blocks) const;
  // Pins adapter a for one more user, loading it first into `blocks` new blocks (taken as
  // any new block: free, then evicting cached prefixes, then idle adapters) when it is not
  // resident. Returns true when it loaded a. REQUIRES: blocks >= 1,
  // adapter_blocks_to_pin(a, blocks) <= num_free_blocks().
  bool pin_adapter(AdapterId a, std::int64_t blocks);
  // Drops one pin of a; at none it stays resident, idle, until evicted. REQUIRES: pinned.
  void unpin_adapter(AdapterId a);
  // Idle adapters evicted so far to make room.
  std::int64_t adapter_evictions() const { return adapter_evictions_; }

 private:
  // KvAllocator's admission operations (kv_allocator.h checks req first).
  std::string misuse_prefix(std::string_view op) const override;
  bool do_can_admit(const AdmitRequest& req) const override;
  bool do_can_ever_admit(const AdmitRequest& req) const override;
  std::int64_t do_max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  AdmitResult do_admit(const AdmitRequest& req) override;
  std::int64_t do_unusable_free(const AdmitRequest&) const override { return 0; }

  // Aligned to a cache line, with what every append, run round and run check reads in the
  // first: in a fleet those passes find a sequence cold.
  struct alignas(64) Sequence {
    // ---- The first cache line: read by every append. ----
    SeqId id = 0;
    std::int64_t tokens = 0;
    std::int64_t final_tokens = 0;  // accounting only
    BlockId last = kNoBlock;        // table.back(); kNoBlock while the table is empty
    std::int32_t room = 0;          // free slots of the last block: |table| * B - tokens
    bool live = false;              // false: a free slot
    bool swapped = false;
    bool caching_prompt = false;    // INVARIANT: == !prompt_hashes.empty()
    std::int32_t pending = 0;       // proposed + lookahead slots awaiting verify_proposed (the
                                    // last `pending` of `tokens`)
    std::vector<BlockId> table;     // GPU ids, or CPU ids while swapped
    // ---- The rest. ----
    // Chunked prefill with the prefix cache: the prompt's block hashes while some of its full
    // blocks are still to be appended (empty otherwise). Blocks [0, hashed_blocks) were
    // offered to the cache; INVARIANT: hashed_blocks == min(|prompt_hashes|, committed() / B).
    std::vector<BlockHash> prompt_hashes;
    std::size_t hashed_blocks = 0;
    std::int32_t pending_rejected = 0;   // of `pending`: proposals verification rejects
    std::int32_t pending_lookahead = 0;  // of `pending`: lookahead slots
    // Tokens whose KV is kept: all but the pending ones.
    std::int64_t committed() const { return tokens - pending; }
    // What free() leaves past the first line of a slot it frees, and new_slot relies on (it
    // writes only that line): no table, prompt hashes or pending slots.
    bool empty_past_first_line() const {
      return table.empty() && !caching_prompt && prompt_hashes.empty() && hashed_blocks == 0 && pending == 0 &&
             pending_rejected == 0 && pending_lookahead == 0;
    }
  };

  const Sequence& get(SeqId seq) const;
  Sequence& get(SeqId seq);
  // h's sequence: its slot when the handle is current, else looked up by h.id.
  Sequence& at(SeqHandle h) {
    if (h.slot < slots_.size()) {
      Sequence& s = slots_[h.slot];
      if (s.live && s.id == h.id) return s;
    }
    return get(h.id);
  }
  const Sequence& at(SeqHandle h) const { return const_cast<PagedAllocator*>(this)->at(h); }
  // A fresh slot for new sequence `seq`, indexed, live and empty (its vectors keep the
  // capacity of the slot's last owner). May move every slot: take references after it.
  std::uint32_t new_slot(SeqId seq);
  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + block_size_ - 1) >> block_shift_; }
  // New blocks (copy-on-write included) that appending n tokens to s takes.
  std::int64_t append_cost(SeqId seq, const Sequence& s, std::int64_t n) const;
  // Tokens s can take on append_to's inline path: its last block's free slots when that
  // block is its own and nothing else is due (no swap, no prompt block left to cache).
  std::int32_t inline_room(const Sequence& s) const {
    return !s.swapped && s.pending == 0 && !s.caching_prompt && s.room > 0 && !last_shared(s) ? s.room : 0;
  }
  // Whether s's last block has other references than s's (a write into it copies it first).
  // A pool that shares no block answers without reading the block's entry, cold in a fleet
  // (every owned block then has one reference). REQUIRES: s GPU-resident, with a last block.
  bool last_shared(const Sequence& s) const { return gpu_.shared_blocks() > 0 && gpu_.ref_count(s.last) > 1; }
  // append(seq, n) on s: inline when the tokens fit s's own partly filled last block (a
  // decode, 15 times in 16 with blocks of 16), else append_slow.
  bool append_to(Sequence& s, SeqId seq, std::int64_t n) {
    if (n > 0 && n <= inline_room(s)) {
      const auto w = static_cast<std::int32_t>(n);
      token_states_ += w;
      s.tokens += w;
      s.room -= w;
      if (entries_kept_) gpu_.set_filled(s.last, block_size_ - s.room);  // filled(last) == B - room: the entry unread
      s.final_tokens = std::max(s.final_tokens, s.tokens);
      check_sequence(s);
      return true;
    }
    return append_slow(s, seq, n);
  }
  // PAGESIM_EXPENSIVE_CHECKS builds: s's own identities (table length, last block, room and
  // the last block's fill), O(1), after every operation on it; validate() checks them all.
  void check_sequence([[maybe_unused]] const Sequence& s) const {
#ifdef PAGESIM_EXPENSIVE_CHECKS
    check_sequence_now(s);
#endif
  }
  void check_sequence_now(const Sequence& s) const;
  // Every other append: misuse checks, new blocks, copy-on-write, prompt blocks to cache.
  // `proposing`: grow_proposed's append, which may write behind pending tokens (it sets them).
  bool append_slow(Sequence& s, SeqId seq, std::int64_t n, bool proposing = false);
  // Writes every GPU sequence block's entry from the tables (one reference, the fill its
  // place gives) and keeps the entries from then on: before anything shares, swaps or
  // rewinds a block. No-op once kept.
  void keep_entries();
  // Sets s.last and s.room from s.table and s.tokens.
  void settle_last(Sequence& s) const {
    s.last = s.table.empty() ? kNoBlock : s.table.back();
    s.room = static_cast<std::int32_t>(static_cast<std::int64_t>(s.table.size()) * block_size_ - s.tokens);
  }

  // Hands out a GPU block (never-used first, then as the header says), ref 1, filled 0.
  // REQUIRES: num_free_blocks() > 0.
  BlockId take_gpu_block();
  // single_free_queue: the released never-cached block or the eviction victim, whichever
  // was released first. REQUIRES: !released_.empty() || the cache has an evictable block.
  BlockId take_least_recently_released();
  // Evicts the prefix cache's victim (its hash goes down the offload tiers, if any) and
  // returns it, ref 1, filled 0. REQUIRES: the cache has an evictable block.
  BlockId evict_cached_block();
  // Evicts the least recently used idle adapter: its pages go back to the free list.
  void evict_idle_adapter();
  // Drops one reference to GPU block b; at zero it becomes evictable (if cached) or free.
  void release_gpu_block(BlockId b);
  // release_gpu_block for each block of a freed sequence's table, last block first.
  // tokens_held: the tokens its blocks hold (the sequence's).
  void release_gpu_table(const std::vector<BlockId>& table, std::int64_t tokens_held);
  // Caches the full prompt blocks s has been appended up to. REQUIRES: the cache is on.
  void cache_filled_prompt_blocks(Sequence& s);
  // Prompt tokens served by `hits` leading cached blocks: all but the last token at most.
  std::int64_t cached_tokens_of(const AdmitRequest& req, std::int64_t hits) const;
  // Cache hits for req's prompt: the leading blocks found on the GPU, in a tier or at the
  // remote source, in order; *evictable_hits of them are unreferenced GPU blocks,
  // *fresh_hits in a tier or remote (each takes a fresh GPU block).
  std::int64_t count_prefix_hits(const AdmitRequest& req, std::int64_t* evictable_hits,
                                 std::int64_t* fresh_hits) const;
  // Caches GPU block b under h (unless h is cached) and tells the tiers.
  void cache_block(BlockId b, BlockHash h);
  // blocks_to_admit, req checked already.
  std::int64_t blocks_needed(const AdmitRequest& req) const;
  // validate()'s checks of the tiers against the GPU cache. REQUIRES: tiers_.
  void validate_tiers() const;

  std::int32_t block_size_;
  std::int32_t block_shift_;  // log2(block_size_)
  BlockPool gpu_;
  BlockPool cpu_;
  std::unique_ptr<PrefixCache> cache_;  // null when prefix caching is off
  std::unique_ptr<TierStack> tiers_;    // null without offload tiers (needs cache_)
  const RemotePrefixSource* remote_ = nullptr;  // borrowed; null: local only (needs cache_)
  RemoteFetch fetched_;                 // fetched since the last take_remote_fetch
  std::vector<Sequence> slots_;             // live sequences and free slots
  std::vector<std::uint32_t> free_slots_;   // the slots not live, the last freed on top
  SeqSlotIndex index_;                      // live sequence id -> slot
  SeqId max_indexed_ = 0;          // the largest id index_ ever held (0 before any)
  std::uint32_t newest_slot_ = 0;  // new_slot's last: admit's caller asks for its handle next
  std::vector<BlockMove> pending_copies_;
  // single_free_queue only: never-cached blocks released since start-up, oldest first (ref 0,
  // filled 0, off the pool's free list), and the release time of each cached block (read for
  // the eviction victim). Empty otherwise.
  const bool single_free_queue_;
  ReleasedBlockQueue released_;
  // Whether the GPU pool's entries (references, fill) of the blocks in block tables are
  // kept. Without a prefix cache or a released queue, and until a fork, a swap or a
  // speculative step (keep_entries), every such block is its sequence's alone and holds what
  // its place in the table says: the entries would repeat the tables, so appends and admits
  // write none (in a fleet each is a cold line: a block's take, its fill at every append).
  bool entries_kept_;

  // Incremental counters behind breakdown(): O(1) reads.
  std::int64_t owned_blocks_ = 0;    // GPU blocks with ref_count > 0
  std::int64_t token_states_ = 0;    // Σ filled over owned GPU blocks
  std::int64_t logical_blocks_ = 0;  // Σ block-table lengths of GPU-resident sequences

  // LoRA adapter weights: the fixed region's blocks (ref 1, never freed) and adapter pages.
  std::vector<BlockId> region_;
  std::int64_t region_blocks_ = 0;
  AdapterPages adapters_;
  std::int64_t adapter_evictions_ = 0;
  // Pending proposed slots (speculative decoding), by what verification makes of them.
  std::int64_t proposed_accepted_ = 0, proposed_rejected_ = 0, lookahead_ = 0;
};

}  // namespace pagesim::alloc
