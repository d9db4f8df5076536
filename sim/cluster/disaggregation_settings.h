// DisaggregationSettings: whether a cluster splits prefill from decode, and how a request's
// KV moves between them.
//
// Disaggregated (prefill_replicas > 0): replicas [0, prefill_replicas) only prefill, the rest
// only decode (DistServe, Zhong et al., OSDI 2024; Mooncake, Qin et al., FAST 2025: a
// prefill instance computes the prompt and the first token, a decode instance receives the
// KV cache and generates the rest). An arriving request is routed among the prefill replicas; its prefill iteration
// produces its first token there (both papers count time-to-first-token at the prefill
// instance); then its prompt's KV, prompt_tokens × kv_bytes_per_token bytes, moves to a
// decode replica picked by decode_router, taking
//     transfer_latency_s + bytes / transfer_bytes_per_s
// and it decodes there. During the transfer the KV occupies both pools (docs/engine.md says
// when each side allocates and frees). Co-located (0, the default): every replica does both.
#pragma once

#include <cstdint>

#include "sim/cluster/router_settings.h"

namespace pagesim::sim {

struct DisaggregationSettings {
  std::int32_t prefill_replicas = 0;  // 0: co-located; else in [1, replicas - 1]
  double transfer_bytes_per_s = 0;    // link bandwidth, > 0 when disaggregated
  double transfer_latency_s = 0;      // fixed cost per transfer, >= 0
  double kv_bytes_per_token = 0;      // the model's KV bytes per token, > 0 when disaggregated
  RouterSettings decode_router{RouterKind::kLeastKv};  // picks the decode replica

  bool enabled() const { return prefill_replicas > 0; }
  // Seconds to move `tokens` tokens' KV from a prefill replica to a decode replica.
  double transfer_seconds(std::int64_t tokens) const {
    return transfer_latency_s + static_cast<double>(tokens) * kv_bytes_per_token / transfer_bytes_per_s;
  }
};

}  // namespace pagesim::sim
