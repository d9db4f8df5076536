// The ranges every simulated data link's settings must lie in: offload tiers
// (allocator.offload.tiers[i].read_gbps, write_gbps, latency_us), the global cache
// (replicas.global_cache.bandwidth_gbps, latency_us) and the disaggregated handoff
// (replicas.disaggregated.transfer_gbps, transfer_latency_us). Values outside them are not
// links (1e308 GB/s overflows bytes per second to infinity; 1e300 µs or 1e-300 GB/s puts a
// single transfer past the simulation's 1e10 s time bound, Simulation::kMaxSimulatedSeconds), so they
// are refused at their key and line with the other value checks, not later without a key.
// Within them a transfer of a terabyte takes at most 1e6 s plus 1e3 s of latency.
#pragma once

#include <string>
#include <string_view>

#include "sim/config/config_origin.h"

namespace pagesim::sim {

inline constexpr double kMinLinkGbps = 1e-3;       // GB/s or Gbit/s: 1 MB/s, below any link
inline constexpr double kMaxLinkGbps = 1e6;        // 1 PB/s, beyond any link
inline constexpr double kMaxLinkLatencyUs = 1e9;   // 1,000 s per transfer

// Throws the ConfigError of origin.error(key, ...) unless gbps lies in
// [kMinLinkGbps, kMaxLinkGbps]; `unit` names the unit in the message ("GB/s").
// REQUIRES: gbps finite and > 0 (checked before, with its own message).
void check_link_gbps(const ConfigOrigin& origin, const std::string& key, double gbps, std::string_view unit);
// Throws unless latency_us lies in [0, kMaxLinkLatencyUs].
void check_link_latency_us(const ConfigOrigin& origin, const std::string& key, double latency_us);

}  // namespace pagesim::sim
