// Summary: the numbers one run reports, defined once. to_json() gives summary.json's
// nested objects; flattening joins keys with dots (memory_pct.token_states, ...), the names
// sweep.csv columns use. Fields marked "window" are averaged over iterations that start
// inside the measurement window; latencies cover requests that finished.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace pagesim::sim {

struct MemoryPct {  // % of KV capacity
  double token_states = 0, reserved = 0, over_reserved = 0, rounding = 0, free = 0;
  double unusable_free = 0, cached_free = 0;
};

struct Distribution {  // of per-request values
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct Summary {
  MemoryPct memory_pct;                // window, mean over iterations (the paper's method)
  MemoryPct memory_pct_time_weighted;  // window, weighted by iteration duration (idle time excluded)
  double mean_batched_requests = 0;    // window
  double mean_batched_seqs = 0;        // window
  double sharing_saving_pct = 0;       // window: 1 - 1/mean(logical/physical blocks)
  double throughput_rps = 0;           // finished requests / sim_time_s
  double throughput_tokens_per_s = 0;  // generated tokens (all sequences) / sim_time_s
  double normalized_latency_s_per_token = 0;  // mean of e2e / output tokens
  Distribution normalized_latency;
  Distribution e2e_s, ttft_s, tpot_s;
  std::int64_t preemptions = 0, recompute_preemptions = 0, swap_preemptions = 0;
  double swapped_bytes = 0;            // GPU<->CPU, both directions
  double prefix_hit_rate = 0;          // prompt tokens served from the prefix cache
  std::int64_t requests_arrived = 0, requests_finished = 0, iterations = 0;
  std::int64_t window_iterations = 0;
  double sim_time_s = 0;               // virtual time of the last event
  double wall_s = 0;                   // host time of the run (not reproducible)
  double sim_seconds_per_wall_second = 0;
  double iterations_per_wall_second = 0;

  nlohmann::ordered_json to_json() const;
};

// [("memory_pct.token_states", 12.3), ...] in summary.json's order.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten(const nlohmann::ordered_json& j);

// True for the fields measured on the host (wall_s, *_per_wall_second): the only ones that
// differ between two runs of the same config, so reproducible outputs leave them out.
bool is_host_timing(const std::string& flat_key);

}  // namespace pagesim::sim
