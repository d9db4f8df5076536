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
//
// Invariants (validate() checks all of them):
//   free list + owned + evictable-cached == num_blocks         (every block in one state)
//   ref_count(b) == number of occurrences of b in GPU block tables
//   a block on the free list has ref_count 0 and is not cached
//   filled(b) == min(B, tokens - i*B) for every sequence holding b at index i
//   token_states == Σ filled over owned blocks; breakdown classes sum to capacity
//   the same identities for the CPU pool and swapped sequences
// Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/paged/block_pool.h"
#include "allocator/paged/eviction_policy.h"
#include "allocator/paged/prefix_cache.h"

namespace pagesim::alloc {

struct PagedAllocatorSettings {
  std::int64_t num_blocks = 0;      // GPU pool size in blocks (> 0)
  std::int32_t block_size = 16;     // tokens per block, a power of two; larger = fewer table
                                    // entries but more rounding waste per sequence
  std::int64_t num_cpu_blocks = 0;  // CPU swap pool in blocks; 0 disables swapping
  bool prefix_cache = false;        // reuse full prompt blocks across requests by hash
  EvictionKind eviction = EvictionKind::kLru;  // which cached block to reuse first
};

class PagedAllocator final : public KvAllocator {
 public:
  // Throws AllocatorError on num_blocks <= 0, a block size that is not a power of two,
  // or num_cpu_blocks < 0.
  explicit PagedAllocator(const PagedAllocatorSettings& settings);

  // KvAllocator
  std::string name() const override;
  std::int64_t capacity_slots() const override { return gpu_.num_blocks() * block_size_; }
  bool can_admit(const AdmitRequest& req) const override;
  bool can_ever_admit(const AdmitRequest& req) const override;
  std::int64_t max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  AdmitResult admit(const AdmitRequest& req) override;
  bool can_append(SeqId seq, std::int64_t n) const override;
  bool append(SeqId seq, std::int64_t n) override;
  bool fork(SeqId parent, SeqId child) override;  // always succeeds for a GPU-resident parent
  void free(SeqId seq) override;
  void hold_pending_prefix(std::span<const BlockHash> hashes) override {
    if (cache_) cache_->hold_pending(hashes);
  }
  void release_pending_prefix(std::span<const BlockHash> hashes) override {
    if (cache_) cache_->release_pending(hashes);
  }
  bool contains(SeqId seq) const override { return seqs_.count(seq) != 0; }
  std::int64_t num_sequences() const override { return static_cast<std::int64_t>(seqs_.size()); }
  std::int64_t sequence_tokens(SeqId seq) const override { return get(seq).tokens; }
  // GPU block ids; while the sequence is swapped out, its CPU block ids.
  std::vector<BlockId> block_table(SeqId seq) const override { return get(seq).table; }
  std::int32_t block_size() const override { return block_size_; }
  bool caches_prefixes() const override { return cache_ != nullptr; }
  bool can_append_all(std::span<const SeqId> group, std::int64_t n) const override;
  MemoryBreakdown breakdown() const override;
  // logical_blocks / physical_blocks is the memory saved by sharing (fork, prefix cache);
  // prefix counters are zero when the prefix cache is off.
  AllocatorStats stats() const override;
  std::vector<BlockMove> take_pending_copies() override;
  std::int64_t unusable_free(const AdmitRequest&) const override { return 0; }
  std::int64_t cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const override;
  void validate() const override;

  // Paged specifics
  std::int64_t num_blocks() const { return gpu_.num_blocks(); }
  // Blocks a new owner can get now: the free list plus evictable cached blocks.
  std::int64_t num_free_blocks() const {
    return gpu_.num_free() + (cache_ ? cache_->num_evictable() : 0);
  }
  // How much num_free_blocks() would drop if req were admitted now, holding
  // req.held_tokens(cached) tokens (cache hits on blocks referenced elsewhere cost nothing).
  std::int64_t blocks_to_admit(const AdmitRequest& req) const;
  // New blocks append(seq, n) would take now (including a copy-on-write copy).
  std::int64_t blocks_to_append(SeqId seq, std::int64_t n) const;

  bool is_swapped(SeqId seq) const { return get(seq).swapped; }
  // Distinct prompt block hashes held by hold_pending_prefix and not yet released (tracked
  // only by an eviction policy that protects them; else 0).
  std::int64_t num_pending_prefix_hashes() const { return cache_ ? cache_->num_pending() : 0; }

  // Moves every sequence of `group` to the CPU pool; blocks shared inside the group move
  // once. Returns the GPU->CPU moves, or nullopt (nothing changed) when the CPU pool lacks
  // room. REQUIRES: every sequence live and GPU-resident; ids distinct.
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

 private:
  struct Sequence {
    std::vector<BlockId> table;  // GPU ids, or CPU ids while swapped
    std::int64_t tokens = 0;
    std::int64_t final_tokens = 0;  // accounting only
    bool swapped = false;
    // Chunked prefill with the prefix cache: the prompt's block hashes while some of its full
    // blocks are still to be appended (empty otherwise). Blocks [0, hashed_blocks) were
    // offered to the cache; INVARIANT: hashed_blocks == min(|prompt_hashes|, tokens / B).
    std::vector<BlockHash> prompt_hashes;
    std::size_t hashed_blocks = 0;
  };

  const Sequence& get(SeqId seq) const;
  Sequence& get(SeqId seq);
  static std::int64_t blocks_for(std::int64_t tokens, std::int32_t bs) { return (tokens + bs - 1) / bs; }
  // New blocks (copy-on-write included) that appending n tokens to s takes.
  std::int64_t append_cost(SeqId seq, const Sequence& s, std::int64_t n) const;

  // Hands out a GPU block (free list first, then the eviction victim), ref 1, filled 0.
  // REQUIRES: num_free_blocks() > 0.
  BlockId take_gpu_block();
  // Drops one reference to GPU block b; at zero it becomes evictable (if cached) or free.
  void release_gpu_block(BlockId b);
  // Caches the full prompt blocks s has been appended up to. REQUIRES: the cache is on.
  void cache_filled_prompt_blocks(Sequence& s);
  // Prompt tokens served by `hits` leading cached blocks: all but the last token at most.
  std::int64_t cached_tokens_of(const AdmitRequest& req, std::int64_t hits) const;
  // Cache hits for req's prompt: the leading blocks found, in order.
  std::int64_t count_prefix_hits(const AdmitRequest& req, std::int64_t* evictable_hits) const;
  void check_request(const AdmitRequest& req) const;

  std::int32_t block_size_;
  BlockPool gpu_;
  BlockPool cpu_;
  std::unique_ptr<PrefixCache> cache_;  // null when prefix caching is off
  std::unordered_map<SeqId, Sequence> seqs_;
  std::vector<BlockMove> pending_copies_;

  // Incremental counters behind breakdown(): O(1) reads.
  std::int64_t owned_blocks_ = 0;    // GPU blocks with ref_count > 0
  std::int64_t token_states_ = 0;    // Σ filled over owned GPU blocks
  std::int64_t logical_blocks_ = 0;  // Σ block-table lengths of GPU-resident sequences
};

}  // namespace pagesim::alloc
