#include "sim/config/link_limits.h"

#include <fmt/format.h>

namespace pagesim::sim {

void check_link_gbps(const ConfigOrigin& origin, const std::string& key, double gbps, std::string_view unit) {
  if (gbps >= kMinLinkGbps && gbps <= kMaxLinkGbps) return;
  throw origin.error(key, fmt::format("expected a number of {} in [{}, {:g}] (slower or faster than any link: a "
                                      "transfer would end past the simulated-time bound, or its bytes per second "
                                      "overflow), found {}",
                                      unit, kMinLinkGbps, kMaxLinkGbps, gbps));
}

void check_link_latency_us(const ConfigOrigin& origin, const std::string& key, double latency_us) {
  if (latency_us >= 0 && latency_us <= kMaxLinkLatencyUs) return;
  throw origin.error(key, fmt::format("expected a number of µs in [0, {:g}] (at most 1,000 s per transfer: longer "
                                      "would end past the simulated-time bound), found {}",
                                      kMaxLinkLatencyUs, latency_us));
}

}  // namespace pagesim::sim
