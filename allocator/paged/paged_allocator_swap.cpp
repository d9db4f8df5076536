// PagedAllocator: swapping groups of sequences to and from the CPU pool.
#include "allocator/paged/paged_allocator.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <vector>

#include "allocator/paged/paged_misuse.h"

namespace pagesim::alloc {

using paged_detail::misuse;

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
  keep_entries();  // the blocks' fills move with them, and their references are dropped one by one
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
  keep_entries();  // swap_out kept them already: a block may come back shared
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

}  // namespace pagesim::alloc
