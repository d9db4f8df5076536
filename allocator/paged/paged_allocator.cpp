// PagedAllocator's core: construction, sequences, admission with the prefix cache, tiers and
// remote source, appends, fork, free and the GPU blocks' hand-out order. The other concerns
// are in paged_allocator_{adapters,decode_runs,speculative,swap,validate}.cpp.
#include "allocator/paged/paged_allocator.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <numeric>
#include <string>

#include "allocator/paged/paged_misuse.h"

namespace pagesim::alloc {

using paged_detail::misuse;

PagedAllocator::PagedAllocator(const PagedAllocatorSettings& s)
    : block_size_(s.block_size),
      block_shift_(s.block_size > 0 ? std::countr_zero(static_cast<std::uint32_t>(s.block_size)) : 0),
      gpu_(std::max<std::int64_t>(s.num_blocks, 0), std::max(s.block_size, 1)),
      cpu_(std::max<std::int64_t>(s.num_cpu_blocks, 0), std::max(s.block_size, 1)),
      single_free_queue_(s.single_free_queue),
      entries_kept_(s.prefix_cache || s.single_free_queue) {
  if (s.num_blocks <= 0)
    misuse("num_blocks must be positive, got " + std::to_string(s.num_blocks));
  if (s.block_size <= 0 || (s.block_size & (s.block_size - 1)) != 0)
    misuse("block_size must be a power of two, got " + std::to_string(s.block_size));
  if (s.num_cpu_blocks < 0)
    misuse("num_cpu_blocks must be >= 0, got " + std::to_string(s.num_cpu_blocks));
  if (s.prefix_cache) cache_ = std::make_unique<PrefixCache>(s.num_blocks, s.eviction);
  if (single_free_queue_) released_ = ReleasedBlockQueue(s.num_blocks);
  if (!s.offload.tiers.empty()) {
    if (!cache_) misuse("offload tiers store prefix-cache blocks; turn the prefix cache on");
    tiers_ = std::make_unique<TierStack>(s.offload, s.block_size, cpu_);
  }
  if (s.adapter_region_blocks < 0 || s.adapter_region_blocks >= s.num_blocks)
    misuse("adapter_region_blocks must be in [0, num_blocks = " + std::to_string(s.num_blocks) + "), got " +
           std::to_string(s.adapter_region_blocks));
  region_blocks_ = s.adapter_region_blocks;
  for (std::int64_t i = 0; i < region_blocks_; ++i) region_.push_back(gpu_.take());
}

std::string PagedAllocator::name() const {
  std::string n = cache_ ? "paged+prefix(block=" : "paged(block=";
  n.append(std::to_string(block_size_));
  if (cache_) n.append(",").append(cache_->eviction_name());
  if (single_free_queue_) n.append(",one-free-queue");
  n.push_back(')');
  return n;
}

const PagedAllocator::Sequence& PagedAllocator::get(SeqId seq) const {
  const std::uint32_t slot = index_.find(seq);
  if (slot == SeqSlotIndex::kNone) misuse(seq_name(seq) + " is not live");
  return slots_[slot];
}

PagedAllocator::Sequence& PagedAllocator::get(SeqId seq) {
  return const_cast<Sequence&>(static_cast<const PagedAllocator*>(this)->get(seq));
}

SeqHandle PagedAllocator::handle(SeqId seq) const {
  if (newest_slot_ < slots_.size()) {
    const Sequence& s = slots_[newest_slot_];
    if (s.live && s.id == seq) return {.id = seq, .slot = newest_slot_};
  }
  const std::uint32_t slot = index_.find(seq);
  if (slot == SeqSlotIndex::kNone) misuse(seq_name(seq) + " is not live");
  return {.id = seq, .slot = slot};
}

std::uint32_t PagedAllocator::new_slot(SeqId seq) {
  std::uint32_t i;
  if (free_slots_.empty()) {
    i = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    i = free_slots_.back();
    free_slots_.pop_back();
  }
  index_.insert(seq, i);
  max_indexed_ = std::max(max_indexed_, seq);
  newest_slot_ = i;
  // A free slot is empty past its first line (free() leaves it so): only that line is
  // written, and the second (cold in a fleet) is not read.
  Sequence& s = slots_[i];
  assert(!s.live && s.empty_past_first_line());
  s.id = seq;
  s.tokens = s.final_tokens = 0;
  s.last = kNoBlock;
  s.room = 0;
  s.live = true;
  s.swapped = false;
  return i;
}

std::string PagedAllocator::misuse_prefix(std::string_view) const { return std::string(paged_detail::kName); }

std::int64_t PagedAllocator::count_prefix_hits(const AdmitRequest& req, std::int64_t* evictable_hits,
                                               std::int64_t* fresh_hits) const {
  *evictable_hits = *fresh_hits = 0;
  if (!cache_) return 0;
  std::int64_t hits = 0;
  auto n = static_cast<std::int64_t>(req.prompt_block_hashes.size());
  if (req.whole_block_hits) n = std::min(n, (req.tokens_at_admission() - 1) / block_size_);
  for (BlockHash h : req.prompt_block_hashes.first(static_cast<std::size_t>(n))) {
    BlockId b = cache_->lookup(h);
    if (b == kNoBlock) {
      // Chained hashes: nothing after a miss can be this prefix.
      if ((!tiers_ || tiers_->find(h) < 0) && (!remote_ || !remote_->holds(h))) break;
      ++*fresh_hits;
    } else if (cache_->evictable(b)) {
      ++*evictable_hits;
    }
    ++hits;
  }
  return hits;
}

bool PagedAllocator::set_remote_prefix_source(const RemotePrefixSource* source) {
  if (!cache_) return false;
  remote_ = source;
  return true;
}

void PagedAllocator::cache_block(BlockId b, BlockHash h) {
  if (cache_->add(b, h) && tiers_) tiers_->on_gpu_cached(h);
}

std::int64_t PagedAllocator::cached_tokens_of(const AdmitRequest& req, std::int64_t hits) const {
  // At least one token is always computed: its logits produce the next token.
  return std::min(hits * block_size_, req.tokens_at_admission() - 1);
}

std::int64_t PagedAllocator::cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const {
  if (!cache_) return 0;
  std::int64_t hits = 0;
  for (BlockHash h : prompt_block_hashes) {
    // chained keys: nothing after a miss matches
    if (cache_->lookup(h) == kNoBlock && (!tiers_ || tiers_->find(h) < 0)) break;
    ++hits;
  }
  return hits * block_size_;
}

std::int64_t PagedAllocator::blocks_needed(const AdmitRequest& req) const {
  std::int64_t evictable_hits = 0, fresh_hits = 0;
  std::int64_t hits = count_prefix_hits(req, &evictable_hits, &fresh_hits);
  // Every hit is held: held_tokens >= cached + 1 covers all hit blocks (cached_tokens_of).
  // A lower-tier or remote hit is loaded into a fresh block.
  return blocks_for(req.held_tokens(cached_tokens_of(req, hits))) - hits + fresh_hits + evictable_hits;
}

bool PagedAllocator::do_can_admit(const AdmitRequest& req) const {
  return blocks_needed(req) <= num_free_blocks();
}

bool PagedAllocator::do_can_ever_admit(const AdmitRequest& req) const {
  return blocks_for(req.final_tokens()) <= gpu_.num_blocks() - region_blocks_;
}

BlockId PagedAllocator::evict_cached_block() {
  BlockHash evicted;
  const BlockId b = cache_->evict(evicted);
  if (tiers_) tiers_->on_gpu_evicted(evicted);  // written down a tier (write_back)
  gpu_.set_filled(b, 0);
  gpu_.add_ref(b);
  return b;
}

BlockId PagedAllocator::take_least_recently_released() {
  if (released_.victim_goes_first(cache_ && cache_->num_evictable() > 0 ? cache_->next_victim() : kNoBlock))
    return evict_cached_block();
  const BlockId b = released_.pop_front();
  gpu_.add_ref(b);
  return b;
}

BlockId PagedAllocator::take_gpu_block() {
  BlockId b;
  // Idle adapters go last: after every free block and every evictable cached block.
  if (gpu_.num_free() == 0 && adapters_.idle_blocks() > 0 && released_.size() == 0 &&
      (!cache_ || cache_->num_evictable() == 0))
    evict_idle_adapter();
  if (gpu_.num_free() > 0) {
    b = gpu_.take();
  } else if (single_free_queue_) {
    b = take_least_recently_released();
  } else {
    b = evict_cached_block();  // REQUIRES of the caller guarantees an evictable block exists
  }
  ++owned_blocks_;
  return b;
}

void PagedAllocator::release_gpu_block(BlockId b) {
  if (gpu_.drop_ref(b) != 0) return;
  --owned_blocks_;
  token_states_ -= gpu_.filled(b);
  if (cache_ && cache_->cached(b)) {
    if (single_free_queue_) released_.stamp(b);
    cache_->make_evictable(b);  // keeps its KV: a later request with this prefix reuses it
  } else if (single_free_queue_) {
    gpu_.set_filled(b, 0);
    released_.push_back(b);
  } else {
    gpu_.give_back(b);
  }
}

void PagedAllocator::release_gpu_table(const std::vector<BlockId>& table, std::int64_t tokens_held) {
  // Last blocks first: with LRU the deepest prefix blocks are evicted before their parents.
  if (cache_) {
    for (auto it = table.rbegin(); it != table.rend(); ++it) release_gpu_block(*it);
    return;
  }
  assert(entries_kept_ || (!single_free_queue_ && gpu_.shared_blocks() == 0));
  if (!single_free_queue_ && gpu_.shared_blocks() == 0) {
    // Every block of the table is its alone (ref_count 1) and holds what the table says
    // (check_sequence): they go back, last first, as below, without reading their entries.
    assert(!entries_kept_ ||
           std::all_of(table.begin(), table.end(), [&](BlockId b) { return gpu_.ref_count(b) == 1; }));
    assert(!entries_kept_ || std::accumulate(table.begin(), table.end(), std::int64_t{0},
                                             [&](std::int64_t sum, BlockId b) { return sum + gpu_.filled(b); }) ==
                                 tokens_held);
    gpu_.give_back_sole(table.rbegin(), table.rend());
    owned_blocks_ -= static_cast<std::int64_t>(table.size());
    token_states_ -= tokens_held;
    return;
  }
  // release_gpu_block's steps without a cache, the counters kept in registers.
  std::int64_t released = 0, tokens = 0;
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    const BlockId b = *it;
    if (gpu_.drop_ref(b) != 0) continue;
    ++released;
    tokens += gpu_.filled(b);
    if (single_free_queue_) {
      gpu_.set_filled(b, 0);
      released_.push_back(b);
    } else {
      gpu_.give_back(b);
    }
  }
  owned_blocks_ -= released;
  token_states_ -= tokens;
}

