#include "allocator/hetero/large_page_pool.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

[[noreturn]] void broken(const std::string& what) { throw InvariantViolation("large page pool: " + what); }

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

LargePagePool::LargePagePool(std::int64_t num_large, std::vector<std::int64_t> pages_per_large, EvictionKind eviction,
                             bool single_free_queue)
    : per_(std::move(pages_per_large)),
      stride_(per_.empty() ? 1 : *std::max_element(per_.begin(), per_.end())),
      pages_(static_cast<std::size_t>(num_large * stride_)),
      large_(static_cast<std::size_t>(num_large)),
      large_pool_(num_large, 1),
      single_free_queue_(single_free_queue),
      partial_(per_.size()),
      free_small_(per_.size(), 0),
      large_policy_(make_eviction_policy(eviction, num_large)),
      unreferenced_cached_(per_.size(), 0) {
  assert(!single_free_queue_ || stride_ == 1);
  if (single_free_queue_) released_ = ReleasedBlockQueue(num_large);
  for (std::size_t t = 0; t < per_.size(); ++t) {
    type_policy_.push_back(make_eviction_policy(eviction, id_space()));
    index_.emplace_back(id_space());
  }
}

std::int64_t LargePagePool::num_evictable() const {
  std::int64_t n = inactive_cached_;
  for (const auto& p : type_policy_) n += p->size();
  return n;
}

LargePagePool::Plan LargePagePool::plan(std::span<const std::int64_t> need, std::span<const BlockId> hits) const {
  const std::size_t tables = per_.size();
  std::vector<std::int64_t> small(tables), fresh(tables);
  for (std::size_t t = 0; t < tables; ++t) {
    small[t] = free_small_[t] + type_policy_[t]->size();
    fresh[t] = free_small_[t];
  }
  std::int64_t large_avail = free_large() + released_large() + inactive_large();
  // Reusing a hit takes an evictable page out of its table's supply; a hit in an inactive
  // large page first brings that large page's free and cached pages back into it.
  std::vector<std::int64_t> woken;
  for (BlockId p : hits) {
    if (page(p).ref > 0) continue;
    const std::int64_t l = p / stride_;
    const auto t = static_cast<std::size_t>(large(l).table);
    --small[t];
    if (large_pool_.ref_count(static_cast<BlockId>(l)) == 0) woken.push_back(l);
  }
  std::sort(woken.begin(), woken.end());
  woken.erase(std::unique(woken.begin(), woken.end()), woken.end());
  for (std::int64_t l : woken) {
    const auto t = static_cast<std::size_t>(large(l).table);
    const auto free_slots = static_cast<std::int64_t>(large(l).free_slots.size());
    small[t] += free_slots + large(l).cached;
    fresh[t] += free_slots;
    --large_avail;
  }
  std::int64_t large_need = 0, fresh_need = 0;
  for (std::size_t t = 0; t < tables; ++t) {
    if (need[t] > small[t]) large_need += ceil_div(need[t] - small[t], per_[t]);
    if (need[t] > fresh[t]) fresh_need += ceil_div(need[t] - fresh[t], per_[t]);
  }
  return {.feasible = large_need <= large_avail, .fresh_first = fresh_need <= free_large()};
}

void LargePagePool::partial_add(std::int64_t l) {
  Large& L = large(l);
  auto& list = partial_[static_cast<std::size_t>(L.table)];
  L.partial_pos = static_cast<std::int64_t>(list.size());
  list.push_back(l);
}

void LargePagePool::partial_remove(std::int64_t l) {
  Large& L = large(l);
  if (L.partial_pos < 0) return;
  auto& list = partial_[static_cast<std::size_t>(L.table)];
  const std::int64_t moved = list.back();
  list[static_cast<std::size_t>(L.partial_pos)] = moved;
  large(moved).partial_pos = L.partial_pos;
  list.pop_back();
  L.partial_pos = -1;
}

BlockId LargePagePool::take_slot(std::int64_t l) {
  Large& L = large(l);
  const std::int32_t slot = L.free_slots.back();
  L.free_slots.pop_back();
  --free_small_[static_cast<std::size_t>(L.table)];
  if (L.free_slots.empty()) partial_remove(l);
  const BlockId p = id(l, slot);
  Page& pg = page(p);
  pg.ref = 1;
  pg.filled = 0;
  ++referenced_pages_;
  return p;
}

