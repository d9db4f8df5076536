#include "allocator/vattention/vattention_allocator.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <utility>

namespace pagesim::alloc {
namespace {

[[noreturn]] void bad_setting(const std::string& field, const std::string& expected, std::int64_t got) {
  throw AllocatorError("vattention allocator: setting " + field + " must be " + expected + ", got " +
                       std::to_string(got));
}

[[noreturn]] void violation(const std::string& what) {
  throw InvariantViolation("VattentionAllocator: " + what);
}

// The pool in pages, after checking the settings the layout does not check.
std::int64_t pool_pages(const VattentionSettings& s, const VattentionLayout& layout) {
  const std::int64_t pages = s.pool_bytes / layout.page_bytes();
  if (pages < 1) {
    bad_setting("pool_bytes", "at least one page (" + page_size_name(layout.page_bytes()) + ")", s.pool_bytes);
  }
  if (s.max_batch_size < 1) bad_setting("max_batch_size", ">= 1", s.max_batch_size);
  // Block-table ids (32-bit) span max_batch_size × max_seq_len tokens.
  if (s.max_batch_size > std::numeric_limits<BlockId>::max() / s.max_seq_len) {
    bad_setting("max_batch_size", "at most " + std::to_string(std::numeric_limits<BlockId>::max() / s.max_seq_len) +
                                      " for max_seq_len " + std::to_string(s.max_seq_len) +
                                      " (32-bit virtual token ids)",
                s.max_batch_size);
  }
  return pages;
}

}  // namespace

VattentionAllocator::VattentionAllocator(const VattentionSettings& settings)
    : settings_(settings),
      layout_(settings.groups, settings.page_bytes, settings.max_seq_len),
      total_pages_(pool_pages(settings, layout_)),
      slots_(static_cast<std::size_t>(settings.max_batch_size)),
      slot_pages_(static_cast<std::size_t>(settings.max_batch_size) * layout_.groups().size(), 0) {}

std::string VattentionAllocator::name() const {
  return "vattention(page=" + page_size_name(layout_.page_bytes()) + ",slots=" +
         std::to_string(settings_.max_batch_size) + (settings_.deferred_reclamation ? "" : ",reclaim=immediate") +
         ")";
}

// --- argument checks ------------------------------------------------------------------------

// Its messages name the operation, not the allocator.
std::string VattentionAllocator::misuse_prefix(std::string_view op) const { return std::string(op); }

const VattentionAllocator::Sequence& VattentionAllocator::live(SeqId seq, const char* op) const {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    throw AllocatorError(std::string(op) + ": " + seq_name(seq) + " is not live (never admitted, or already freed)");
  }
  return it->second;
}

void VattentionAllocator::check_not_live(SeqId seq, const char* op) const {
  if (sequences_.contains(seq)) throw AllocatorError(std::string(op) + ": " + seq_name(seq) + " is already live");
}

void VattentionAllocator::check_n(SeqId seq, std::int64_t n, const char* op) const {
  if (n < 0) throw AllocatorError(std::string(op) + ": " + seq_name(seq) + ": n must be >= 0, got " + std::to_string(n));
}

bool VattentionAllocator::ever_fits(std::int64_t tokens) const {
  return tokens <= settings_.max_seq_len && layout_.request_pages(tokens) <= total_pages_;
}

// --- slots and pages ------------------------------------------------------------------------

std::int64_t VattentionAllocator::choose_slot(std::int64_t tokens) const {
  if (num_sequences() == settings_.max_batch_size) return -1;
  const std::size_t groups = layout_.groups().size();
  std::int64_t best_cover = -1;   // fewest retained pages that still cover every group
  std::int64_t most_kept = -1;    // most retained pages
  for (std::int64_t s = 0; s < settings_.max_batch_size; ++s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    if (slot.live) continue;
    bool covers = true;
    for (std::size_t g = 0; g < groups && covers; ++g) {
      covers = slot_pages_[static_cast<std::size_t>(s) * groups + g] >= layout_.pages_per_buffer(g, tokens);
    }
    if (covers && (best_cover < 0 || slot.mapped < slots_[static_cast<std::size_t>(best_cover)].mapped)) best_cover = s;
    if (most_kept < 0 || slot.mapped > slots_[static_cast<std::size_t>(most_kept)].mapped) most_kept = s;
  }
  return best_cover >= 0 ? best_cover : most_kept;
}