AdmitResult PagedAllocator::do_admit(const AdmitRequest& req) {
  std::int64_t evictable_hits = 0, fresh_hits = 0;
  const std::int64_t hits = count_prefix_hits(req, &evictable_hits, &fresh_hits);
  const std::int64_t cached = cached_tokens_of(req, hits);
  const std::int64_t tokens = req.held_tokens(cached);
  const std::int64_t n_blocks = blocks_for(tokens);
  if (n_blocks - hits + fresh_hits + evictable_hits > num_free_blocks()) return {};

  Sequence& s = slots_[new_slot(req.seq)];
  s.tokens = tokens;
  s.final_tokens = std::max(req.final_tokens(), req.tokens_at_admission());
  // Reserve for the known final length (no regrowth on the append path), within reason.
  s.table.reserve(static_cast<std::size_t>(std::min<std::int64_t>(blocks_for(s.final_tokens), 1024)));
  // Reuse GPU hits and claim lower-tier hits first, so that taking fresh blocks below can
  // evict neither (the GPU's victims move into the tiers).
  for (std::int64_t i = 0; i < hits; ++i) {
    const BlockHash h = req.prompt_block_hashes[static_cast<std::size_t>(i)];
    BlockId b = cache_->lookup(h);
    if (b == kNoBlock) {  // in a lower tier or remote: loaded into a block taken below
      const std::int64_t served = std::min<std::int64_t>(block_size_, cached - i * block_size_);
      if (const std::int32_t t = tiers_ ? tiers_->find(h) : -1; t >= 0) {
        tiers_->load(h, t, served, req.readmission);
      } else {  // count_prefix_hits found it at the remote source
        ++fetched_.blocks;
        (req.readmission ? fetched_.readmission_hit_tokens : fetched_.hit_tokens) += served;
      }
      s.table.push_back(kNoBlock);
      continue;
    }
    if (cache_->evictable(b)) {
      cache_->reuse(b);
      ++owned_blocks_;
      token_states_ += gpu_.filled(b);
    }
    cache_->record_hit(b);
    gpu_.add_ref(b);
    s.table.push_back(b);
  }
  for (std::int64_t i = 0; fresh_hits > 0 && i < hits; ++i) {
    BlockId& slot = s.table[static_cast<std::size_t>(i)];
    if (slot != kNoBlock) continue;
    slot = take_gpu_block();
    gpu_.set_filled(slot, block_size_);
    token_states_ += block_size_;
    cache_block(slot, req.prompt_block_hashes[static_cast<std::size_t>(i)]);
  }
  const auto n_hashes = static_cast<std::int64_t>(req.prompt_block_hashes.size());
  // Full prompt blocks held now are cached at once; those of later chunks as append fills them.
  const std::int64_t hashed_now = std::min(n_hashes, tokens / block_size_);
  if (!cache_ && gpu_.num_free() >= n_blocks - hits) {
    // The loop below off the free list alone, the counters kept in registers.
    std::int64_t filled = 0;
    for (std::int64_t i = hits; i < n_blocks; ++i) {
      const BlockId b = entries_kept_ ? gpu_.take() : gpu_.take_unwritten();
      const auto fill = static_cast<std::int32_t>(std::min<std::int64_t>(block_size_, tokens - i * block_size_));
      if (entries_kept_) gpu_.set_filled(b, fill);
      filled += fill;
      s.table.push_back(b);
    }
    owned_blocks_ += n_blocks - hits;
    token_states_ += filled;
  }
  for (std::int64_t i = static_cast<std::int64_t>(s.table.size()); i < n_blocks; ++i) {
    BlockId b = take_gpu_block();
    auto fill = static_cast<std::int32_t>(std::min<std::int64_t>(block_size_, tokens - i * block_size_));
    gpu_.set_filled(b, fill);
    token_states_ += fill;
    if (cache_ && i < hashed_now) cache_block(b, req.prompt_block_hashes[static_cast<std::size_t>(i)]);
    s.table.push_back(b);
  }
  logical_blocks_ += n_blocks;
  settle_last(s);
  check_sequence(s);
  if (cache_ && hashed_now < n_hashes) {
    s.prompt_hashes.assign(req.prompt_block_hashes.begin(), req.prompt_block_hashes.end());
    s.caching_prompt = true;
    s.hashed_blocks = static_cast<std::size_t>(hashed_now);
  }

  if (cache_) {
    auto& st = cache_->stats();
    if (req.readmission) {
      st.readmission_hit_tokens += cached;
    } else if (!req.received) {
      st.prompt_tokens += req.prompt_tokens;
      st.hit_tokens += cached;
      st.hit_blocks += hits;
      st.miss_blocks += n_hashes - hits;
    }
  }
  return {.admitted = true, .cached_tokens = cached, .held_tokens = tokens};
}

