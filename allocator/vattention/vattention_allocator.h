// VattentionAllocator: vAttention's KV manager — virtually contiguous KV per request, physical
// pages mapped on demand (Prabhu et al., ASPLOS'25, arXiv 2405.04437).
//
// The model's KV lives in virtual buffers laid out by VattentionLayout (vattention_layout.h):
// per layer a K and a V buffer of max_batch_size rows, a row per request slot (the paper's
// reqId, §5.1) sized for max_seq_len tokens. Virtual memory is never short; what is short is
// the pool of physical pages of page_bytes. A request's buffers map pages from the start of
// its row as its tokens arrive — exactly VattentionLayout::pages_per_buffer(g, tokens) in each
// buffer of group g — so the only waste is the unfilled end of each buffer's last page
// (`rounding`), and, for sliding-window and chunked groups, the keys that left the window but
// stay mapped (`out_of_window`: vAttention maps and unmaps only at the end of a row).
//
// Slots and reuse. At most max_batch_size requests are live (the paper's maximum batch size:
// the number of rows). With deferred_reclamation (the paper's §6.2, on by default as in the
// authors' implementation, microsoft/vattention vattention/utils.h `deferred_reclaim`), a
// finished request's pages stay mapped in its slot and a new request placed there reuses them
// without mapping calls; pages are unmapped only when a mapping finds the free pool short
// ("reclaim on demand": slots from the highest down give back every page beyond what their
// current request needs, vattention.cu reclaim_kvblocks_on_demand). A new request takes the
// free slot that retains the fewest pages still covering its tokens in every group, else the
// free slot that retains the most (then the lowest slot): the paper's best-fit choice of a
// reqId (vattention.cu alloc_new_batch_idx) made total. Without deferred reclamation free()
// unmaps everything at once. Either way retained pages are reclaimable at any moment, so they
// never keep a request out: admission and growth succeed iff the pages that live requests
// need fit in the pool. The paper's eager allocation (mapping a step ahead in a background
// thread, §6.2) hides mapping latency and maps only reclaimable pages; it is not modelled.
//
// Unit: bytes. capacity_slots() = pool pages × page_bytes; every breakdown class is in bytes:
//   token_states, out_of_window, recurrent_state, rounding  as VattentionLayout::classify
//                  splits each live request's mapped pages
//   reserved, over_reserved  0: nothing is mapped ahead of a token
//   free           pages no live request needs: unmapped, or retained by a slot for reuse
//   cached_free    (inside free) the retained ones: mapped, holding no live KV, reclaimed on
//                  demand — the deferred-reclamation analogue of cached prefix blocks
// so the classes are exact integers summing to capacity, and shares of capacity are byte shares.
//
// block_table(): the kernel reads rows, not block tables; the table is the contiguous virtual
// view, block_size() = 1 token: token t of the request in slot s has id s × max_seq_len + t,
// its row of the virtual tensor [max_batch_size, max_seq_len, ...]. Ids lie in
// [0, virtual_tokens()).
//
// fork() gives the child a slot of its own and copies the parent's mapped rows (vAttention
// shares no pages between requests); take_pending_copies() stays empty: the copy is a
// contiguous memcpy, not a block move. No prefix caching.
//
// Invariants (validate() checks them by a full scan):
//   Σ over slots of mapped pages + free pages == pool pages
//   a live request's slot maps at least pages_per_buffer(g, tokens) in every buffer of every
//   group and at most its row (max_pages); without deferred reclamation, exactly that, and a
//   free slot maps nothing
//   needed pages (the counter) == Σ over live requests of request_pages(tokens) <= pool pages
//   running breakdown == Σ classify over live requests; classes sum to capacity
//   slots and sequences correspond one to one
// Costs: append, can_append O(groups), no allocation; admit and fork O(slots × groups) (slot
// choice); a mapping that finds the free pool short scans the slots once. Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "allocator/kv_allocator.h"
#include "allocator/vattention/vattention_layout.h"

