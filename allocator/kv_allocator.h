// KvAllocator: the interface of a KV-cache memory manager.
//
// An allocator owns a pool of capacity_slots() token slots (a slot holds the K and V of one
// token, all layers) and hands them to sequences. A sequence is admitted with its prompt
// (plus, after a recompute preemption, the tokens it had generated), grows a few tokens at a
// time, may be forked (parallel sampling, beam search) and is freed when it finishes or is
// preempted. For accounting only, the allocator is told each sequence's true final length so
// that breakdown() can tell reserved from over-reserved slots.
//
// Every allocator describes its memory in blocks of block_size() token slots: a sequence's
// block table lists the blocks holding its tokens (a contiguous range is a run of
// consecutive ids), so callers need no knowledge of the policy behind the interface.
//
// Expected failures (no room now) are return values: can_* queries and admit/append/fork
// returning false change nothing. Misuse (unknown or duplicate sequence id, double free, a
// malformed AdmitRequest) throws AllocatorError. The operations that take an AdmitRequest
// are this class's own: they check the request once, for every kind, and call the kind's
// do_* (non-virtual interface). Not thread-safe: one simulation drives one allocator.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "allocator/allocator_error.h"
#include "allocator/allocator_stats.h"
#include "allocator/block.h"
#include "allocator/decode_rounds.h"
#include "allocator/layer_group.h"
#include "allocator/memory_breakdown.h"
#include "allocator/proposed_slots.h"
#include "allocator/remote_prefix.h"
#include "allocator/tier_transfer.h"

namespace pagesim::alloc {

class TierStack;

using SeqId = std::uint64_t;     // chosen by the caller; unique among live sequences
using BlockHash = std::uint64_t; // prefix-cache key of one full block (chained, see block_hash.h)

// "sequence <id>": how every allocator's messages name a sequence.
inline std::string seq_name(SeqId seq) { return "sequence " + std::to_string(seq); }

// A live sequence as its owner holds it: its id, and where the allocator keeps its state
// (KvAllocator::handle), so that the per-token calls (grow, can_append_all) find it without
// a lookup by id. An allocator that keeps no such place answers kNoSlot and looks the id up.
// A handle stays valid while its sequence is live (swapping keeps it). Using one whose
// sequence was freed is misuse: it falls back to its id, refused like any id not live (or
// naming the new sequence, if the caller reused the id).
struct SeqHandle {
  static constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();
  SeqId id = 0;
  std::uint32_t slot = kNoSlot;
  friend bool operator==(const SeqHandle&, const SeqHandle&) = default;
};

struct AdmitRequest {
  SeqId seq = 0;
  std::int64_t prompt_tokens = 0;     // prompt length, >= 1
  std::int64_t output_tokens = 0;     // true output length, >= 0 (accounting; `oracle` reservation)
  std::int64_t generated_tokens = 0;  // tokens generated before a recompute preemption, else 0
  // Prefix-cache keys of full blocks of the tokens held at admission, in order: hash i keys
  // tokens [i*B, (i+1)*B) for the allocator's block size B, chained so that equal hashes mean
  // equal prefixes; at most tokens_at_admission() / B of them (the prompt's blocks, and after a
  // recompute preemption those of its generated tokens that cache_computed_blocks cached).
  // Empty: the request takes no part in prefix caching. Copied by a prefix-
  // caching allocator while blocks of the prompt remain to be appended; else read during the
  // call only.
  std::span<const BlockHash> prompt_block_hashes;
  // Chunked prefill: at most this many tokens after the prefix-cache hits are held at
  // admission (the chunk computed now); the rest of prompt + generated tokens is appended
  // later, and a prefix-caching allocator caches each full prompt block as append fills it.
  // The hits themselves never count against it (vLLM v1: the token budget applies to the
  // tokens after the computed blocks). >= 1; default: everything at once.
  std::int64_t max_new_tokens = std::numeric_limits<std::int64_t>::max();
  // True when a recompute-preempted request comes back. Its hits (mostly on the blocks it
  // held itself) are counted apart from first admissions', so that the hit rate measures
  // sharing between requests (PrefixCacheStats::readmission_hit_tokens).
  bool readmission = false;
  // True when the sequence's KV was computed on another replica and is received here
  // (disaggregated prefill/decode). Its prompt was admitted once already, where it was looked
  // up: it counts in no prefix-cache counter here (PrefixCacheStats), and it looks nothing up.
  bool received = false;
  // vLLM v1's rule (KVCacheManager.get_computed_blocks caps the hit at num_tokens - 1, and
  // only whole blocks are ever hit): at most (tokens_at_admission() - 1) / B leading blocks
  // hit, so a prompt of exactly k full blocks recomputes its whole last block. False: every
  // matching block is held and all but the last token are served from it.
  bool whole_block_hits = false;
  // Encoder tokens the request carries (an image's or audio clip's tokens): the keys of a
  // model's cross-attention layers (LayerGroupKind::kCrossAttention), held from admission to
  // free and never grown. 0: none (a text-only request, or a model without cross-attention).
  // Allocators without cross-attention layers (every single-group one) ignore it.
  std::int64_t encoder_tokens = 0;