void PagedAllocator::cache_filled_prompt_blocks(Sequence& s) {
  // Pending (speculated) tokens are never cached: only blocks full of committed tokens.
  const std::size_t full = std::min(s.prompt_hashes.size(), static_cast<std::size_t>(s.committed() / block_size_));
  for (; s.hashed_blocks < full; ++s.hashed_blocks)
    cache_block(s.table[s.hashed_blocks], s.prompt_hashes[s.hashed_blocks]);
  if (s.hashed_blocks == s.prompt_hashes.size()) {
    s.prompt_hashes = {};  // the prompt is complete: nothing left to cache
    s.caching_prompt = false;
    s.hashed_blocks = 0;
  }
}

std::int64_t PagedAllocator::append_cost(SeqId seq, const Sequence& s, std::int64_t n) const {
  if (n < 0) misuse(seq_name(seq) + ": cannot append " + std::to_string(n) + " tokens");
  if (s.swapped) misuse(seq_name(seq) + " is swapped out; swap it in before appending");
  if (n == 0) return 0;
  // A partly filled last block (room > 0) shared with a fork is copied on the first write.
  const bool cow = s.room > 0 && last_shared(s);
  return (cow ? 1 : 0) + (n > s.room ? blocks_for(n - s.room) : 0);
}

std::int64_t PagedAllocator::blocks_to_append(SeqId seq, std::int64_t n) const {
  return append_cost(seq, get(seq), n);
}

