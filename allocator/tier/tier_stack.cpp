#include "allocator/tier/tier_stack.h"

#include <cassert>
#include <cmath>
#include <string>
#include <unordered_set>

namespace pagesim::alloc {
namespace {

[[noreturn]] void misuse(const std::string& what) { throw AllocatorError("offload tiers: " + what); }

}  // namespace

TierStack::TierStack(const OffloadSettings& settings, std::int32_t block_size, BlockPool& cpu_pool)
    : settings_(settings) {
  if (settings.tiers.empty()) misuse("no tier given");
  if (!(settings.bytes_per_block > 0)) misuse("bytes_per_block must be > 0");
  tiers_.reserve(settings.tiers.size());
  for (std::size_t i = 0; i < settings.tiers.size(); ++i) {
    const TierSettings& t = settings.tiers[i];
    const std::string at = "tier " + std::to_string(i) + " (" + std::string(to_string(t.kind)) + ")";
    if (i > 0 && settings.tiers[i - 1].kind == t.kind) misuse(at + ": a second tier of the same kind");
    if (i > 0 && t.kind == TierKind::kCpu) misuse(at + ": the CPU tier must come before the disk tier");
    if (!(t.read_bytes_per_s > 0 && t.write_bytes_per_s > 0 && std::isfinite(t.read_bytes_per_s) &&
          std::isfinite(t.write_bytes_per_s)))
      misuse(at + ": read and write bandwidths must be finite and > 0");
    if (!(t.latency_s >= 0 && std::isfinite(t.latency_s))) misuse(at + ": latency must be finite and >= 0");
    if (t.eviction == EvictionKind::kLruProtectWaiting)
      misuse(at + ": eviction lru_protect_waiting needs a waiting queue, which a tier does not see");
    if (t.kind == TierKind::kCpu) {
      if (t.capacity_blocks > cpu_pool.num_blocks())
        misuse(at + ": capacity of " + std::to_string(t.capacity_blocks) + " blocks exceeds the CPU pool's " +
               std::to_string(cpu_pool.num_blocks()) + " (the CPU tier shares the swap budget)");
      cpu_ = static_cast<std::int32_t>(i);
    }
    tiers_.emplace_back(t, block_size, t.kind == TierKind::kCpu ? &cpu_pool : nullptr);
  }
  counters_.resize(tiers_.size());
  pending_.resize(tiers_.size());
}

std::int32_t TierStack::find(BlockHash h) const {
  for (std::size_t t = 0; t < tiers_.size(); ++t)
    if (tiers_[t].contains(h)) return static_cast<std::int32_t>(t);
  return -1;
}

void TierStack::put(std::size_t t, BlockHash h, bool from_gpu) {
  for (; t < tiers_.size(); ++t) {
    KvTier& k = tiers_[t];
    if (k.room() == 0) continue;  // the CPU budget is all swapped out: pass it on
    ++counters_[t].stored_blocks;
    if (from_gpu) ++pending_[t].writes;
    from_gpu = false;  // what moves on down is a victim, moved by the host
    const auto victim = k.store(h);
    if (!victim) return;
    ++counters_[t].evicted_blocks;
    h = *victim;
  }
  ++dropped_;
}

void TierStack::on_gpu_cached(BlockHash h) {
  ++cached_count_;
  const std::int32_t t = find(h);
  if (settings_.write_policy == TierWritePolicy::kWriteThrough) {
    if (t < 0) put(0, h, true);
  } else if (t >= 0) {
    // The GPU computed this block again (an earlier prompt block was nowhere): the GPU's
    // copy is the one that now moves down on eviction.
    tiers_[static_cast<std::size_t>(t)].erase(h);
    ++superseded_;
  }
}

void TierStack::on_gpu_evicted(BlockHash h) {
  if (settings_.write_policy == TierWritePolicy::kWriteBack) put(0, h, true);
}

void TierStack::load(BlockHash h, std::int32_t t, std::int64_t tokens, bool readmission) {
  assert(t >= 0 && find(h) == t);
  auto ti = static_cast<std::size_t>(t);
  if (settings_.write_policy == TierWritePolicy::kWriteBack) tiers_[ti].erase(h);
  else tiers_[ti].touch(h);
  TierCounters& c = counters_[ti];
  ++c.loaded_blocks;
  (readmission ? c.readmission_hit_tokens : c.hit_tokens) += tokens;
  ++pending_[ti].reads;
}

std::int64_t TierStack::cpu_reclaimable() const { return cpu_ < 0 ? 0 : tier(cpu_).size(); }

void TierStack::reclaim_cpu(std::int64_t n) {
  assert(n <= cpu_reclaimable());
  auto ci = static_cast<std::size_t>(cpu_);
  for (std::int64_t i = 0; i < n; ++i) {
    const BlockHash h = tiers_[ci].evict();
    ++counters_[ci].evicted_blocks;
    // Never back into the CPU tier: the swap-out is about to take the freed blocks.
    put(ci + 1, h, false);
  }
}

TierTransfer TierStack::take_transfer() {
  TierTransfer out;
  out.overlap = settings_.overlap;
  const double bpb = settings_.bytes_per_block;
  for (std::size_t t = 0; t < tiers_.size(); ++t) {
    Pending& p = pending_[t];
    const TierSettings& s = tiers_[t].settings();
    if (p.reads > 0) out.seconds += s.latency_s + static_cast<double>(p.reads) * bpb / s.read_bytes_per_s;
    if (p.writes > 0) out.seconds += s.latency_s + static_cast<double>(p.writes) * bpb / s.write_bytes_per_s;
    out.loaded_blocks += p.reads;
    out.stored_blocks += p.writes;
    p = {};
  }
  return out;
}

void TierStack::validate() const {
  std::unordered_set<BlockHash> seen;
  for (const KvTier& k : tiers_) {
    k.validate();
    k.for_each_hash([&](BlockHash h) {
      if (!seen.insert(h).second)
        throw InvariantViolation("offload tiers: hash " + std::to_string(h) + " is stored in two tiers");
    });
  }
}

}  // namespace pagesim::alloc