  std::int64_t tokens_at_admission() const { return prompt_tokens + generated_tokens; }
  std::int64_t final_tokens() const { return prompt_tokens + output_tokens; }
  // Tokens the sequence holds after admission when `cached` of them were found in the cache.
  std::int64_t held_tokens(std::int64_t cached) const {
    const std::int64_t total = tokens_at_admission();
    return max_new_tokens >= total - cached ? total : cached + max_new_tokens;
  }
};

struct AdmitResult {
  bool admitted = false;
  std::int64_t cached_tokens = 0;  // prompt tokens whose KV was found in the prefix cache
  std::int64_t held_tokens = 0;    // tokens the sequence holds now: cached + computed in its
                                   // first chunk (all of prompt + generated when not chunked)
};

class KvAllocator {
 public:
  virtual ~KvAllocator() = default;
  KvAllocator() = default;
  KvAllocator(const KvAllocator&) = delete;
  KvAllocator& operator=(const KvAllocator&) = delete;

  // A short description of the policy, e.g. "paged(block=16)" or "contiguous(buddy,pow2)".
  virtual std::string name() const = 0;
  virtual std::int64_t capacity_slots() const = 0;
  // Token slots per block: the paged block size, the buddy placement unit, or 1 for
  // slot-granular placement. capacity_slots() is a multiple of it.
  virtual std::int32_t block_size() const = 0;
  // True when admit() looks prompts up in a prefix cache (AdmitRequest::prompt_block_hashes
  // are used); the hashes must then key blocks of block_size() tokens.
  virtual bool caches_prefixes() const = 0;

  // ---- Admission: the operations that take an AdmitRequest. ----
  // Each checks req first, alike for every kind, and throws AllocatorError when it is
  // malformed: prompt_tokens < 1; output, generated or encoder tokens < 0; max_new_tokens
  // < 1; prompt + output or generated tokens past 64 bits; or, where caches_prefixes(), more
  // prompt_block_hashes than tokens_at_admission() / block_size(). can_admit and admit also
  // throw when req.seq is live. Then the kind answers (its do_*), and may refuse more.

  // True if admit(req) would succeed now. REQUIRES: req.seq is not live.
  bool can_admit(const AdmitRequest& req) const {
    check_admission(req, "can_admit");
    return do_can_admit(req);
  }
  // True if req could be admitted into an empty pool; false means it never fits
  // (longer than max_seq_len, or larger than the whole pool).
  bool can_ever_admit(const AdmitRequest& req) const {
    check_request(req, "can_ever_admit");
    return do_can_ever_admit(req);
  }
  // The setting that keeps req out when can_ever_admit(req) is false, named as the
  // AllocatorSpec field (make_allocator.h) a user would raise: "capacity_slots" (the pool,
  // the default), "max_seq_len" or "max_chunk_blocks". REQUIRES: !can_ever_admit(req).
  std::string limiting_setting(const AdmitRequest& req) const {
    check_request(req, "limiting_setting");
    return do_limiting_setting(req);
  }
  // Most slots the request may hold at once when its prompt is forked into `width`
  // sequences (parallel sampling, beam search) that each grow to req.final_tokens() - 1
  // held tokens (the last token's KV is never stored): paged pools share the prompt's full
  // blocks, contiguous policies hold one range per sequence. REQUIRES: width >= 1.
  std::int64_t max_group_slots(const AdmitRequest& req, std::int32_t width) const {
    check_request(req, "max_group_slots");
    return do_max_group_slots(req, width);
  }
  // Allocates room for req.held_tokens(cached) tokens (and, for contiguous policies, the
  // reservation). On failure nothing changes. REQUIRES: req.seq is not live.
  AdmitResult admit(const AdmitRequest& req) {
    check_admission(req, "admit");
    return do_admit(req);
  }

