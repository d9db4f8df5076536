#include "allocator/paged/adapter_pages.h"

#include <cassert>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

[[noreturn]] void broken(const std::string& what) { throw InvariantViolation("adapter pages: " + what); }

}  // namespace

void AdapterPages::add(AdapterId a, std::vector<BlockId> blocks) {
  assert(!resident(a));
  const auto n = static_cast<std::int64_t>(blocks.size());
  Entry& e = adapters_[a];
  e.blocks = std::move(blocks);
  e.idle_pos = idle_.insert(idle_.end(), a);
  blocks_ += n;
  idle_blocks_ += n;
}

void AdapterPages::pin(AdapterId a) {
  Entry& e = adapters_.at(a);
  if (e.pins++ == 0) {
    idle_.erase(e.idle_pos);
    idle_blocks_ -= static_cast<std::int64_t>(e.blocks.size());
  }
}

void AdapterPages::unpin(AdapterId a) {
  Entry& e = adapters_.at(a);
  assert(e.pins > 0);
  if (--e.pins == 0) {
    e.idle_pos = idle_.insert(idle_.end(), a);
    idle_blocks_ += static_cast<std::int64_t>(e.blocks.size());
  }
}

std::vector<BlockId> AdapterPages::remove(AdapterId a) {
  auto it = adapters_.find(a);
  assert(it != adapters_.end() && it->second.pins == 0);
  std::vector<BlockId> blocks = std::move(it->second.blocks);
  idle_.erase(it->second.idle_pos);
  blocks_ -= static_cast<std::int64_t>(blocks.size());
  idle_blocks_ -= static_cast<std::int64_t>(blocks.size());
  adapters_.erase(it);
  return blocks;
}

void AdapterPages::for_each(const std::function<void(AdapterId, const std::vector<BlockId>&)>& f) const {
  for (const auto& [a, e] : adapters_) f(a, e.blocks);
}

void AdapterPages::validate() const {
  std::int64_t blocks = 0, idle = 0, idle_count = 0;
  for (const auto& [a, e] : adapters_) {
    if (e.pins < 0) broken("adapter " + std::to_string(a) + " has " + std::to_string(e.pins) + " pins");
    blocks += static_cast<std::int64_t>(e.blocks.size());
    if (e.pins == 0) {
      idle += static_cast<std::int64_t>(e.blocks.size());
      ++idle_count;
      if (*e.idle_pos != a) broken("idle adapter " + std::to_string(a) + " is not at its place in the idle list");
    }
  }
  if (idle_count != static_cast<std::int64_t>(idle_.size()))
    broken(std::to_string(idle_.size()) + " adapters on the idle list, " + std::to_string(idle_count) + " idle");
  if (blocks != blocks_) broken("block counter " + std::to_string(blocks_) + " != " + std::to_string(blocks));
  if (idle != idle_blocks_)
    broken("idle block counter " + std::to_string(idle_blocks_) + " != " + std::to_string(idle));
}

}  // namespace pagesim::alloc