BlockId LargePagePool::assign(std::int64_t l, std::int32_t t) {
  Large& L = large(l);
  L.table = t;
  L.cached = 0;
  const std::int64_t n = per_[static_cast<std::size_t>(t)];
  L.free_slots.clear();
  for (std::int64_t s = n - 1; s >= 0; --s) L.free_slots.push_back(static_cast<std::int32_t>(s));
  free_small_[static_cast<std::size_t>(t)] += n;
  partial_add(l);
  return take_slot(l);
}

void LargePagePool::uncache(BlockId p) {
  const std::int64_t l = p / stride_;
  const auto t = static_cast<std::size_t>(large(l).table);
  index_[t].erase(p);
  if (page(p).ref == 0) --unreferenced_cached_[t];
  --large(l).cached;
  ++evictions_;
}

BlockId LargePagePool::take(std::int32_t t, std::int64_t hint, bool fresh_first) {
  const auto ti = static_cast<std::size_t>(t);
  // A free page of an active large page: one more referenced page in it.
  auto take_slot_of_active = [&](std::int64_t l) {
    large_pool_.add_ref(static_cast<BlockId>(l));
    return take_slot(l);
  };
  if (hint >= 0 && hint < num_large()) {
    const Large& h = large(hint);
    if (h.table == t && large_pool_.ref_count(static_cast<BlockId>(hint)) > 0 && !h.free_slots.empty())
      return take_slot_of_active(hint);
  }
  if (!partial_[ti].empty()) return take_slot_of_active(partial_[ti].back());
  if (fresh_first && large_pool_.num_free() > 0) return assign(large_pool_.take(), t);
  if (type_policy_[ti]->size() > 0) {  // an own evictable page of an active large page
    const BlockId p = type_policy_[ti]->pop_victim();
    uncache(p);
    page(p).ref = 1;
    page(p).filled = 0;
    large_pool_.add_ref(static_cast<BlockId>(p / stride_));
    ++referenced_pages_;
    return p;
  }
  // Then a large page as PagedAllocator takes a block: never used (or given back) first, then
  // the least recently released of the released queue's head and the policy's victim.
  if (large_pool_.num_free() > 0) return assign(large_pool_.take(), t);
  const BlockId victim = large_policy_->size() > 0 ? large_policy_->peek_victim() : kNoBlock;
  if (!released_.empty() && !released_.victim_goes_first(victim)) {
    const BlockId l = released_.pop_front();
    large_pool_.add_ref(l);
    return assign(l, t);
  }
  // The victim large page: every cached page in it is forgotten.
  const auto l = static_cast<std::int64_t>(large_policy_->pop_victim());
  Large& L = large(l);
  inactive_cached_ -= L.cached;
  const std::int64_t n = per_[static_cast<std::size_t>(L.table)];
  for (std::int64_t s = 0; s < n; ++s) {
    const BlockId p = id(l, s);
    if (cached(p)) uncache(p);
    page(p).filled = 0;
  }
  large_pool_.add_ref(static_cast<BlockId>(l));
  return assign(l, t);
}

void LargePagePool::deactivate(std::int64_t l) {
  Large& L = large(l);
  const auto t = static_cast<std::size_t>(L.table);
  for (std::int64_t s = 0; s < per_[t]; ++s) {
    const BlockId p = id(l, s);
    if (type_policy_[t]->contains(p)) type_policy_[t]->erase(p);
  }
  free_small_[t] -= static_cast<std::int64_t>(L.free_slots.size());
  partial_remove(l);
  if (L.cached > 0) {
    if (single_free_queue_) released_.stamp(static_cast<BlockId>(l));
    large_policy_->insert(static_cast<BlockId>(l));
    inactive_cached_ += L.cached;
  } else {
    L.table = -1;
    L.free_slots.clear();
    if (single_free_queue_) {
      released_.push_back(static_cast<BlockId>(l));
    } else {
      large_pool_.give_back(static_cast<BlockId>(l));
    }
  }
}

void LargePagePool::activate(std::int64_t l) {
  Large& L = large(l);
  const auto t = static_cast<std::size_t>(L.table);
  large_policy_->erase(static_cast<BlockId>(l));
  inactive_cached_ -= L.cached;
  free_small_[t] += static_cast<std::int64_t>(L.free_slots.size());
  if (!L.free_slots.empty()) partial_add(l);
  for (std::int64_t s = 0; s < per_[t]; ++s) {
    const BlockId p = id(l, s);
    if (page(p).ref == 0 && index_[t].contains(p)) type_policy_[t]->insert(p);
  }
}

