#include "allocator/paged/paged_allocator.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <limits>
#include <string>
#include <unordered_map>

namespace pagesim::alloc {
namespace {

std::string seq_name(SeqId seq) { return "sequence " + std::to_string(seq); }

[[noreturn]] void misuse(const std::string& what) { throw AllocatorError("paged allocator: " + what); }

[[noreturn]] void broken(const std::string& what) { throw InvariantViolation("paged allocator: " + what); }

}  // namespace

PagedAllocator::PagedAllocator(const PagedAllocatorSettings& s)
    : block_size_(s.block_size),
      block_shift_(s.block_size > 0 ? std::countr_zero(static_cast<std::uint32_t>(s.block_size)) : 0),
      gpu_(std::max<std::int64_t>(s.num_blocks, 0), std::max(s.block_size, 1)),
      cpu_(std::max<std::int64_t>(s.num_cpu_blocks, 0), std::max(s.block_size, 1)),
      single_free_queue_(s.single_free_queue) {
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
  auto it = index_.find(seq);
  if (it == index_.end()) misuse(seq_name(seq) + " is not live");
  return slots_[it->second];
}

PagedAllocator::Sequence& PagedAllocator::get(SeqId seq) {
  return const_cast<Sequence&>(static_cast<const PagedAllocator*>(this)->get(seq));
}

SeqHandle PagedAllocator::handle(SeqId seq) const {
  auto it = index_.find(seq);
  if (it == index_.end()) misuse(seq_name(seq) + " is not live");
  return {.id = seq, .slot = it->second};
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
  index_.emplace(seq, i);
  Sequence& s = slots_[i];
  s.id = seq;
  s.tokens = s.final_tokens = 0;
  s.last = kNoBlock;
  s.room = 0;
  s.live = true;
  s.swapped = false;
  s.table.clear();
  s.prompt_hashes.clear();
  s.hashed_blocks = 0;
  s.pending = s.pending_rejected = s.pending_lookahead = 0;
  return i;
}

void PagedAllocator::check_request(const AdmitRequest& req) const {
  if (index_.count(req.seq)) misuse(seq_name(req.seq) + " is already live");
  if (req.prompt_tokens < 1)
    misuse(seq_name(req.seq) + ": prompt_tokens must be >= 1, got " + std::to_string(req.prompt_tokens));
  if (req.output_tokens < 0 || req.generated_tokens < 0)
    misuse(seq_name(req.seq) + ": output_tokens and generated_tokens must be >= 0");
  if (req.max_new_tokens < 1)
    misuse(seq_name(req.seq) + ": max_new_tokens must be >= 1, got " + std::to_string(req.max_new_tokens));
  if (static_cast<std::int64_t>(req.prompt_block_hashes.size()) > req.tokens_at_admission() / block_size_)
    misuse(seq_name(req.seq) + ": " + std::to_string(req.prompt_block_hashes.size()) +
           " prompt block hashes for only " + std::to_string(req.tokens_at_admission() / block_size_) +
           " full blocks of prompt and generated tokens");
}

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

std::int64_t PagedAllocator::blocks_to_admit(const AdmitRequest& req) const {
  check_request(req);
  std::int64_t evictable_hits = 0, fresh_hits = 0;
  std::int64_t hits = count_prefix_hits(req, &evictable_hits, &fresh_hits);
  // Every hit is held: held_tokens >= cached + 1 covers all hit blocks (cached_tokens_of).
  // A lower-tier or remote hit is loaded into a fresh block.
  return blocks_for(req.held_tokens(cached_tokens_of(req, hits))) - hits + fresh_hits + evictable_hits;
}

bool PagedAllocator::can_admit(const AdmitRequest& req) const {
  return blocks_to_admit(req) <= num_free_blocks();
}

bool PagedAllocator::can_ever_admit(const AdmitRequest& req) const {
  return blocks_for(req.final_tokens()) <= gpu_.num_blocks() - region_blocks_;
}

std::int64_t PagedAllocator::adapter_blocks_to_pin(AdapterId a, std::int64_t blocks) const {
  if (!adapters_.resident(a)) return blocks;
  return adapters_.pins(a) == 0 ? adapters_.blocks_of(a) : 0;
}

bool PagedAllocator::pin_adapter(AdapterId a, std::int64_t blocks) {
  assert(blocks >= 1 && adapter_blocks_to_pin(a, blocks) <= num_free_blocks());
  const bool load = !adapters_.resident(a);
  if (load) {
    std::vector<BlockId> pages;
    pages.reserve(static_cast<std::size_t>(blocks));
    for (std::int64_t i = 0; i < blocks; ++i) {
      pages.push_back(take_gpu_block());
      --owned_blocks_;  // adapter weights, not KV (adapter_weight_blocks)
    }
    adapters_.add(a, std::move(pages));
  }
  adapters_.pin(a);
  return load;
}

void PagedAllocator::unpin_adapter(AdapterId a) {
  if (!adapters_.resident(a) || adapters_.pins(a) == 0) misuse("adapter " + std::to_string(a) + " is not pinned");
  adapters_.unpin(a);
}

void PagedAllocator::evict_idle_adapter() {
  for (BlockId b : adapters_.remove(adapters_.victim())) {
    gpu_.drop_ref(b);
    gpu_.give_back(b);
  }
  ++adapter_evictions_;
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

void PagedAllocator::release_gpu_table(const std::vector<BlockId>& table) {
  // Last blocks first: with LRU the deepest prefix blocks are evicted before their parents.
  if (cache_) {
    for (auto it = table.rbegin(); it != table.rend(); ++it) release_gpu_block(*it);
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

AdmitResult PagedAllocator::admit(const AdmitRequest& req) {
  std::int64_t evictable_hits = 0, fresh_hits = 0;
  check_request(req);
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
      const BlockId b = gpu_.take();
      const auto fill = static_cast<std::int32_t>(std::min<std::int64_t>(block_size_, tokens - i * block_size_));
      gpu_.set_filled(b, fill);
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
    s.hashed_blocks = 0;
  }
}

std::int64_t PagedAllocator::append_cost(SeqId seq, const Sequence& s, std::int64_t n) const {
  if (n < 0) misuse(seq_name(seq) + ": cannot append " + std::to_string(n) + " tokens");
  if (s.swapped) misuse(seq_name(seq) + " is swapped out; swap it in before appending");
  if (n == 0) return 0;
  // A partly filled last block (room > 0) shared with a fork is copied on the first write.
  const bool cow = s.room > 0 && gpu_.ref_count(s.last) > 1;
  return (cow ? 1 : 0) + (n > s.room ? blocks_for(n - s.room) : 0);
}

void PagedAllocator::decode_run_rounds(std::span<const SeqHandle> seqs, std::int64_t keep_free_slots,
                                       std::int64_t max_rounds, DecodeRounds* out) const {
  out->rounds = 0;
  const std::int64_t B = block_size_;
  // by_room[k]: sequences with k free slots in their last block; each takes a block in the
  // rounds j with (j - 1) % B == k.
  std::vector<std::int64_t>& by_room = run_by_room_;
  by_room.assign(static_cast<std::size_t>(B), 0);
  for (const SeqHandle& h : seqs) {
    const Sequence& s = at(h);
    if (s.swapped || s.pending > 0 || !s.prompt_hashes.empty() || (s.room > 0 && gpu_.ref_count(s.last) != 1))
      return;
    ++by_room[static_cast<std::size_t>(s.room)];
  }
  const auto n = static_cast<std::int64_t>(seqs.size());
  if (n == 0 || max_rounds <= 0) return;
  // Blocks the rounds may take: off the free list only (anything else evicts), and leaving
  // keep_free_slots free.
  const std::int64_t keep_blocks = (std::max<std::int64_t>(keep_free_slots, 0) + B - 1) / B;
  const std::int64_t budget =
      std::min(gpu_.num_free(), gpu_.num_blocks() - owned_blocks_ - adapter_weight_blocks() - keep_blocks);
  if (budget < 0) return;
  // Every B rounds take n blocks; then the phases in order while the budget lasts.
  std::int64_t rounds = budget / n >= max_rounds / B + 1 ? max_rounds : budget / n * B;
  if (rounds < max_rounds) {
    std::int64_t left = budget - budget / n * n;
    for (std::int64_t k = 0; k < B && rounds < max_rounds && by_room[static_cast<std::size_t>(k)] <= left; ++k) {
      left -= by_room[static_cast<std::size_t>(k)];
      ++rounds;
    }
  }
  out->rounds = rounds;
  out->cycle.assign(static_cast<std::size_t>(B), DecodeRound{});
  for (std::int64_t k = 0; k < B; ++k) {
    DecodeRound& r = out->cycle[static_cast<std::size_t>(k)];
    const std::int64_t c = by_room[static_cast<std::size_t>(k)];
    r.memory.token_states = n;
    r.memory.rounding = c * B - n;
    r.memory.free = -c * B;
    r.blocks = c;
  }
}

void PagedAllocator::grow_rounds(std::span<const SeqHandle> seqs, std::int64_t rounds) {
  if (rounds <= 0) return;
  const std::int64_t B = block_size_;
  // New blocks in the order the rounds one by one take them: round by round, and in seqs'
  // order within a round; a sequence with k free slots takes one in rounds j with
  // (j - 1) % B == k. Counting sort of the sequences by room (kept order), into scratch
  // buffers reused from call to call.
  std::vector<Sequence*>& seq = run_seqs_;
  std::vector<std::uint32_t>& first = run_first_;  // first[k]: where room k starts in `order`
  std::vector<std::uint32_t>& order = run_order_;
  seq.resize(seqs.size());
  first.assign(static_cast<std::size_t>(B) + 1, 0);
  order.resize(seqs.size());
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    seq[i] = &at(seqs[i]);
    ++first[static_cast<std::size_t>(seq[i]->room) + 1];
  }
  for (std::size_t k = 1; k < first.size(); ++k) first[k] += first[k - 1];
  {
    std::vector<std::uint32_t>& fill = run_fill_;
    fill.assign(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < seqs.size(); ++i) order[fill[static_cast<std::size_t>(seq[i]->room)]++] = static_cast<std::uint32_t>(i);
  }
  for (std::int64_t j0 = 0; j0 < rounds; j0 += B)  // j0: the cycle's first round, from 0
    for (std::int64_t k = 0; k < B && j0 + k < rounds; ++k)
      for (std::uint32_t o = first[static_cast<std::size_t>(k)]; o < first[static_cast<std::size_t>(k) + 1]; ++o) {
        assert(gpu_.num_free() > 0 && "decode_run_rounds promised blocks off the free list");
        const BlockId b = gpu_.take();
        ++owned_blocks_;
        seq[order[o]]->table.push_back(b);
        ++logical_blocks_;
      }
  for (Sequence* sp : seq) {
    Sequence& s = *sp;
    assert((s.room == 0 || gpu_.ref_count(s.last) == 1) && !s.swapped && s.prompt_hashes.empty());
    // The old last block fills up (or takes all the tokens); each new block holds B tokens
    // but the last, which holds what is left.
    if (rounds <= s.room) {
      gpu_.set_filled(s.last, gpu_.filled(s.last) + static_cast<std::int32_t>(rounds));
    } else {
      if (s.room > 0) gpu_.set_filled(s.last, static_cast<std::int32_t>(B));
      const std::int64_t rest = rounds - s.room;  // tokens in new blocks
      const std::int64_t fresh = blocks_for(rest);
      const std::size_t from = s.table.size() - static_cast<std::size_t>(fresh);
      for (std::size_t k = from; k + 1 < s.table.size(); ++k) gpu_.set_filled(s.table[k], static_cast<std::int32_t>(B));
      gpu_.set_filled(s.table.back(), static_cast<std::int32_t>(rest - (fresh - 1) * B));
    }
    token_states_ += rounds;
    s.tokens += rounds;
    settle_last(s);
    s.final_tokens = std::max(s.final_tokens, s.tokens);
    check_sequence(s);
  }
}

std::int64_t PagedAllocator::blocks_to_append(SeqId seq, std::int64_t n) const {
  return append_cost(seq, get(seq), n);
}

bool PagedAllocator::can_append(SeqId seq, std::int64_t n) const {
  return blocks_to_append(seq, n) <= num_free_blocks();
}

std::int64_t PagedAllocator::max_group_slots(const AdmitRequest& req, std::int32_t width) const {
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
    if (gpu_.ref_count(last) > 1) {  // copy-on-write: the first write to a shared block
      BlockId copy = take_gpu_block();
      gpu_.set_filled(copy, gpu_.filled(last));
      token_states_ += gpu_.filled(last);
      pending_copies_.push_back({last, copy});
      release_gpu_block(last);
      s.table.back() = s.last = last = copy;
    }
    const auto w = static_cast<std::int32_t>(std::min<std::int64_t>(s.room, n));
    gpu_.set_filled(last, gpu_.filled(last) + w);
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
  if (!s.prompt_hashes.empty()) cache_filled_prompt_blocks(s);
  check_sequence(s);
  return true;
}

void PagedAllocator::check_sequence_now(const Sequence& s) const {
  const auto blocks = static_cast<std::int64_t>(s.table.size());
  if (blocks != blocks_for(s.tokens) || s.last != (s.table.empty() ? kNoBlock : s.table.back()) ||
      s.room != blocks * block_size_ - s.tokens ||
      (s.last != kNoBlock && (s.swapped ? cpu_ : gpu_).filled(s.last) != block_size_ - s.room))
    broken(seq_name(s.id) + " holds " + std::to_string(s.tokens) + " tokens in " + std::to_string(blocks) +
           " blocks, keeps last block " + std::to_string(s.last) + " with " + std::to_string(s.room) +
           " free slots; its table ends in " + (s.table.empty() ? "nothing" : std::to_string(s.table.back())));
}

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
  if (!s.prompt_hashes.empty()) cache_filled_prompt_blocks(s);
  check_sequence(s);
}

bool PagedAllocator::fork(SeqId parent, SeqId child) {
  const std::uint32_t pi = handle(parent).slot;
  if (slots_[pi].swapped) misuse("cannot fork swapped-out " + seq_name(parent));
  if (slots_[pi].pending > 0) misuse("cannot fork " + seq_name(parent) + " with proposed slots pending");
  if (index_.count(child)) misuse("fork target " + seq_name(child) + " is already live");
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
  proposed_accepted_ -= s.pending - s.pending_rejected - s.pending_lookahead;  // a preemption mid-step
  proposed_rejected_ -= s.pending_rejected;
  lookahead_ -= s.pending_lookahead;
  s.pending = s.pending_rejected = s.pending_lookahead = 0;
  if (s.swapped) {
    for (BlockId b : s.table)
      if (cpu_.drop_ref(b) == 0) cpu_.give_back(b);
  } else {
    release_gpu_table(s.table);
    logical_blocks_ -= static_cast<std::int64_t>(s.table.size());
  }
  s.live = false;
  s.table.clear();
  s.prompt_hashes.clear();
  index_.erase(seq);
  free_slots_.push_back(i);
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

std::optional<std::vector<BlockMove>> PagedAllocator::swap_out(std::span<const SeqId> group) {
  std::unordered_map<BlockId, BlockId> to_cpu;  // GPU block -> CPU block (kNoBlock until taken)
  std::vector<BlockId> order;                   // distinct GPU blocks, first-seen order
  for (SeqId id : group) {
    const Sequence& s = get(id);
    if (s.swapped) misuse(seq_name(id) + " is already swapped out");
    if (s.pending > 0) misuse("cannot swap out " + seq_name(id) + " with proposed slots pending");
    for (BlockId b : s.table)
      if (to_cpu.emplace(b, kNoBlock).second) order.push_back(b);
  }
  const auto need = static_cast<std::int64_t>(order.size());
  if (need > cpu_.num_free() + (tiers_ ? tiers_->cpu_reclaimable() : 0)) return std::nullopt;
  if (need > cpu_.num_free()) tiers_->reclaim_cpu(need - cpu_.num_free());  // swapping comes first

  std::vector<BlockMove> moves;
  moves.reserve(order.size());
  for (BlockId g : order) {
    BlockId c = cpu_.take();
    cpu_.set_filled(c, gpu_.filled(g));
    to_cpu[g] = c;
    moves.push_back({g, c});
  }
  for (SeqId id : group) {
    Sequence& s = get(id);
    for (BlockId& b : s.table) {
      BlockId c = to_cpu[b];
      release_gpu_block(b);
      b = c;
    }
    logical_blocks_ -= static_cast<std::int64_t>(s.table.size());
    s.swapped = true;
    settle_last(s);
    check_sequence(s);
  }
  // take() gave each CPU block one reference; add the rest.
  for (SeqId id : group)
    for (BlockId c : get(id).table) cpu_.add_ref(c);
  for (const BlockMove& m : moves) cpu_.drop_ref(m.dst);
  return moves;
}

std::int64_t PagedAllocator::blocks_to_swap_in(std::span<const SeqId> group) const {
  std::vector<BlockId> distinct;
  for (SeqId id : group) {
    const Sequence& s = get(id);
    if (!s.swapped) misuse(seq_name(id) + " is not swapped out");
    distinct.insert(distinct.end(), s.table.begin(), s.table.end());
  }
  std::sort(distinct.begin(), distinct.end());
  return std::unique(distinct.begin(), distinct.end()) - distinct.begin();
}

std::optional<std::vector<BlockMove>> PagedAllocator::swap_in(std::span<const SeqId> group) {
  if (blocks_to_swap_in(group) > num_free_blocks()) return std::nullopt;
  std::unordered_map<BlockId, BlockId> to_gpu;
  std::vector<BlockMove> moves;
  for (SeqId id : group) {
    Sequence& s = get(id);
    for (BlockId& c : s.table) {
      auto [it, fresh] = to_gpu.emplace(c, kNoBlock);
      if (fresh) {
        it->second = take_gpu_block();
        gpu_.set_filled(it->second, cpu_.filled(c));
        token_states_ += cpu_.filled(c);
        moves.push_back({c, it->second});
      } else {
        gpu_.add_ref(it->second);
      }
      if (cpu_.drop_ref(c) == 0) cpu_.give_back(c);
      c = it->second;
    }
    logical_blocks_ += static_cast<std::int64_t>(s.table.size());
    s.swapped = false;
    settle_last(s);
    check_sequence(s);
  }
  return moves;
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

void PagedAllocator::validate() const {
  const std::int64_t n = gpu_.num_blocks();
  std::vector<std::int32_t> gpu_refs(static_cast<std::size_t>(n), 0);
  std::vector<std::int32_t> cpu_refs(static_cast<std::size_t>(cpu_.num_blocks()), 0);
  std::int64_t logical = 0;
  std::int64_t live = 0;
  std::int64_t accepted = 0, rejected = 0, lookahead = 0;
  for (std::size_t slot = 0; slot < slots_.size(); ++slot) {
    const Sequence& s = slots_[slot];
    if (!s.live) continue;
    ++live;
    const SeqId id = s.id;
    if (auto it = index_.find(id); it == index_.end() || it->second != slot)
      broken(seq_name(id) + " in slot " + std::to_string(slot) + " is not indexed by its id");
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
      if (pool.filled(b) != expect)
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
    if (!s.prompt_hashes.empty() &&
        (s.swapped || s.hashed_blocks != std::min(s.prompt_hashes.size(), static_cast<std::size_t>(s.committed() / block_size_))))
      broken(seq_name(id) + " has cached " + std::to_string(s.hashed_blocks) + " of " +
             std::to_string(s.prompt_hashes.size()) + " prompt blocks but holds " + std::to_string(s.tokens) +
             " tokens" + (s.swapped ? " swapped out" : ""));
  }
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

  auto check_pool = [](const BlockPool& pool, const std::vector<std::int32_t>& refs, const char* what,
                       auto&& is_unowned_kept) {
    std::vector<bool> on_free(refs.size(), false);
    for (BlockId b : pool.free_list()) {
      if (on_free[static_cast<std::size_t>(b)])
        broken(std::string(what) + " block " + std::to_string(b) + " is on the free list twice");
      on_free[static_cast<std::size_t>(b)] = true;
    }
    std::int64_t owned = 0, filled = 0;
    for (std::size_t b = 0; b < refs.size(); ++b) {
      auto id = static_cast<BlockId>(b);
      if (pool.ref_count(id) != refs[b])
        broken(std::string(what) + " block " + std::to_string(b) + " has ref_count " +
               std::to_string(pool.ref_count(id)) + " but " + std::to_string(refs[b]) + " block-table references");
      if (on_free[b] && (refs[b] != 0 || is_unowned_kept(id)))
        broken(std::string(what) + " block " + std::to_string(b) + " is both free and owned or cached");
      if (!on_free[b] && refs[b] == 0 && !is_unowned_kept(id))
        broken(std::string(what) + " block " + std::to_string(b) + " is neither free, owned nor cached");
      if (refs[b] > 0) {
        ++owned;
        filled += pool.filled(id);
      }
    }
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
  auto [owned, filled] = check_pool(gpu_, gpu_refs, "GPU", [&](BlockId b) {
    return (cache_ && cache_->evictable(b)) || in_released[static_cast<std::size_t>(b)];
  });
  check_pool(cpu_, cpu_refs, "CPU", [this](BlockId b) { return tiers_ && tiers_->holds_cpu_block(b); });
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

}  // namespace pagesim::alloc

namespace pagesim::alloc {

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