  // True if append(seq, n) would succeed now. REQUIRES: seq is live, n >= 0.
  virtual bool can_append(SeqId seq, std::int64_t n) const = 0;
  // True if every sequence of `group` could grow by n tokens at once (they may compete for
  // the same free blocks). REQUIRES: each is live, n >= 0.
  virtual bool can_append_all(std::span<const SeqHandle> group, std::int64_t n) const = 0;
  // Grows seq by n tokens. False (and no change) when the room cannot be had: a paged pool
  // with too few free blocks, or a contiguous range that the tokens would outgrow. The test
  // and the growth are one pass: append(seq, n) is true exactly when can_append(seq, n) was.
  virtual bool append(SeqId seq, std::int64_t n) = 0;

  // The handle of live sequence seq (one lookup by id; keep it for the per-token calls).
  // Default: no slot (the id is looked up each time). REQUIRES: seq is live.
  virtual SeqHandle handle(SeqId seq) const { return {.id = seq}; }
  // append(h.id, n), without the lookup by id where h has a slot: the per-token path.
  virtual bool grow(SeqHandle h, std::int64_t n) { return append(h.id, n); }

  // ---- Decode runs: the engine advancing identical decode iterations at once. ----
  // Fills *out with the most rounds r <= max_rounds (a round: grow(h, 1) for each h of
  // `seqs`, in order) such that every grow succeeds and changes only what decode_rounds.h
  // lists: no copy-on-write, no prefix-cache or tier traffic, no eviction, no pending copy,
  // unusable_free() and stats() but the block counts unchanged; and breakdown().free stays
  // >= keep_free_slots after every round. out->rounds = 0 where nothing can be promised (the
  // default: allocators that do not support runs). REQUIRES: seqs live and distinct.
  virtual void decode_run_rounds(std::span<const SeqHandle> seqs, std::int64_t keep_free_slots,
                                 std::int64_t max_rounds, DecodeRounds* out) const {
    (void)seqs;
    (void)keep_free_slots;
    (void)max_rounds;
    out->rounds = 0;
  }
  // A hint: brings the records of `seqs` towards the cache, where an engine is about to pass
  // over a batch that the work in between has evicted. Changes nothing; the default does
  // nothing. A handle that is not current costs a fetch in vain, nothing else.
  virtual void prefetch(std::span<const SeqHandle> seqs) const { (void)seqs; }
  // `rounds` such rounds at once: the state ends as the rounds one by one would leave it.
  // REQUIRES: rounds <= the decode_run_rounds(seqs, ...) promised, with nothing changed since.
  virtual void grow_rounds(std::span<const SeqHandle> seqs, std::int64_t rounds) {
    for (std::int64_t i = 0; i < rounds; ++i)
      for (const SeqHandle& h : seqs) grow(h, 1);
  }

  // ---- Speculative decoding: slots of proposed tokens (proposed_slots.h). ----
  // True when this allocator holds proposed tokens (grow_proposed, verify_proposed); false:
  // both throw AllocatorError (the default).
  virtual bool holds_proposed_slots() const { return false; }
  // Grows h by 1 + p.pending() slots in one pass: the newest token's (as grow(h, 1)) and the
  // step's proposed and lookahead slots, which breakdown() shows as proposed_accepted,
  // proposed_rejected and lookahead until verify_proposed(h). False, changing nothing, when
  // the room cannot be had. REQUIRES: h live and resident, nothing pending on it,
  // 0 <= p.rejected <= p.proposed, p.lookahead >= 0.
  virtual bool grow_proposed(SeqHandle h, const ProposedSlots& p) {
    (void)h;
    (void)p;
    throw AllocatorError(name() + " holds no proposed (speculative) tokens");
  }
  // Verification of h's pending step: the accepted proposals become token states, the
  // rejected and lookahead slots are freed (a block left empty goes back to the pool). Nothing
  // pending: nothing changes. REQUIRES: h live.
  virtual void verify_proposed(SeqHandle h) {
    (void)h;
    throw AllocatorError(name() + " holds no proposed (speculative) tokens");
  }