void LargePagePool::reuse(BlockId p) {
  Page& pg = page(p);
  const std::int64_t l = p / stride_;
  Large& L = large(l);
  const auto t = static_cast<std::size_t>(L.table);
  if (pg.ref == 0) {
    if (large_pool_.ref_count(static_cast<BlockId>(l)) == 0) activate(l);
    type_policy_[t]->erase(p);
    large_pool_.add_ref(static_cast<BlockId>(l));
    ++referenced_pages_;
    --unreferenced_cached_[t];
  }
  ++pg.ref;
  type_policy_[t]->on_hit(p);
  large_policy_->on_hit(static_cast<BlockId>(l));
}

void LargePagePool::release(BlockId p) {
  Page& pg = page(p);
  if (--pg.ref > 0) return;
  const std::int64_t l = p / stride_;
  Large& L = large(l);
  const auto t = static_cast<std::size_t>(L.table);
  const std::int32_t referenced = large_pool_.drop_ref(static_cast<BlockId>(l));
  --referenced_pages_;
  if (index_[t].contains(p)) {
    ++unreferenced_cached_[t];
    if (referenced > 0) type_policy_[t]->insert(p);  // else deactivate() parks the large page
  } else {
    pg.filled = 0;
    L.free_slots.push_back(static_cast<std::int32_t>(p - l * stride_));
    ++free_small_[t];
    if (L.free_slots.size() == 1) partial_add(l);
  }
  if (referenced == 0) deactivate(l);
}

void LargePagePool::cache(BlockId p, BlockHash h) {
  const std::int64_t l = p / stride_;
  Large& L = large(l);
  if (!index_[static_cast<std::size_t>(L.table)].insert(p, h)) return;
  type_policy_[static_cast<std::size_t>(L.table)]->on_cached(p);
  if (++L.cached == 1) large_policy_->on_cached(static_cast<BlockId>(l));
}