void VattentionAllocator::occupy(std::int64_t s, SeqId seq, std::int64_t tokens) {
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  assert(!slot.live);
  slot.live = true;
  slot.seq = seq;
  slot.needed = layout_.request_pages(tokens);
  needed_pages_ += slot.needed;
  assert(needed_pages_ <= total_pages_);
  for (std::size_t g = 0; g < layout_.groups().size(); ++g) {
    counters_.pages_reused +=
        layout_.groups()[g].buffers * std::min(pages_at(s, g), layout_.pages_per_buffer(g, tokens));
  }
  map_for(s, tokens);
  used_ += layout_.classify(tokens);
}

void VattentionAllocator::map_for(std::int64_t s, std::int64_t tokens) {
  const auto& groups = layout_.groups();
  std::int64_t lacking = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    lacking += groups[g].buffers * std::max<std::int64_t>(0, layout_.pages_per_buffer(g, tokens) - pages_at(s, g));
  }
  if (lacking == 0) return;
  // Reclaim on demand: the highest slots first give back every page their request does not
  // need (vattention.cu reclaim_kvblocks_on_demand), until the free pool covers the lack.
  for (std::int64_t r = settings_.max_batch_size - 1; r >= 0 && free_pages() < lacking; --r) {
    const Slot& other = slots_[static_cast<std::size_t>(r)];
    if (other.mapped > other.needed || r == s) release_surplus(r);
  }
  assert(free_pages() >= lacking);  // the caller checked that the needed pages fit
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::int64_t& have = pages_at(s, g);
    const std::int64_t need = layout_.pages_per_buffer(g, tokens);
    if (have < need) {
      slot.mapped += groups[g].buffers * (need - have);
      have = need;
    }
  }
  mapped_pages_ += lacking;
  counters_.pages_mapped += lacking;
}

void VattentionAllocator::release_surplus(std::int64_t s) {
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  const std::int64_t tokens = slot.live ? sequences_.at(slot.seq).tokens : 0;
  const auto& groups = layout_.groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::int64_t& have = pages_at(s, g);
    const std::int64_t need = slot.live ? layout_.pages_per_buffer(g, tokens) : 0;
    if (have > need) {
      const std::int64_t released = groups[g].buffers * (have - need);
      slot.mapped -= released;
      mapped_pages_ -= released;
      counters_.pages_unmapped += released;
      have = need;
    }
  }
}

// --- operations -----------------------------------------------------------------------------

// The most tokens `req` ever holds: its KV when it generates its last token. A row never
// grows past max_seq_len (can_append), so a request longer than the row could be admitted
// and then neither grow nor, once preempted, come back: it is never admitted.
std::int64_t VattentionAllocator::peak_tokens(const AdmitRequest& req) {
  return std::max(req.tokens_at_admission(), req.final_tokens() - 1);
}

bool VattentionAllocator::do_can_ever_admit(const AdmitRequest& req) const {
  return ever_fits(peak_tokens(req));
}

std::string VattentionAllocator::do_limiting_setting(const AdmitRequest& req) const {
  return peak_tokens(req) > settings_.max_seq_len ? "max_seq_len" : "pool_bytes";
}

std::int64_t VattentionAllocator::do_max_group_slots(const AdmitRequest& req, std::int32_t width) const {
  const std::int64_t tokens =
      std::min(std::max(req.prompt_tokens, req.final_tokens() - 1), settings_.max_seq_len);
  return width * layout_.request_pages(tokens) * layout_.page_bytes();
}

bool VattentionAllocator::do_can_admit(const AdmitRequest& req) const {
  if (!ever_fits(peak_tokens(req))) return false;
  const std::int64_t tokens = req.held_tokens(0);
  return num_sequences() < settings_.max_batch_size &&
         needed_pages_ + layout_.request_pages(tokens) <= total_pages_;
}

AdmitResult VattentionAllocator::do_admit(const AdmitRequest& req) {
  if (!do_can_admit(req)) return {};
  const std::int64_t tokens = req.held_tokens(0);
  const std::int64_t s = choose_slot(tokens);
  assert(s >= 0);
  sequences_.emplace(req.seq, Sequence{.slot = s, .tokens = tokens, .final_tokens = req.final_tokens()});
  occupy(s, req.seq, tokens);
  check_expensive();
  return {.admitted = true, .cached_tokens = 0, .held_tokens = tokens};
}

