// PagedAllocator: validate(), every identity of paged_allocator.h by a full scan.
#include "allocator/paged/paged_allocator.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "allocator/paged/paged_misuse.h"

namespace pagesim::alloc {

using paged_detail::broken;

void PagedAllocator::check_sequence_now(const Sequence& s) const {
  const auto blocks = static_cast<std::int64_t>(s.table.size());
  if (blocks != blocks_for(s.tokens) || s.last != (s.table.empty() ? kNoBlock : s.table.back()) ||
      s.room != blocks * block_size_ - s.tokens ||
      (s.last != kNoBlock && (s.swapped || entries_kept_) &&
       (s.swapped ? cpu_ : gpu_).filled(s.last) != block_size_ - s.room))
    broken(seq_name(s.id) + " holds " + std::to_string(s.tokens) + " tokens in " + std::to_string(blocks) +
           " blocks, keeps last block " + std::to_string(s.last) + " with " + std::to_string(s.room) +
           " free slots; its table ends in " + (s.table.empty() ? "nothing" : std::to_string(s.table.back())));
}

void PagedAllocator::validate() const {
  const std::int64_t n = gpu_.num_blocks();
  std::vector<std::int32_t> gpu_refs(static_cast<std::size_t>(n), 0);
  std::vector<std::int32_t> cpu_refs(static_cast<std::size_t>(cpu_.num_blocks()), 0);
  std::int64_t logical = 0;
  std::int64_t live = 0;
  // Before entries_kept_: the tables' own fills (their blocks' entries say nothing).
  std::vector<bool> implied(entries_kept_ ? 0 : static_cast<std::size_t>(n), false);
  std::int64_t implied_filled = 0;
  std::int64_t accepted = 0, rejected = 0, lookahead = 0;
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    const Sequence& s = slots_[slot];
    if (!s.live) {
      if (!s.empty_past_first_line())
        broken("free slot " + std::to_string(slot) + " still holds a table, prompt hashes or pending slots");
      continue;
    }
    ++live;
    const SeqId id = s.id;
    if (index_.find(id) != slot)
      broken(seq_name(id) + " in slot " + std::to_string(slot) + " is not indexed by its id");
    if (id > max_indexed_)
      broken(seq_name(id) + " is above the largest id indexed (" + std::to_string(max_indexed_) + ")");
    if (static_cast<std::int64_t>(s.table.size()) != blocks_for(s.tokens))
      broken(seq_name(id) + " holds " + std::to_string(s.tokens) + " tokens in " +
             std::to_string(s.table.size()) + " blocks");
    const BlockPool& pool = s.swapped ? cpu_ : gpu_;
    auto& refs = s.swapped ? cpu_refs : gpu_refs;
    for (std::size_t i = 0; i < s.table.size(); ++i) {
      BlockId b = s.table[i];
      if (b < 0 || b >= pool.num_blocks()) broken(seq_name(id) + " refers to invalid block " + std::to_string(b));
      ++refs[static_cast<std::size_t>(b)];
      auto expect = std::min<std::int64_t>(block_size_, s.tokens - static_cast<std::int64_t>(i) * block_size_);
      if (!s.swapped && !entries_kept_) {
        implied[static_cast<std::size_t>(b)] = true;
        implied_filled += expect;
      } else if (pool.filled(b) != expect)
        broken("block " + std::to_string(b) + " has filled " + std::to_string(pool.filled(b)) +
               " but " + seq_name(id) + " expects " + std::to_string(expect) + " at index " + std::to_string(i));
    }
    check_sequence_now(s);  // after the loop above has checked its block ids
    if (!s.swapped) logical += static_cast<std::int64_t>(s.table.size());
    if (s.pending < 0 || s.pending_rejected < 0 || s.pending_lookahead < 0 ||
        s.pending_rejected + s.pending_lookahead > s.pending || s.pending > s.tokens || (s.swapped && s.pending > 0))
      broken(seq_name(id) + " has " + std::to_string(s.pending) + " pending slots (" + std::to_string(s.pending_rejected) +
             " rejected, " + std::to_string(s.pending_lookahead) + " lookahead) of " + std::to_string(s.tokens) +
             " tokens" + (s.swapped ? " swapped out" : ""));
    accepted += s.pending - s.pending_rejected - s.pending_lookahead;
    rejected += s.pending_rejected;
    lookahead += s.pending_lookahead;
    // No block holding a pending (speculated) token is cached.
    for (std::int64_t i = s.committed() / block_size_; s.pending > 0 && cache_ && i < static_cast<std::int64_t>(s.table.size()); ++i)
      if (cache_->cached(s.table[static_cast<std::size_t>(i)]))
        broken(seq_name(id) + "'s block " + std::to_string(s.table[static_cast<std::size_t>(i)]) +
               " holds proposed tokens and is cached");
    if (s.caching_prompt == s.prompt_hashes.empty())
      broken(seq_name(id) + (s.caching_prompt ? " is marked as caching its prompt but holds no prompt hashes"
                                              : " holds prompt hashes but is not marked as caching its prompt"));
    if (!s.prompt_hashes.empty() &&
        (s.swapped || s.hashed_blocks != std::min(s.prompt_hashes.size(), static_cast<std::size_t>(s.committed() / block_size_))))
      broken(seq_name(id) + " has cached " + std::to_string(s.hashed_blocks) + " of " +
             std::to_string(s.prompt_hashes.size()) + " prompt blocks but holds " + std::to_string(s.tokens) +
             " tokens" + (s.swapped ? " swapped out" : ""));
  }
  if (!index_.valid()) broken("the sequence index has an entry its probe cannot reach");
  if (live != static_cast<std::int64_t>(index_.size()) ||
      free_slots_.size() + index_.size() != slots_.size())
    broken(std::to_string(live) + " live slots, " + std::to_string(index_.size()) + " indexed sequences, " +
           std::to_string(free_slots_.size()) + " free slots of " + std::to_string(slots_.size()));
  if (logical != logical_blocks_)
    broken("logical block counter " + std::to_string(logical_blocks_) + " != " + std::to_string(logical));
  if (accepted != proposed_accepted_ || rejected != proposed_rejected_ || lookahead != lookahead_)
    broken("proposed slot counters " + std::to_string(proposed_accepted_) + "/" + std::to_string(proposed_rejected_) +
           "/" + std::to_string(lookahead_) + " != the sequences' " + std::to_string(accepted) + "/" +
           std::to_string(rejected) + "/" + std::to_string(lookahead) + " (accepted/rejected/lookahead)");

