#include "sim/scheduler/adapter_cache.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

namespace pagesim::sim {

AdapterCache::AdapterCache(const LoraSettings& settings, alloc::PagedAllocator& pool, double adapter_bytes,
                           double block_bytes, double load_bytes_per_s)
    : settings_(settings),
      pool_(pool),
      adapter_bytes_(adapter_bytes),
      load_bytes_per_s_(load_bytes_per_s),
      adapter_blocks_(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(adapter_bytes / block_bytes)))) {
  assert(load_bytes_per_s_ > 0 && block_bytes > 0);
  if (settings_.placement == LoraPlacement::kVllm) slots_.resize(static_cast<std::size_t>(settings_.max_loras));
}

bool AdapterCache::resident(alloc::AdapterId a) const {
  return settings_.placement == LoraPlacement::kVllm ? slot_of_.count(a) != 0 : pool_.adapter_pages().resident(a);
}

bool AdapterCache::can_pin(alloc::AdapterId a) const {
  if (settings_.placement == LoraPlacement::kUnified || slot_of_.count(a)) return true;
  for (const Slot& s : slots_)
    if (s.pins == 0) return true;
  return false;
}

void AdapterCache::load(alloc::AdapterId a) {
  ++counters_.loads;
  counters_.load_bytes += adapter_bytes_;
  const double seconds = adapter_bytes_ / load_bytes_per_s_;
  counters_.load_seconds += seconds;
  pending_load_s_ += seconds;
  if (auto it = cpu_pos_.find(a); it != cpu_pos_.end()) {
    cpu_lru_.splice(cpu_lru_.end(), cpu_lru_, it->second);
    return;
  }
  ++counters_.cpu_misses;
  if (static_cast<std::int64_t>(cpu_lru_.size()) >= settings_.cpu_capacity()) {
    cpu_pos_.erase(cpu_lru_.front());
    cpu_lru_.pop_front();
  }
  cpu_pos_[a] = cpu_lru_.insert(cpu_lru_.end(), a);
}

void AdapterCache::pin(alloc::AdapterId a) {
  if (settings_.placement == LoraPlacement::kUnified) {
    if (pool_.pin_adapter(a, adapter_blocks_)) load(a);
    return;
  }
  ++clock_;
  if (auto it = slot_of_.find(a); it != slot_of_.end()) {
    Slot& s = slots_[it->second];
    ++s.pins;
    s.last_used = clock_;
    return;
  }
  // An empty slot first (lowest index), else the least recently used idle one.
  std::size_t pick = slots_.size();
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.pins > 0) continue;
    if (s.adapter < 0) {
      pick = i;
      break;
    }
    if (pick == slots_.size() || s.last_used < slots_[pick].last_used) pick = i;
  }
  assert(pick < slots_.size() && "REQUIRES can_pin(a)");
  Slot& s = slots_[pick];
  if (s.adapter >= 0) {
    slot_of_.erase(s.adapter);
    ++counters_.evictions;
  }
  s = Slot{a, 1, clock_};
  slot_of_[a] = pick;
  load(a);
}

void AdapterCache::unpin(alloc::AdapterId a) {
  if (settings_.placement == LoraPlacement::kUnified) {
    pool_.unpin_adapter(a);
    return;
  }
  Slot& s = slots_[slot_of_.at(a)];
  assert(s.pins > 0);
  --s.pins;
  s.last_used = ++clock_;  // used until now (vLLM's LRU touches an adapter every step it runs)
}

AdapterCounters AdapterCache::counters() const {
  AdapterCounters c = counters_;
  // Unified: the pool evicts idle adapters for KV as well as for other adapters.
  if (settings_.placement == LoraPlacement::kUnified) c.evictions = pool_.adapter_evictions();
  return c;
}

void AdapterCache::validate() const {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.pins < 0 || (s.adapter < 0 && s.pins > 0))
      throw std::logic_error("adapter cache: slot " + std::to_string(i) + " has " + std::to_string(s.pins) +
                             " pins and adapter " + std::to_string(s.adapter));
    if (s.adapter >= 0 && slot_of_.at(s.adapter) != i)
      throw std::logic_error("adapter cache: adapter " + std::to_string(s.adapter) + " is not indexed to its slot");
  }
  if (static_cast<std::int64_t>(cpu_lru_.size()) > settings_.cpu_capacity())
    throw std::logic_error("adapter cache: the host cache holds more than max_cpu_loras adapters");
}

}  // namespace pagesim::sim