bool VattentionAllocator::can_append(SeqId seq, std::int64_t n) const {
  check_n(seq, n, "can_append");
  const Sequence& q = live(seq, "can_append");
  if (n > settings_.max_seq_len - q.tokens) return false;
  const Slot& slot = slots_[static_cast<std::size_t>(q.slot)];
  return needed_pages_ - slot.needed + layout_.request_pages(q.tokens + n) <= total_pages_;
}

bool VattentionAllocator::can_append_all(std::span<const SeqHandle> group, std::int64_t n) const {
  std::int64_t needed = needed_pages_;
  for (const SeqHandle& h : group) {
    const SeqId seq = h.id;
    check_n(seq, n, "can_append_all");
    const Sequence& q = live(seq, "can_append_all");
    if (n > settings_.max_seq_len - q.tokens) return false;
    needed += layout_.request_pages(q.tokens + n) - slots_[static_cast<std::size_t>(q.slot)].needed;
  }
  return needed <= total_pages_;
}

bool VattentionAllocator::append(SeqId seq, std::int64_t n) {
  if (!can_append(seq, n)) return false;
  Sequence& q = sequences_.find(seq)->second;
  Slot& slot = slots_[static_cast<std::size_t>(q.slot)];
  used_ -= layout_.classify(q.tokens);
  q.tokens += n;
  const std::int64_t needed = layout_.request_pages(q.tokens);
  needed_pages_ += needed - slot.needed;
  slot.needed = needed;
  map_for(q.slot, q.tokens);
  used_ += layout_.classify(q.tokens);
  check_expensive();
  return true;
}

bool VattentionAllocator::fork(SeqId parent, SeqId child) {
  const Sequence source = live(parent, "fork");  // a copy: emplace below may rehash
  check_not_live(child, "fork");
  if (num_sequences() == settings_.max_batch_size) return false;
  if (needed_pages_ + layout_.request_pages(source.tokens) > total_pages_) return false;
  const std::int64_t s = choose_slot(source.tokens);
  assert(s >= 0);
  sequences_.emplace(child, Sequence{.slot = s, .tokens = source.tokens, .final_tokens = source.final_tokens});
  occupy(s, child, source.tokens);
  check_expensive();
  return true;
}

void VattentionAllocator::free(SeqId seq) {
  const auto it = sequences_.find(seq);
  if (it == sequences_.end()) {
    throw AllocatorError("free: " + seq_name(seq) + " is not live (double free, or never admitted)");
  }
  const std::int64_t s = it->second.slot;
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  used_ -= layout_.classify(it->second.tokens);
  needed_pages_ -= slot.needed;
  slot.needed = 0;
  slot.live = false;
  sequences_.erase(it);
  if (!settings_.deferred_reclamation) release_surplus(s);
  check_expensive();
}

std::int64_t VattentionAllocator::sequence_tokens(SeqId seq) const { return live(seq, "sequence_tokens").tokens; }

std::int64_t VattentionAllocator::slot_of(SeqId seq) const { return live(seq, "slot_of").slot; }

std::int64_t VattentionAllocator::slot_pages_per_buffer(std::int64_t s, std::size_t g) const {
  if (s < 0 || s >= settings_.max_batch_size || g >= layout_.groups().size()) {
    throw AllocatorError("slot_pages_per_buffer: slot " + std::to_string(s) + " or group " + std::to_string(g) +
                         " out of range (" + std::to_string(settings_.max_batch_size) + " slots, " +
                         std::to_string(layout_.groups().size()) + " groups)");
  }
  return slot_pages_[static_cast<std::size_t>(s) * layout_.groups().size() + g];
}

std::vector<BlockId> VattentionAllocator::block_table(SeqId seq) const {
  const Sequence& q = live(seq, "block_table");
  const std::int64_t first = q.slot * settings_.max_seq_len;
  std::vector<BlockId> ids(static_cast<std::size_t>(q.tokens));
  for (std::int64_t t = 0; t < q.tokens; ++t) ids[static_cast<std::size_t>(t)] = static_cast<BlockId>(first + t);
  return ids;
}

MemoryBreakdown VattentionAllocator::breakdown() const {
  MemoryBreakdown b = used_;
  assert(used_.allocated() == needed_pages_ * layout_.page_bytes());
  b.free = capacity_slots() - used_.allocated();
  b.cached_free = (mapped_pages_ - needed_pages_) * layout_.page_bytes();
  return b;
}

std::int64_t VattentionAllocator::do_unusable_free(const AdmitRequest& head) const {
  return ever_fits(peak_tokens(head)) ? 0 : breakdown().free;
}