  // is_implied(b): b's entry says nothing (a table block before entries_kept_); it must occur
  // once, and its fill is not summed.
  auto check_pool = [](const BlockPool& pool, const std::vector<std::int32_t>& refs, const char* what,
                       auto&& is_unowned_kept, auto&& is_implied) {
    std::vector<bool> on_free(refs.size(), false);
    pool.for_each_free([&](BlockId b) {
      if (on_free[static_cast<std::size_t>(b)])
        broken(std::string(what) + " block " + std::to_string(b) + " is on the free list twice");
      on_free[static_cast<std::size_t>(b)] = true;
    });
    std::int64_t owned = 0, filled = 0, shared = 0;
    for (std::size_t b = 0; b < refs.size(); ++b) {
      auto id = static_cast<BlockId>(b);
      // A free block's entry is meaningless (BlockPool::give_back_sole): only owned and kept
      // blocks have their references counted.
      if (is_implied(id) && refs[b] != 1)
        broken(std::string(what) + " block " + std::to_string(b) + " has " + std::to_string(refs[b]) +
               " references before the pool keeps its entries; expected one");
      if (!on_free[b] && !is_implied(id) && pool.ref_count(id) != refs[b])
        broken(std::string(what) + " block " + std::to_string(b) + " has ref_count " +
               std::to_string(pool.ref_count(id)) + " but " + std::to_string(refs[b]) + " block-table references");
      if (on_free[b] && (refs[b] != 0 || is_unowned_kept(id)))
        broken(std::string(what) + " block " + std::to_string(b) + " is both free and owned or cached");
      if (!on_free[b] && refs[b] == 0 && !is_unowned_kept(id))
        broken(std::string(what) + " block " + std::to_string(b) + " is neither free, owned nor cached");
      if (refs[b] > 0) {
        ++owned;
        if (!is_implied(id)) filled += pool.filled(id);
      }
      if (refs[b] > 1) ++shared;
    }
    if (shared != pool.shared_blocks())
      broken(std::string(what) + " pool counts " + std::to_string(pool.shared_blocks()) + " shared blocks, its tables " +
             std::to_string(shared));
    return std::pair{owned, filled};
  };
  // Adapter weights hold one reference per block, from no block table.
  auto adapter_block = [&](BlockId b, const std::string& owner) {
    if (b < 0 || b >= n || gpu_.filled(b) != 0) broken(owner + " holds invalid or filled block " + std::to_string(b));
    ++gpu_refs[static_cast<std::size_t>(b)];
  };
  for (BlockId b : region_) adapter_block(b, "the adapter region");
  adapters_.for_each([&](AdapterId a, const std::vector<BlockId>& blocks) {
    for (BlockId b : blocks) adapter_block(b, "adapter " + std::to_string(a));
  });
  adapters_.validate();
  if (static_cast<std::int64_t>(region_.size()) != region_blocks_) broken("adapter region size changed");
  std::vector<bool> in_released(static_cast<std::size_t>(n), false);
  std::uint64_t previous_release = 0;
  released_.for_each([&](const ReleasedBlockQueue::Entry& e) {
    const BlockId b = e.block;
    if (b < 0 || b >= n || in_released[static_cast<std::size_t>(b)] || gpu_.filled(b) != 0 ||
        (cache_ && cache_->cached(b)))
      broken("released block " + std::to_string(b) + " is invalid, queued twice, filled or cached");
    if (e.released_at <= previous_release || e.released_at > released_.clock())
      broken("released block " + std::to_string(b) + " is out of release order");
    in_released[static_cast<std::size_t>(b)] = true;
    previous_release = e.released_at;
  });
  auto [owned, filled] = check_pool(
      gpu_, gpu_refs, "GPU",
      [&](BlockId b) { return (cache_ && cache_->evictable(b)) || in_released[static_cast<std::size_t>(b)]; },
      [&](BlockId b) { return !entries_kept_ && implied[static_cast<std::size_t>(b)]; });
  filled += implied_filled;
  check_pool(
      cpu_, cpu_refs, "CPU", [this](BlockId b) { return tiers_ && tiers_->holds_cpu_block(b); },
      [](BlockId) { return false; });
  if (owned - adapter_weight_blocks() != owned_blocks_)
    broken("owned block counter " + std::to_string(owned_blocks_) + " != " + std::to_string(owned) + " - " +
           std::to_string(adapter_weight_blocks()) + " adapter blocks");
  if (filled != token_states_)
    broken("token_states counter " + std::to_string(token_states_) + " != " + std::to_string(filled));
  if (cache_) cache_->validate(gpu_);
  if (tiers_) validate_tiers();
  MemoryBreakdown br = breakdown();
  if (br.total() != capacity_slots())
    broken("breakdown sums to " + std::to_string(br.total()) + ", capacity is " + std::to_string(capacity_slots()));
}