bool PagedAllocator::can_append(SeqId seq, std::int64_t n) const {
  return blocks_to_append(seq, n) <= num_free_blocks();
}

std::int64_t PagedAllocator::do_max_group_slots(const AdmitRequest& req, std::int32_t width) const {
  // The full prompt blocks are shared; each sequence holds its own copy of the partial last
  // prompt block, grown to prompt + output - 1 tokens.
  const std::int64_t own = blocks_for(req.prompt_tokens % block_size_ + std::max<std::int64_t>(req.output_tokens - 1, 0));
  return (req.prompt_tokens / block_size_ + width * own) * block_size_;
}

bool PagedAllocator::can_append_all(std::span<const SeqHandle> group, std::int64_t n) const {
  // Summed as if each grew alone: a conservative count when sequences share a partly filled
  // last block (the last of them to write would need no copy).
  std::int64_t need = 0;
  for (const SeqHandle& h : group) need += append_cost(h.id, at(h), n);
  return need <= num_free_blocks();
}

bool PagedAllocator::append_slow(Sequence& s, SeqId seq, std::int64_t n, bool proposing) {
  if (s.pending > 0 && !proposing)
    misuse(seq_name(seq) + " has " + std::to_string(s.pending) +
           " proposed (speculative) slots pending; verify_proposed before appending");
  if (append_cost(seq, s, n) > num_free_blocks()) return false;
  if (n == 0) return true;
  if (s.room > 0) {
    BlockId last = s.last;
    if (last_shared(s)) {  // copy-on-write: the first write to a shared block
      BlockId copy = take_gpu_block();
      gpu_.set_filled(copy, gpu_.filled(last));
      token_states_ += gpu_.filled(last);
      pending_copies_.push_back({last, copy});
      release_gpu_block(last);
      s.table.back() = s.last = last = copy;
    }
    const auto w = static_cast<std::int32_t>(std::min<std::int64_t>(s.room, n));
    if (entries_kept_) gpu_.set_filled(last, gpu_.filled(last) + w);
    token_states_ += w;
    s.tokens += w;
    s.room -= w;
    n -= w;
  }
  while (n > 0) {
    BlockId b = take_gpu_block();
    auto w = static_cast<std::int32_t>(std::min<std::int64_t>(block_size_, n));
    gpu_.set_filled(b, w);
    token_states_ += w;
    s.table.push_back(b);
    s.last = b;
    s.room = block_size_ - w;
    ++logical_blocks_;
    s.tokens += w;
    n -= w;
  }
  s.final_tokens = std::max(s.final_tokens, s.tokens);
  if (s.caching_prompt) cache_filled_prompt_blocks(s);
  check_sequence(s);
  return true;
}