namespace pagesim::alloc {

struct VattentionSettings {
  // The model's layer groups, per GPU (after tensor parallelism); at least one.
  LayerGroups groups;
  // Physical memory for KV, bytes; the pool is floor(pool_bytes / page_bytes) pages (>= 1).
  std::int64_t pool_bytes = 0;
  // Physical page size, bytes, a power of two. Smaller pages waste less per request (at most
  // about a page per buffer) but cost more mapping calls; 2 MiB works on stock CUDA, 64/128/256
  // KiB need the paper's modified driver (vattention_layout.h, vattention_pages).
  std::int64_t page_bytes = vattention_pages::k2MiB;
  // Request slots (rows of the virtual buffers): the most requests live at once, >= 1.
  std::int64_t max_batch_size = 256;
  // Tokens a row holds (the model's maximum context), >= 1: a request never grows past it.
  std::int64_t max_seq_len = 2048;
  // Keep a finished request's pages mapped in its slot for the next request there (§6.2).
  // Changes which pages are mapped, not what fits.
  bool deferred_reclamation = true;
};

// Page-mapping counters since construction (what the paper's latency optimizations save).
struct VattentionCounters {
  std::int64_t pages_mapped = 0;    // pages mapped into a row (mapping calls, one page each)
  std::int64_t pages_unmapped = 0;  // pages unmapped: at free, or reclaimed from a slot
  std::int64_t pages_reused = 0;    // retained pages a new request (or fork child) took over
};

class VattentionAllocator final : public KvAllocator {
 public:
  // Throws AllocatorError naming a bad setting (and VattentionLayout's errors).
  explicit VattentionAllocator(const VattentionSettings& settings);

  // "vattention(page=2MiB,slots=256)".
  std::string name() const override;
  // Bytes: pool pages × page_bytes.
  std::int64_t capacity_slots() const override { return total_pages_ * layout_.page_bytes(); }
  // 1: block tables are the contiguous virtual view (see above).
  std::int32_t block_size() const override { return 1; }
  bool caches_prefixes() const override { return false; }

  // Misuse throws AllocatorError naming the operation: a malformed AdmitRequest (as
  // kv_allocator.h says), a sequence (not) live against a REQUIRES, n < 0.
  bool can_append(SeqId seq, std::int64_t n) const override;
  // The group's new pages together fit the pool, and each stays within its row.
  bool can_append_all(std::span<const SeqHandle> group, std::int64_t n) const override;
  // False (nothing changes) past max_seq_len or when the new pages cannot be had.
  bool append(SeqId seq, std::int64_t n) override;
  bool fork(SeqId parent, SeqId child) override;
  void free(SeqId seq) override;

  bool contains(SeqId seq) const override { return sequences_.contains(seq); }
  std::int64_t num_sequences() const override { return static_cast<std::int64_t>(sequences_.size()); }
  std::int64_t sequence_tokens(SeqId seq) const override;
  // slot(seq) × max_seq_len + t for t in [0, tokens): the contiguous virtual view.
  std::vector<BlockId> block_table(SeqId seq) const override;
  std::int64_t block_id_space() const override { return virtual_tokens(); }

  MemoryBreakdown breakdown() const override;
  // All zero: no block is shared and no prefix is cached (see counters()).
  AllocatorStats stats() const override { return {}; }
  std::vector<BlockMove> take_pending_copies() override { return {}; }
  void validate() const override;

  const VattentionSettings& settings() const { return settings_; }
  const VattentionLayout& layout() const { return layout_; }
  const VattentionCounters& counters() const { return counters_; }
  std::int64_t total_pages() const { return total_pages_; }
  // Pages not mapped into any row.
  std::int64_t free_pages() const { return total_pages_ - mapped_pages_; }
  // Pages mapped into rows, live or retained.
  std::int64_t mapped_pages() const { return mapped_pages_; }
  // Pages live requests need (Σ request_pages(tokens)); mapped_pages() - needed_pages() are
  // retained for reuse.
  std::int64_t needed_pages() const { return needed_pages_; }
  // The slot (row) seq occupies. REQUIRES: seq is live.
  std::int64_t slot_of(SeqId seq) const;
  // Pages each buffer of group g maps in slot s, live or retained. REQUIRES: s, g in range.
  std::int64_t slot_pages_per_buffer(std::int64_t s, std::size_t g) const;
  // Ids the block-table view spans: max_batch_size × max_seq_len.
  std::int64_t virtual_tokens() const { return settings_.max_batch_size * settings_.max_seq_len; }