void LargePagePool::validate(const std::vector<std::int32_t>& refs) const {
  std::vector<bool> on_free(large_.size(), false);
  auto mark_free = [&](std::int64_t l) {
    if (on_free[static_cast<std::size_t>(l)]) broken("large page " + std::to_string(l) + " is free twice");
    on_free[static_cast<std::size_t>(l)] = true;
  };
  large_pool_.for_each_free(mark_free);
  std::uint64_t previous_release = 0;
  released_.for_each([&](const ReleasedBlockQueue::Entry& e) {
    mark_free(e.block);
    if (e.released_at <= previous_release || e.released_at > released_.clock())
      broken("the released queue is out of release order at large page " + std::to_string(e.block));
    previous_release = e.released_at;
  });
  struct Count {
    std::int64_t free_small = 0, evictable = 0, unreferenced = 0;
  };
  std::vector<Count> count(per_.size());
  std::int64_t referenced_total = 0;
  std::int64_t inactive = 0, inactive_cached = 0, cached_total = 0;
  for (std::int64_t l = 0; l < num_large(); ++l) {
    const Large& L = large(l);
    const std::int32_t large_ref = large_pool_.ref_count(static_cast<BlockId>(l));
    const std::string name = "large page " + std::to_string(l);
    if (L.table < 0) {
      if (!on_free[static_cast<std::size_t>(l)]) broken(name + " belongs to no table and is not free");
      if (large_ref != 0) broken(name + " is free but has ref count " + std::to_string(large_ref));
      for (std::int64_t s = 0; s < stride_; ++s) {
        const Page& pg = page(id(l, s));
        if (pg.ref != 0 || pg.filled != 0 || refs[static_cast<std::size_t>(id(l, s))] != 0)
          broken(name + " is free but page " + std::to_string(s) + " is referenced or filled");
      }
      continue;  // the indexes' sizes below find a page of it cached
    }
    if (on_free[static_cast<std::size_t>(l)]) broken(name + " is free and belongs to table " + std::to_string(L.table));
    const auto t = static_cast<std::size_t>(L.table);
    std::vector<bool> slot_free(static_cast<std::size_t>(stride_), false);
    for (std::int32_t s : L.free_slots) {
      if (s < 0 || s >= per_[t] || slot_free[static_cast<std::size_t>(s)])
        broken(name + " lists free slot " + std::to_string(s) + " twice or out of range");
      slot_free[static_cast<std::size_t>(s)] = true;
    }
    std::int32_t referenced = 0, cached = 0;
    for (std::int64_t s = 0; s < stride_; ++s) {
      const BlockId p = id(l, s);
      const Page& pg = page(p);
      const bool is_cached = index_[t].contains(p);
      if (pg.ref != refs[static_cast<std::size_t>(p)])
        broken("page " + std::to_string(p) + " has ref_count " + std::to_string(pg.ref) + " but " +
               std::to_string(refs[static_cast<std::size_t>(p)]) + " block-table references");
      if (s >= per_[t]) {
        if (pg.ref != 0 || is_cached) broken("page " + std::to_string(p) + " lies past its large page's pages");
        continue;
      }
      referenced += pg.ref > 0 ? 1 : 0;
      if (is_cached && pg.ref == 0) ++count[t].unreferenced;
      cached += is_cached ? 1 : 0;
      const bool is_free = pg.ref == 0 && !is_cached;
      if (is_free != slot_free[static_cast<std::size_t>(s)])
        broken("page " + std::to_string(p) + (is_free ? " is free but not listed" : " is listed free but in use"));
      if (is_free && pg.filled != 0) broken("free page " + std::to_string(p) + " is filled");
      const bool parked = is_cached && pg.ref == 0;
      const bool listed = type_policy_[t]->contains(p);
      if (listed != (parked && large_ref > 0))
        broken("page " + std::to_string(p) + " is " + (listed ? "" : "not ") + "on its table's eviction policy");
      if (parked && large_ref > 0) ++count[t].evictable;
    }
    if (referenced != large_ref || cached != L.cached)
      broken(name + " counts " + std::to_string(large_ref) + " referenced and " + std::to_string(L.cached) +
             " cached pages, holds " + std::to_string(referenced) + " and " + std::to_string(cached));
    cached_total += cached;
    referenced_total += referenced;
    if (large_ref > 0) {
      count[t].free_small += static_cast<std::int64_t>(L.free_slots.size());
      const bool want_partial = !L.free_slots.empty();
      if (want_partial != (L.partial_pos >= 0) ||
          (want_partial && partial_[t][static_cast<std::size_t>(L.partial_pos)] != l))
        broken(name + " is misfiled on its table's list of large pages with free pages");
      if (large_policy_->contains(static_cast<BlockId>(l))) broken(name + " is active and on the large-page policy");
    } else {
      if (L.cached == 0) broken(name + " holds nothing but was not freed");
      if (!large_policy_->contains(static_cast<BlockId>(l)) || L.partial_pos >= 0)
        broken(name + " is inactive but not parked on the large-page policy alone");
      ++inactive;
      inactive_cached += L.cached;
    }
  }
  std::int64_t indexed = 0;
  for (std::size_t t = 0; t < per_.size(); ++t) {
    index_[t].validate("large page pool: table " + std::to_string(t));
    indexed += index_[t].size();
    if (count[t].free_small != free_small_[t])
      broken("table " + std::to_string(t) + " counts " + std::to_string(free_small_[t]) + " free pages, holds " +
             std::to_string(count[t].free_small));
    if (count[t].evictable != type_policy_[t]->size())
      broken("table " + std::to_string(t) + "'s eviction policy holds " + std::to_string(type_policy_[t]->size()) +
             " pages, " + std::to_string(count[t].evictable) + " are evictable");
    if (count[t].unreferenced != unreferenced_cached_[t])
      broken("table " + std::to_string(t) + " counts " + std::to_string(unreferenced_cached_[t]) +
             " unreferenced cached pages, holds " + std::to_string(count[t].unreferenced));
    for (std::size_t i = 0; i < partial_[t].size(); ++i)
      if (large(partial_[t][i]).partial_pos != static_cast<std::int64_t>(i))
        broken("table " + std::to_string(t) + "'s list of large pages with free pages is out of order");
  }
  if (inactive != large_policy_->size() || inactive_cached != inactive_cached_)
    broken("inactive large pages: " + std::to_string(inactive) + " holding " + std::to_string(inactive_cached) +
           " cached pages, counted " + std::to_string(large_policy_->size()) + " and " + std::to_string(inactive_cached_));
  if (referenced_total != referenced_pages_)
    broken("referenced page counter " + std::to_string(referenced_pages_) + " != " + std::to_string(referenced_total));
  // Every indexed page was counted above under its own table: none of another table or free.
  if (indexed != cached_total)
    broken("the tables' indexes hold " + std::to_string(indexed) + " pages, " + std::to_string(cached_total) +
           " pages of their tables are cached");
}

}  // namespace pagesim::alloc