// --- validation -----------------------------------------------------------------------------

void VattentionAllocator::validate() const {
  const auto& groups = layout_.groups();
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  if (slots_.size() != static_cast<std::size_t>(settings_.max_batch_size) ||
      slot_pages_.size() != slots_.size() * groups.size()) {
    violation("one slot per row and one page count per slot and group: " + n(std::ssize(slots_)) + " slots, " +
              n(std::ssize(slot_pages_)) + " counts, for " + n(settings_.max_batch_size) + " rows");
  }
  std::int64_t mapped = 0;
  std::int64_t needed = 0;
  std::int64_t live_slots = 0;
  MemoryBreakdown recomputed;
  for (std::int64_t s = 0; s < settings_.max_batch_size; ++s) {
    const Slot& slot = slots_[static_cast<std::size_t>(s)];
    const std::string where = "slot " + n(s);
    std::int64_t tokens = 0;
    if (slot.live) {
      const auto it = sequences_.find(slot.seq);
      if (it == sequences_.end() || it->second.slot != s) {
        violation(where + " is live for " + seq_name(slot.seq) + ", which does not name it as its slot");
      }
      tokens = it->second.tokens;
      if (tokens < 1 || tokens > settings_.max_seq_len) {
        violation("1 <= tokens <= max_seq_len: " + seq_name(slot.seq) + " holds " + n(tokens));
      }
      ++live_slots;
      recomputed += layout_.classify(tokens);
    }
    std::int64_t slot_mapped = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const std::int64_t have = slot_pages_[static_cast<std::size_t>(s) * groups.size() + g];
      const std::int64_t need = slot.live ? layout_.pages_per_buffer(g, tokens) : 0;
      const std::string at = where + " group " + n(static_cast<std::int64_t>(g)) + ": ";
      if (have < need || have > groups[g].max_pages) {
        violation(at + "need <= pages per buffer <= row pages: " + n(need) + " <= " + n(have) + " <= " +
                  n(groups[g].max_pages));
      }
      if (!settings_.deferred_reclamation && have != need) {
        violation(at + "without deferred reclamation a slot maps exactly what it needs: " + n(have) + " != " +
                  n(need));
      }
      slot_mapped += groups[g].buffers * have;
    }
    if (slot_mapped != slot.mapped) violation(where + ": mapped counter " + n(slot.mapped) + " != " + n(slot_mapped));
    const std::int64_t slot_needed = slot.live ? layout_.request_pages(tokens) : 0;
    if (slot_needed != slot.needed) violation(where + ": needed counter " + n(slot.needed) + " != " + n(slot_needed));
    mapped += slot_mapped;
    needed += slot_needed;
  }
  if (live_slots != num_sequences()) {
    violation("live slots == sequences: " + n(live_slots) + " != " + n(num_sequences()));
  }
  if (mapped != mapped_pages_) violation("mapped pages counter " + n(mapped_pages_) + " != scan " + n(mapped));
  if (needed != needed_pages_) violation("needed pages counter " + n(needed_pages_) + " != scan " + n(needed));
  if (mapped > total_pages_) violation("mapped pages <= pool pages: " + n(mapped) + " > " + n(total_pages_));
  if (recomputed != used_) {
    violation("running breakdown == recomputation: token_states " + n(used_.token_states) + " vs " +
              n(recomputed.token_states) + ", out_of_window " + n(used_.out_of_window) + " vs " +
              n(recomputed.out_of_window) + ", recurrent_state " + n(used_.recurrent_state) + " vs " +
              n(recomputed.recurrent_state) + ", rounding " + n(used_.rounding) + " vs " + n(recomputed.rounding));
  }
  if (used_.allocated() != needed * layout_.page_bytes()) {
    violation("allocated bytes == needed pages x page: " + n(used_.allocated()) + " != " +
              n(needed * layout_.page_bytes()));
  }
  const MemoryBreakdown b = breakdown();
  if (b.total() != capacity_slots()) violation("classes sum to capacity: " + n(b.total()) + " != " + n(capacity_slots()));
  if (b.cached_free < 0 || b.cached_free > b.free) {
    violation("0 <= retained bytes <= free bytes: " + n(b.cached_free) + ", " + n(b.free));
  }
}

void VattentionAllocator::check_expensive() const {
#ifdef PAGESIM_EXPENSIVE_CHECKS
  validate();
#endif
}

}  // namespace pagesim::alloc