 private:
  struct Sequence {
    std::int64_t slot = 0;          // INVARIANT: slots_[slot].seq == this sequence's id
    std::int64_t tokens = 0;        // INVARIANT: 1 <= tokens <= max_seq_len
    std::int64_t final_tokens = 0;  // declared prompt + true output (kept for the record)
  };
  struct Slot {
    bool live = false;
    SeqId seq = 0;              // meaningful when live
    std::int64_t mapped = 0;    // pages mapped over all buffers of all groups
    std::int64_t needed = 0;    // request_pages(tokens) when live, else 0; INVARIANT <= mapped
  };

  // KvAllocator's admission operations (kv_allocator.h checks req first).
  std::string misuse_prefix(std::string_view op) const override;
  bool do_can_admit(const AdmitRequest& req) const override;
  // Its tokens at admission fit a row (max_seq_len) and their pages fit the pool.
  bool do_can_ever_admit(const AdmitRequest& req) const override;
  // "max_seq_len" when the request is longer than a row, else "pool_bytes".
  std::string do_limiting_setting(const AdmitRequest& req) const override;
  // width × the bytes of request_pages(min(max(prompt, final - 1), max_seq_len)): forks copy.
  std::int64_t do_max_group_slots(const AdmitRequest& req, std::int32_t width) const override;
  // False (nothing changes) when no slot is free or the pages cannot be had. Never cached.
  AdmitResult do_admit(const AdmitRequest& req) override;
  // All free bytes when head can never be admitted, else 0: any page serves any request.
  std::int64_t do_unusable_free(const AdmitRequest& head) const override;

  // Checks; throw AllocatorError naming op and the sequence.
  const Sequence& live(SeqId seq, const char* op) const;
  void check_not_live(SeqId seq, const char* op) const;
  void check_n(SeqId seq, std::int64_t n, const char* op) const;
  bool ever_fits(std::int64_t tokens) const;
  static std::int64_t peak_tokens(const AdmitRequest& req);

  // The free slot a request of `tokens` tokens goes to; -1 when none is free.
  std::int64_t choose_slot(std::int64_t tokens) const;
  std::int64_t& pages_at(std::int64_t s, std::size_t g) { return slot_pages_[static_cast<std::size_t>(s) * layout_.groups().size() + g]; }
  // Places a live request of `tokens` tokens in free slot s and maps its pages.
  // REQUIRES: needed_pages_ + request_pages(tokens) <= total_pages_.
  void occupy(std::int64_t s, SeqId seq, std::int64_t tokens);
  // Maps what slot s lacks for `tokens` tokens, reclaiming retained pages first if the free
  // pool is short. REQUIRES: slots_[s].needed already counts `tokens`, and the pages fit.
  void map_for(std::int64_t s, std::int64_t tokens);
  // Unmaps every page of slot s beyond its live request's need (all of a free slot's).
  void release_surplus(std::int64_t s);
  void check_expensive() const;

  VattentionSettings settings_;
  VattentionLayout layout_;
  std::int64_t total_pages_ = 0;
  std::vector<Slot> slots_;                // max_batch_size entries
  std::vector<std::int64_t> slot_pages_;   // [slot][group]: pages mapped per buffer
  std::unordered_map<SeqId, Sequence> sequences_;
  std::int64_t mapped_pages_ = 0;          // INVARIANT: Σ slots_[s].mapped <= total_pages_
  std::int64_t needed_pages_ = 0;          // INVARIANT: Σ slots_[s].needed <= mapped_pages_
  // Σ layout_.classify(tokens) over live requests; `free` and `cached_free` stay 0.
  MemoryBreakdown used_;
  VattentionCounters counters_;
};

}  // namespace pagesim::alloc