bool PagedAllocator::fork(SeqId parent, SeqId child) {
  const std::uint32_t pi = handle(parent).slot;
  if (slots_[pi].swapped) misuse("cannot fork swapped-out " + seq_name(parent));
  if (slots_[pi].pending > 0) misuse("cannot fork " + seq_name(parent) + " with proposed slots pending");
  if (index_.contains(child)) misuse("fork target " + seq_name(child) + " is already live");
  keep_entries();  // the parent's blocks become shared
  Sequence& c = slots_[new_slot(child)];
  const Sequence& p = slots_[pi];  // after new_slot, which may move the slots
  // The parent caches its prompt's blocks; the child shares them (no prompt hashes of its own).
  c.tokens = p.tokens;
  c.final_tokens = p.final_tokens;
  c.table.assign(p.table.begin(), p.table.end());
  for (BlockId b : c.table) gpu_.add_ref(b);
  logical_blocks_ += static_cast<std::int64_t>(c.table.size());
  settle_last(c);
  check_sequence(c);
  return true;
}

bool PagedAllocator::cache_computed_blocks(SeqId seq, std::span<const BlockHash> keys) {
  if (!cache_) return false;
  const Sequence& s = get(seq);
  if (s.swapped) misuse(seq_name(seq) + " is swapped out; its blocks cannot be cached");
  const std::size_t full = std::min(keys.size(), static_cast<std::size_t>(s.committed() / block_size_));
  for (std::size_t i = 0; i < full; ++i)
    if (!cache_->cached(s.table[i])) cache_block(s.table[i], keys[i]);
  return true;
}

