#include "sim/config/offload_config.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "sim/config/link_limits.h"

namespace pagesim::sim {
namespace {

std::string tier_key(std::size_t i, const char* key) { return fmt::format("allocator.offload.tiers[{}].{}", i, key); }

constexpr double kMaxGib = 1 << 20;  // 1 PiB, as every other GiB setting (experiment_config.cpp)

}  // namespace

void check_offload(const OffloadConfig& offload, bool paged, bool prefix_cache, double cpu_swap_gib,
                   const ConfigOrigin& o) {
  if (offload.at_default() && !o.has("allocator.offload")) return;
  if (offload.tiers.empty())
    throw o.error(o.has("allocator.offload.tiers") ? "allocator.offload.tiers" : "allocator.offload",
                  "allocator.offload is given but lists no tier: add tiers (e.g. [{kind: cpu, capacity_gib: 32}]) "
                  "or remove the section");
  if (!paged)
    throw o.error("allocator.offload", "offload tiers store blocks of the paged allocator's prefix cache; set "
                                       "allocator.kind: paged, or remove allocator.offload");
  if (!prefix_cache)
    throw o.error("allocator.offload",
                  "offload tiers keep blocks the prefix cache evicts, but allocator.prefix_cache is false: set "
                  "prefix_cache: true, or remove allocator.offload");
  for (std::size_t i = 0; i < offload.tiers.size(); ++i) {
    const TierConfig& t = offload.tiers[i];
    if (i > 0 && offload.tiers[i - 1].kind == t.kind)
      throw o.error(tier_key(i, "kind"), fmt::format("a second {} tier: give at most one cpu and one disk tier",
                                                     alloc::to_string(t.kind)));
    if (i > 0 && t.kind == alloc::TierKind::kCpu)
      throw o.error(tier_key(i, "kind"), "the cpu tier must come before the disk tier (tiers are listed top first)");
    if (!(t.capacity_gib > 0 && t.capacity_gib <= kMaxGib))
      throw o.error(tier_key(i, "capacity_gib"),
                    fmt::format("expected a number of GiB > 0 and <= {}, found {}", kMaxGib, t.capacity_gib));
    if (t.kind == alloc::TierKind::kCpu && t.capacity_gib > cpu_swap_gib)
      throw o.error(tier_key(i, "capacity_gib"),
                    fmt::format("the cpu tier's {} GiB exceed allocator.cpu_swap_gib = {} GiB: the CPU tier and swap "
                                "preemption share that budget; raise cpu_swap_gib or lower capacity_gib",
                                t.capacity_gib, cpu_swap_gib));
    if (!(t.read_gbps > 0 && std::isfinite(t.read_gbps)))
      throw o.error(tier_key(i, "read_gbps"), fmt::format("expected a finite number of GB/s > 0, found {}", t.read_gbps));
    if (!(t.write_gbps > 0 && std::isfinite(t.write_gbps)))
      throw o.error(tier_key(i, "write_gbps"), fmt::format("expected a finite number of GB/s > 0, found {}", t.write_gbps));
    if (!(t.latency_us >= 0 && std::isfinite(t.latency_us)))
      throw o.error(tier_key(i, "latency_us"), fmt::format("expected a finite number of µs >= 0, found {}", t.latency_us));
    check_link_gbps(o, tier_key(i, "read_gbps"), t.read_gbps, "GB/s");
    check_link_gbps(o, tier_key(i, "write_gbps"), t.write_gbps, "GB/s");
    check_link_latency_us(o, tier_key(i, "latency_us"), t.latency_us);
    if (t.eviction == alloc::EvictionKind::kLruProtectWaiting)
      throw o.error(tier_key(i, "eviction"), "lru_protect_waiting protects what the waiting queue will hit on the GPU; "
                                             "a tier does not see the queue: use lru, fifo or lfu");
  }
}

alloc::OffloadSettings offload_settings(const OffloadConfig& offload, double bytes_per_block, std::int64_t max_blocks,
                                        const ConfigOrigin& o) {
  alloc::OffloadSettings s;
  s.write_policy = offload.write_policy;
  s.overlap = offload.overlap;
  s.bytes_per_block = bytes_per_block;
  for (std::size_t i = 0; i < offload.tiers.size(); ++i) {
    const TierConfig& t = offload.tiers[i];
    const double blocks = std::floor(t.capacity_gib * std::pow(2.0, 30) / bytes_per_block);
    if (blocks < 1 || blocks > static_cast<double>(max_blocks))
      throw o.error(tier_key(i, "capacity_gib"),
                    fmt::format("{} GiB hold {:.0f} blocks of {:.0f} bytes; expected 1 to {} blocks", t.capacity_gib,
                                blocks, bytes_per_block, max_blocks));
    alloc::TierSettings ts;
    ts.kind = t.kind;
    ts.capacity_blocks = static_cast<std::int64_t>(blocks);
    ts.read_bytes_per_s = t.read_gbps * 1e9;
    ts.write_bytes_per_s = t.write_gbps * 1e9;
    ts.latency_s = t.latency_us * 1e-6;
    ts.eviction = t.eviction;
    s.tiers.push_back(ts);
  }
  return s;
}

}  // namespace pagesim::sim