  // Creates `child` as a copy of `parent` (same tokens, same final length). Paged policies
  // share every block (copy-on-write later); contiguous policies need a second range and
  // return false when none can be placed. REQUIRES: parent live, child not live.
  virtual bool fork(SeqId parent, SeqId child) = 0;

  // Releases seq's memory, pending proposed slots included. REQUIRES: seq is live.
  virtual void free(SeqId seq) = 0;

  // The scheduler's waiting queue, as far as the prefix cache cares: a request whose prompt
  // has these block hashes (AdmitRequest::prompt_block_hashes, all of them) joined the queue
  // (hold) or left it (release). An eviction policy may keep the blocks they will hit
  // (`lru_protect_waiting`); every other allocator and policy ignores the calls. Each
  // release matches an earlier hold of the same hashes (else AllocatorError where they are
  // tracked). The span is read during the call only. O(hashes) expected.
  virtual void hold_pending_prefix(std::span<const BlockHash>) {}
  virtual void release_pending_prefix(std::span<const BlockHash>) {}

  // Caches the blocks of `seq` full of computed tokens under keys[i] for block i, those not
  // cached already, as an engine that hashes every full block it computes does (vLLM v1:
  // Request.block_hashes grows with the output tokens and KVCacheManager.allocate_slots caches
  // each block once full). Called on a sequence about to be freed by a recompute preemption,
  // so that its re-admission finds them. True when the allocator caches them; false (the
  // default, and without a prefix cache): nothing changed. keys is read during the call only.
  // REQUIRES: seq live and resident; keys chained as prompt_block_hashes.
  virtual bool cache_computed_blocks(SeqId seq, std::span<const BlockHash> keys) {
    (void)seq;
    (void)keys;
    return false;
  }

  virtual bool contains(SeqId seq) const = 0;
  virtual std::int64_t num_sequences() const = 0;
  // Tokens seq holds now. REQUIRES: seq is live.
  virtual std::int64_t sequence_tokens(SeqId seq) const = 0;
  // The blocks holding seq's tokens, in order: ceil(sequence_tokens(seq) / block_size())
  // ids; token t lives in block table[t / block_size()] at slot t % block_size().
  // REQUIRES: seq is live and resident (not swapped out).
  virtual std::vector<BlockId> block_table(SeqId seq) const = 0;
  // The table a paged-attention kernel reading this pool must be checked against, and which
  // keys it holds: a layer-group pool with a sliding-window or chunked-local table names that
  // table — the one whose dropped pages (kNoBlock) a kernel must not read — with its kind and
  // window W / chunk C (layer_group.h); every other allocator its block_table(), kFull.
  // Constant for the allocator's life.
  struct KernelTable {
    LayerGroupKind keep = LayerGroupKind::kFull;
    std::int64_t window_tokens = 0;  // W or C; 0 for kFull
  };
  virtual KernelTable kernel_table() const { return {}; }
  // Sequence seq's entries of that table, as block_table() gives its own (kNoBlock where a
  // page was dropped). REQUIRES: as block_table().
  virtual std::vector<BlockId> kernel_block_table(SeqId seq) const { return block_table(seq); }
  // Block tables name ids in [0, block_id_space()): capacity_slots() / block_size() where ids
  // count blocks of the pool; the layer-group pools, whose capacity is not in blocks, say
  // their own (grouped: the large-page id space; vattention: its virtual tokens).
  virtual std::int64_t block_id_space() const { return capacity_slots() / block_size(); }

  // What an engine's own scheduler would log of the pool (engine-parity step records,
  // sim/metrics/step_recorder.h). available_blocks(): the blocks a new owner can get now,
  // free ones and unreferenced cached ones it would evict (vLLM's
  // BlockPool.get_num_free_blocks; SGLang's available + evictable size); by default the
  // free slots in whole blocks. group_blocks(seq): the blocks seq holds in each KV-cache group,
  // in group order, blocks dropped out of a sliding window not counted; by default one group,
  // block_table(seq)'s length. REQUIRES (group_blocks): as block_table().
  virtual std::int64_t available_blocks() const { return breakdown().free / block_size(); }
  virtual std::vector<std::int64_t> group_blocks(SeqId seq) const {
    return {static_cast<std::int64_t>(block_table(seq).size())};
  }

