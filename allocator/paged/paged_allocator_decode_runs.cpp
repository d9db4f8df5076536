// PagedAllocator: decode runs, identical decode rounds promised and applied at once.
#include "allocator/paged/paged_allocator.h"

#include <algorithm>
#include <cassert>

#include <boost/container/small_vector.hpp>

#include "allocator/paged/paged_misuse.h"

namespace pagesim::alloc {
namespace {

// Scratch on the stack, not in the allocator: in a fleet each replica's allocator is cold
// when its run settles, and buffers of its own were cold lines written at every call. Inline
// room for 256 sequences (the scheduler's default max_num_seqs, SchedulerSettings, as vLLM's)
// and blocks of up to 64 tokens; more spill to the heap.
template <class T>
using SeqScratch = boost::container::small_vector<T, 256>;
template <class T>
using RoomScratch = boost::container::small_vector<T, 65>;

}  // namespace

void PagedAllocator::decode_run_rounds(std::span<const SeqHandle> seqs, std::int64_t keep_free_slots,
                                       std::int64_t max_rounds, DecodeRounds* out) const {
  out->rounds = 0;
  const std::int64_t B = block_size_;
  // by_room[k]: sequences with k free slots in their last block; each takes a block in the
  // rounds j with (j - 1) % B == k.
  RoomScratch<std::int64_t> by_room(static_cast<std::size_t>(B), 0);
  for (const SeqHandle& h : seqs) {
    const Sequence& s = at(h);
    if (s.swapped || s.pending > 0 || s.caching_prompt || (s.room > 0 && last_shared(s)))
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
  out->seqs = n;
  out->block_slots = B;
  out->cycle_blocks.resize(static_cast<std::size_t>(B));
  for (std::int64_t k = 0; k < B; ++k)
    out->cycle_blocks[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(by_room[static_cast<std::size_t>(k)]);
}

void PagedAllocator::grow_rounds(std::span<const SeqHandle> seqs, std::int64_t rounds) {
  if (rounds <= 0) return;
  const std::int64_t B = block_size_;
  // New blocks in the order the rounds one by one take them: round by round, and in seqs'
  // order within a round; a sequence with k free slots takes one in rounds j with
  // (j - 1) % B == k. Counting sort of the sequences by room (kept order).
  SeqScratch<Sequence*> seq(seqs.size());
  // first[k]: where room k starts in `order`.
  RoomScratch<std::uint32_t> first(static_cast<std::size_t>(B) + 1, 0);
  SeqScratch<std::uint32_t> order(seqs.size());
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    seq[i] = &at(seqs[i]);
    ++first[static_cast<std::size_t>(seq[i]->room) + 1];
  }
  for (std::size_t k = 1; k < first.size(); ++k) first[k] += first[k - 1];
  {
    RoomScratch<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < seqs.size(); ++i)
      order[fill[static_cast<std::size_t>(seq[i]->room)]++] = static_cast<std::uint32_t>(i);
  }
  for (std::int64_t j0 = 0; j0 < rounds; j0 += B)  // j0: the cycle's first round, from 0
    for (std::int64_t k = 0; k < B && j0 + k < rounds; ++k)
      for (std::uint32_t o = first[static_cast<std::size_t>(k)]; o < first[static_cast<std::size_t>(k) + 1]; ++o) {
        assert(gpu_.num_free() > 0 && "decode_run_rounds promised blocks off the free list");
        const BlockId b = entries_kept_ ? gpu_.take() : gpu_.take_unwritten();
        ++owned_blocks_;
        seq[order[o]]->table.push_back(b);
        ++logical_blocks_;
      }
  for (Sequence* sp : seq) {
    Sequence& s = *sp;
    assert((s.room == 0 || !entries_kept_ || gpu_.ref_count(s.last) == 1) && !s.swapped && !s.caching_prompt);
    // The old last block fills up (or takes all the tokens); each new block holds B tokens
    // but the last, which holds what is left.
    token_states_ += rounds;
    s.tokens += rounds;
    if (rounds <= s.room) {
      s.room -= static_cast<std::int32_t>(rounds);  // settle_last's, the table (cold) unread: same last block
      // filled(last) == B - room: a store, without reading the block's entry (cold in a fleet).
      if (entries_kept_) gpu_.set_filled(s.last, static_cast<std::int32_t>(B) - s.room);
    } else {
      if (entries_kept_) {
        if (s.room > 0) gpu_.set_filled(s.last, static_cast<std::int32_t>(B));
        const std::int64_t rest = rounds - s.room;  // tokens in new blocks
        const std::int64_t fresh = blocks_for(rest);
        const std::size_t from = s.table.size() - static_cast<std::size_t>(fresh);
        for (std::size_t k = from; k + 1 < s.table.size(); ++k)
          gpu_.set_filled(s.table[k], static_cast<std::int32_t>(B));
        gpu_.set_filled(s.table.back(), static_cast<std::int32_t>(rest - (fresh - 1) * B));
      }
      settle_last(s);
    }
    s.final_tokens = std::max(s.final_tokens, s.tokens);
    check_sequence(s);
  }
}

}  // namespace pagesim::alloc
