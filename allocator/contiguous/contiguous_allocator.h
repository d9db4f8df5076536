// ContiguousAllocator: the pre-paging way to hold KV cache, one contiguous range per sequence.
//
// At admission a sequence gets ONE range of slots, sized by a ReservationPolicy (how much
// output to plan for) and placed by a Placement (buddy, first_fit or best_fit). The range
// never grows or moves: append() succeeds only while the tokens fit in the range actually
// held (they may use its rounding slack, never more). fork() gives the child a second range
// of the same size holding a copy of the parent's tokens. This models Orca and the systems the
// vLLM paper compares against, with real external fragmentation between ranges.
//
// Accounting: each sequence's range is split by classify_allocation(current, final,
// reservation, range) and the per-class sums are kept as running totals, so breakdown() is
// O(1). If a sequence holds more tokens than its declared final length (a caller that lets it
// run on), its final length counts as its current length: the classes still sum to capacity.
//
// Costs: admit/fork/free O(log n) in the number of free holes or chunks; append, can_append
// and breakdown O(1) with no allocation. validate() is a full scan, for tests.
// Expected failures (no room) are return values; misuse throws AllocatorError (see
// kv_allocator.h). Owns its placement and sequence table; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "allocator/contiguous/contiguous_policy.h"
#include "allocator/contiguous/placement.h"
#include "allocator/contiguous/reservation_policy.h"
#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

// The pool a ContiguousAllocator lays out, and its policy (contiguous_policy.h).
struct ContiguousSettings : ContiguousPolicy {
  // Pool size in token slots; >= 1 (buddy: a multiple of block_size). Default: the vLLM
  // paper's OPT-13B on one A100-40GB, 983 blocks of 16 = 15,728 slots.
  std::int64_t capacity_slots = 15'728;
  // buddy only: slots per block, the buddy allocator's unit; a power of two. Larger blocks
  // mean fewer chunks to manage but more rounding. first_fit / best_fit ignore it (slot
  // granularity).
  std::int64_t block_size = 16;
  // Longest sequence the model serves, in tokens (>= 1); caps every reservation, and a
  // request holding more tokens than this at admission is never admitted.
  std::int64_t max_seq_len = 2048;
};

class ContiguousAllocator final : public KvAllocator {
 public:
  // Throws AllocatorError on a bad setting, naming it and what was expected.
  explicit ContiguousAllocator(const ContiguousSettings& settings);
  ~ContiguousAllocator() override;

  // "contiguous(<placement>,<reservation>)", e.g. "contiguous(buddy,pow2)".
  std::string name() const override;
  std::int64_t capacity_slots() const override { return placement_->capacity_slots(); }
  // The buddy placement's block (ranges are block-aligned); 1 for first/best fit.
  std::int32_t block_size() const override;
  bool caches_prefixes() const override { return false; }

  // Misuse throws AllocatorError naming the operation: a malformed AdmitRequest (as
  // kv_allocator.h says, reservation_slots and range_slots too), a sequence (not) live
  // against a REQUIRES, a token count n < 0.
  bool can_append(SeqId seq, std::int64_t n) const override;
  // Ranges are private to their sequence: each grows inside its own.
  bool can_append_all(std::span<const SeqHandle> group, std::int64_t n) const override;
  bool append(SeqId seq, std::int64_t n) override;
  bool fork(SeqId parent, SeqId child) override;
  void free(SeqId seq) override;

  bool contains(SeqId seq) const override { return sequences_.contains(seq); }
  std::int64_t num_sequences() const override {
    return static_cast<std::int64_t>(sequences_.size());
  }
  std::int64_t sequence_tokens(SeqId seq) const override;
  // Consecutive ids from range_of(seq).offset / block_size().
  std::vector<BlockId> block_table(SeqId seq) const override;

  MemoryBreakdown breakdown() const override;
  // All zero: ranges share no blocks and cache no prefixes.
  AllocatorStats stats() const override { return {}; }
  // Always empty: ranges are never shared, so nothing is copied on write.
  std::vector<BlockMove> take_pending_copies() override { return {}; }
  void validate() const override;

  const ContiguousSettings& settings() const { return settings_; }
  // The placement policy, for inspection (free chunks, holes). Valid as long as *this.
  const Placement& placement() const { return *placement_; }
  // The range seq holds. REQUIRES: seq is live.
  SlotRange range_of(SeqId seq) const;
  // The reservation for req before placement rounding: max(tokens_at_admission,
  // min(prompt + estimated output, max_seq_len)).
  std::int64_t reservation_slots(const AdmitRequest& req) const;
  // The size of the range admit(req) would take: the reservation rounded by the placement.
  std::int64_t range_slots(const AdmitRequest& req) const;

 private:
  struct Sequence {
    SlotRange range;                // INVARIANT: a range handed out by placement_ and held
    std::int64_t tokens = 0;        // INVARIANT: 1 <= tokens <= range.slots
    std::int64_t final_tokens = 0;  // declared prompt + true output (accounting only)
    std::int64_t reservation = 0;   // INVARIANT: 1 <= reservation <= range.slots
  };

  static MemoryBreakdown classify(const Sequence& s);
  void add_to_totals(const Sequence& s);
  void remove_from_totals(const Sequence& s);
  // KvAllocator's admission operations (kv_allocator.h checks req first).
  std::string misuse_prefix(std::string_view op) const override;
  bool do_can_admit(const AdmitRequest& req) const override;
  bool do_can_ever_admit(const AdmitRequest& req) const override;
  // max_seq_len when the request is longer; else max_chunk_blocks when the placement's
  // largest range (buddy: max_chunk_blocks blocks) is below the pool; else capacity_slots.
  std::string do_limiting_setting(const AdmitRequest& req) const override;
  // width × the range of a fresh admission: forks copy the whole range.
  std::int64_t do_max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  // Never finds cached tokens: contiguous ranges take no part in prefix caching.
  AdmitResult do_admit(const AdmitRequest& req) override;
  // Free slots in holes too small for head's range (buddy: in free chunks of an order below
  // the one head needs); all free slots if head can never be admitted. Buddy O(orders),
  // fit O(log holes).
  std::int64_t do_unusable_free(const AdmitRequest& head) const override;
  // Unchecked forms of reservation_slots() and can_ever_admit(). REQUIRES: check_request.
  std::int64_t reservation_of(const AdmitRequest& req) const;
  bool ever_fits(const AdmitRequest& req) const;
  // The live sequence `seq`; throws AllocatorError naming `op` when it is not live.
  const Sequence& live(SeqId seq, const char* op) const;
  Sequence& live(SeqId seq, const char* op);
  void check_not_live(SeqId seq, const char* op) const;
  // validate() minus the placement's own checks.
  void validate_own() const;
  void check_expensive() const;

  ContiguousSettings settings_;
  std::unique_ptr<Placement> placement_;
  std::unordered_map<SeqId, Sequence> sequences_;
  // Per-class sums of classify() over sequences_; `free` and `cached_free` stay 0.
  // INVARIANT: used_.allocated() = sum of range sizes = capacity - placement_->free_slots().
  MemoryBreakdown used_;
};

}  // namespace pagesim::alloc