void PagedAllocator::free(SeqId seq) {
  const std::uint32_t i = handle(seq).slot;
  Sequence& s = slots_[i];
  // The slot's second line is read only when it holds something: pending_rejected and
  // pending_lookahead are parts of `pending`, prompt_hashes is empty unless caching_prompt.
  if (s.pending != 0) {  // a preemption mid-step
    proposed_accepted_ -= s.pending - s.pending_rejected - s.pending_lookahead;
    proposed_rejected_ -= s.pending_rejected;
    lookahead_ -= s.pending_lookahead;
    s.pending = s.pending_rejected = s.pending_lookahead = 0;
  }
  assert(s.pending_rejected == 0 && s.pending_lookahead == 0);
  if (s.caching_prompt) {
    s.prompt_hashes.clear();
    s.hashed_blocks = 0;
    s.caching_prompt = false;
  }
  if (s.swapped) {
    for (BlockId b : s.table)
      if (cpu_.drop_ref(b) == 0) cpu_.give_back(b);
  } else {
    release_gpu_table(s.table, s.tokens);
    logical_blocks_ -= static_cast<std::int64_t>(s.table.size());
  }
  s.live = false;
  s.table.clear();
  index_.erase(seq);
  free_slots_.push_back(i);
}

void PagedAllocator::keep_entries() {
  if (entries_kept_) return;
  for (const Sequence& s : slots_) {
    if (!s.live || s.swapped) continue;
    for (std::size_t i = 0; i < s.table.size(); ++i) {
      const std::int64_t fill =
          std::min<std::int64_t>(block_size_, s.tokens - static_cast<std::int64_t>(i) * block_size_);
      gpu_.own(s.table[i], static_cast<std::int32_t>(fill));
    }
  }
  entries_kept_ = true;
}

AllocatorStats PagedAllocator::stats() const {
  AllocatorStats st;
  st.logical_blocks = logical_blocks_;
  st.physical_blocks = owned_blocks_;
  st.pending_copies = static_cast<std::int64_t>(pending_copies_.size());
  if (cache_) st.prefix = cache_->stats();
  return st;
}

std::vector<BlockMove> PagedAllocator::take_pending_copies() {
  std::vector<BlockMove> out;
  out.swap(pending_copies_);
  return out;
}

MemoryBreakdown PagedAllocator::breakdown() const {
  MemoryBreakdown b;
  b.proposed_accepted = proposed_accepted_;
  b.proposed_rejected = proposed_rejected_;
  b.lookahead = lookahead_;
  b.token_states = token_states_ - proposed_accepted_ - proposed_rejected_ - lookahead_;
  b.rounding = owned_blocks_ * block_size_ - token_states_;
  b.adapter_weights = adapter_weight_blocks() * block_size_;
  b.free = (gpu_.num_blocks() - owned_blocks_ - adapter_weight_blocks()) * block_size_;
  b.cached_free = (cache_ ? cache_->num_evictable() : 0) * block_size_;
  return b;
}

}  // namespace pagesim::alloc