  // Where every slot is now; O(1) from incremental counters.
  virtual MemoryBreakdown breakdown() const = 0;
  // Block and prefix-cache statistics; O(1).
  virtual AllocatorStats stats() const = 0;
  // Hands over the block copies (copy-on-write) queued since the last call, in order; the
  // kernels would perform them before the next iteration reads the blocks.
  virtual std::vector<BlockMove> take_pending_copies() = 0;
  // Free slots that cannot serve `head` (external fragmentation seen by the head of the
  // waiting queue): for contiguous placement, free slots in holes too small for its range;
  // 0 for paged pools, where any free block serves anyone.
  std::int64_t unusable_free(const AdmitRequest& head) const {
    check_request(head, "unusable_free");
    return do_unusable_free(head);
  }
  // Prompt tokens a request with these prefix-cache keys would find cached now: the leading
  // keys present, times block_size() (what a cache-aware router asks each replica). Changes
  // nothing (no hit is counted, no recency touched); `prompt_block_hashes` is read during the
  // call only. 0 for allocators that cache no prefixes.
  virtual std::int64_t cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const {
    (void)prompt_block_hashes;
    return 0;
  }

  // The offload tiers below the prefix cache (allocator/tier/tier_stack.h): their settings
  // and counters. Null when none are configured (every allocator but a paged one given
  // tiers). Valid as long as the allocator.
  virtual const TierStack* tiers() const { return nullptr; }
  // The tier loads and stores since the last call, priced, and forgets them: what the engine
  // charges the iteration it has just planned. Empty without tiers.
  virtual TierTransfer take_tier_transfer() { return {}; }

  // Lets admission copy in prompt blocks `source` holds (a global cache, remote_prefix.h):
  // the leading blocks this pool (GPU and tiers) lacks and the source holds are fetched into
  // fresh blocks and cached here; hits on them count in stats().prefix like local hits.
  // cached_prefix_tokens() stays local. Null: local only (the default). Returns false when
  // this allocator cannot fetch (only a paged pool with a prefix cache can). `source` is
  // borrowed and must outlive the allocator or be replaced.
  virtual bool set_remote_prefix_source(const RemotePrefixSource* source) {
    (void)source;
    return false;
  }
  // What admission fetched from the remote source since the last call, and forgets it: the
  // engine charges its transfer to the iteration it has just planned. Empty without a source.
  virtual RemoteFetch take_remote_fetch() { return {}; }

  // Checks every internal identity by a full scan; throws InvariantViolation naming the
  // first one broken. O(pool + sequences): for tests, not the per-iteration path.
  virtual void validate() const = 0;

 protected:
  // How this kind's AllocatorError messages about operation `op` begin, as its other misuse
  // messages do: "paged allocator", or `op` itself. Called on the failure path only.
  virtual std::string misuse_prefix(std::string_view op) const = 0;
  // Throws AllocatorError (misuse_prefix(op), then req.seq) when req is malformed, as the
  // admission operations above define it: for a kind's own operations taking a request.
  void check_request(const AdmitRequest& req, std::string_view op) const;
  // check_request, and req.seq must not be live: for a kind's own admissions.
  void check_admission(const AdmitRequest& req, std::string_view op) const;

 private:
  // The kind's part of the admission operation of the same name; req is checked already.
  virtual bool do_can_admit(const AdmitRequest& req) const = 0;
  virtual bool do_can_ever_admit(const AdmitRequest& req) const = 0;
  virtual std::string do_limiting_setting(const AdmitRequest&) const { return "capacity_slots"; }
  virtual std::int64_t do_max_group_slots(const AdmitRequest& req, std::int32_t width) const = 0;
  virtual AdmitResult do_admit(const AdmitRequest& req) = 0;
  virtual std::int64_t do_unusable_free(const AdmitRequest& head) const = 0;
};

}  // namespace pagesim::alloc
