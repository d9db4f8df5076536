// DisaggregationSettings: whether a cluster splits prefill from decode, and how a request's
// KV moves between them.
//
// Disaggregated (prefill > 0): replicas [0, prefill) only prefill, the rest
// only decode (DistServe, Zhong et al., OSDI 2024; Mooncake, Qin et al., FAST 2025: a
// prefill instance computes the prompt and the first token, a decode instance receives the
// KV cache and generates the rest). An arriving request is routed among the prefill replicas; its prefill iteration
// produces its first token there (both papers count time-to-first-token at the prefill
// instance); then its prompt's KV, prompt_tokens × kv_bytes_per_token bytes, moves to a
// decode replica picked by decode_router, taking
//     transfer_latency_us · 10^-6 + bytes / (transfer_gbps · 10^9 / 8)
// and it decodes there. During the transfer the KV occupies both pools (docs/engine.md says
// when each side allocates and frees). Co-located (0, the default): every replica does both.
// The struct is the config section replicas.disaggregated itself, in its units (experiment_fields.cpp
// reads and writes it); the model's KV bytes per token come from the run (KvHandoff).
#pragma once

#include <cstdint>

#include "sim/cluster/router_settings.h"

namespace pagesim::sim {

struct DisaggregationSettings {
  std::int64_t prefill = 0;           // prefill replicas: 0 co-located; else in [1, replicas - 1]
  double transfer_gbps = 0;           // link bandwidth, gigabits (10^9 bits) per second, > 0 when disaggregated
  double transfer_latency_us = 0;     // fixed cost per transfer, microseconds, >= 0
  RouterKind decode_router = RouterKind::kLeastKv;  // picks the decode replica of each hand-off

  bool enabled() const { return prefill > 0; }
  // Seconds to move `tokens` tokens' KV of `kv_bytes_per_token` bytes each from a prefill
  // replica to a decode replica.
  double transfer_seconds(std::int64_t tokens, double kv_bytes_per_token) const {
    return transfer_latency_us * 1e-6 + static_cast<double>(tokens) * kv_bytes_per_token / (transfer_gbps * 1e9 / 8);
  }
};

}  // namespace pagesim::sim
