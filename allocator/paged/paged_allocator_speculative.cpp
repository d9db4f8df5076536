// PagedAllocator: speculative decoding's proposed and lookahead slots.
#include "allocator/paged/paged_allocator.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <string>

#include "allocator/paged/paged_misuse.h"

namespace pagesim::alloc {

using paged_detail::misuse;

bool PagedAllocator::grow_proposed(SeqHandle h, const ProposedSlots& p) {
  Sequence& s = at(h);
  if (s.pending > 0) misuse(seq_name(h.id) + " already has proposed slots pending; verify_proposed first");
  if (p.proposed < 0 || p.rejected < 0 || p.rejected > p.proposed || p.lookahead < 0 ||
      p.pending() > std::numeric_limits<std::int32_t>::max() - 1)
    misuse(seq_name(h.id) + ": expected 0 <= rejected <= proposed and lookahead >= 0, got proposed " +
           std::to_string(p.proposed) + ", rejected " + std::to_string(p.rejected) + ", lookahead " +
           std::to_string(p.lookahead));
  const std::int64_t n = 1 + p.pending();
  if (append_cost(h.id, s, n) > num_free_blocks()) return false;
  keep_entries();  // verify_proposed reads the fills of the blocks it rewinds
  // Pending before the append, so that no prompt block it completes with them is cached.
  s.pending = static_cast<std::int32_t>(p.pending());
  s.pending_rejected = static_cast<std::int32_t>(p.rejected);
  s.pending_lookahead = static_cast<std::int32_t>(p.lookahead);
  [[maybe_unused]] const bool ok = append_slow(s, h.id, n, true);
  assert(ok && "append_cost promised the blocks");
  proposed_accepted_ += p.proposed - p.rejected;
  proposed_rejected_ += p.rejected;
  lookahead_ += p.lookahead;
  return true;
}

void PagedAllocator::verify_proposed(SeqHandle h) {
  Sequence& s = at(h);
  if (s.pending == 0) return;
  assert(entries_kept_ && "grow_proposed kept the entries this reads");
  proposed_accepted_ -= s.pending - s.pending_rejected - s.pending_lookahead;
  proposed_rejected_ -= s.pending_rejected;
  lookahead_ -= s.pending_lookahead;
  std::int64_t drop = s.pending_rejected + s.pending_lookahead;
  s.pending = s.pending_rejected = s.pending_lookahead = 0;
  // The dropped tokens are the last ones, in blocks this sequence alone holds (appended by
  // grow_proposed: fresh blocks, or a last block copied on write) and never cached.
  while (drop > 0) {
    const BlockId b = s.table.back();
    const std::int32_t filled = gpu_.filled(b);
    const auto w = static_cast<std::int32_t>(std::min<std::int64_t>(filled, drop));
    assert(gpu_.ref_count(b) == 1 && !(cache_ && cache_->cached(b)));
    gpu_.set_filled(b, filled - w);
    token_states_ -= w;
    s.tokens -= w;
    drop -= w;
    if (filled == w) {
      s.table.pop_back();
      --logical_blocks_;
      release_gpu_block(b);
    }
  }
  settle_last(s);
  if (s.caching_prompt) cache_filled_prompt_blocks(s);
  check_sequence(s);
}

}  // namespace pagesim::alloc