void PagedAllocator::validate_tiers() const {
  tiers_->validate();
  if (tiers_->settings().write_policy != TierWritePolicy::kWriteBack) return;
  std::int64_t stored = 0, loaded = 0;
  for (std::int32_t t = 0; t < tiers_->num_tiers(); ++t) {
    const KvTier& k = tiers_->tier(t);
    stored += k.size();
    loaded += tiers_->counters(t).loaded_blocks;
    k.for_each_hash([&](BlockHash h) {
      if (cache_->lookup(h) != kNoBlock)
        broken("hash " + std::to_string(h) + " is cached on the GPU and stored in the " +
               std::string(to_string(k.settings().kind)) + " tier under write_back");
    });
  }
  const std::int64_t placed = cache_->num_cached() + stored + tiers_->dropped_blocks() + tiers_->superseded_blocks();
  if (placed != tiers_->cached_count() - loaded)
    broken("offload tiers: GPU-cached " + std::to_string(cache_->num_cached()) + " + stored " + std::to_string(stored) +
           " + dropped " + std::to_string(tiers_->dropped_blocks()) + " + superseded " +
           std::to_string(tiers_->superseded_blocks()) + " != cached " + std::to_string(tiers_->cached_count()) +
           " - loaded " + std::to_string(loaded) + ": a block was lost or duplicated");
}

}  // namespace pagesim::alloc
