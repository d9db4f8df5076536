// Summary: the numbers one run reports, defined once. Its field list (RecordFields<Summary>)
// gives summary.json's keys and nesting; flattening joins keys with dots
// (memory_pct.token_states, ...), the names sweep.csv columns use. Fields marked "window" are
// averaged over iterations that start inside the measurement window; latencies cover
// requests that finished.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/adapter_records.h"
#include "sim/metrics/layer_class_records.h"
#include "sim/metrics/speculative_class_records.h"
#include "sim/metrics/memory_pct.h"
#include "sim/metrics/prefix_cache_records.h"
#include "sim/metrics/tier_records.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct Distribution {  // of per-request values
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

template <>
struct RecordFields<Distribution> {
  using D = Distribution;
  static constexpr auto fields = std::tuple{Field{"mean", &D::mean}, Field{"p50", &D::p50}, Field{"p90", &D::p90},
                                            Field{"p99", &D::p99}, Field{"max", &D::max}};
};
static_assert(lists_every_member<Distribution>());

struct Summary {
  MemoryPct memory_pct;                // window, mean over iterations (the paper's method); no iteration: all free
  MemoryPct memory_pct_time_weighted;  // window, weighted by iteration duration (idle time excluded); none: all free
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
  double prefix_hit_rate = 0;          // first admissions: prompt tokens served by the prefix
                                       // cache / all their prompt tokens (0 without the cache)
  std::optional<PrefixCacheSummary> prefix_cache;  // only when the allocator caches prefixes
  std::optional<TierSummary> tiers;                 // only with allocator.offload tiers
  std::optional<LayerClassSummary> layer_classes;   // only for heterogeneous-model allocators
  std::optional<AdapterClassSummary> adapter_weights;  // only with LoRA adapters
  std::optional<SpeculativeClassSummary> speculative_classes;  // only with speculative decoding
  std::int64_t requests_arrived = 0, requests_finished = 0, iterations = 0;
  std::int64_t window_iterations = 0;
  double sim_time_s = 0;               // virtual time of the last event
  double wall_s = 0;                   // host time of the run (not reproducible)
  double sim_seconds_per_wall_second = 0;
  double iterations_per_wall_second = 0;

  // summary.json's object: record_json(*this).
  nlohmann::ordered_json to_json() const;
};

// summary.json's keys, in order.
template <>
struct RecordFields<Summary> {
  using S = Summary;
  static constexpr auto fields = std::tuple{
      Field{"memory_pct", &S::memory_pct},
      Field{"memory_pct_time_weighted", &S::memory_pct_time_weighted},
      Field{"mean_batched_requests", &S::mean_batched_requests},
      Field{"mean_batched_seqs", &S::mean_batched_seqs},
      Field{"sharing_saving_pct", &S::sharing_saving_pct},
      Field{"throughput_rps", &S::throughput_rps},
      Field{"throughput_tokens_per_s", &S::throughput_tokens_per_s},
      Field{"normalized_latency_s_per_token", &S::normalized_latency_s_per_token},
      Field{"normalized_latency", &S::normalized_latency},
      Field{"e2e_s", &S::e2e_s},
      Field{"ttft_s", &S::ttft_s},
      Field{"tpot_s", &S::tpot_s},
      Field{"preemptions", &S::preemptions},
      Field{"recompute_preemptions", &S::recompute_preemptions},
      Field{"swap_preemptions", &S::swap_preemptions},
      Field{"swapped_bytes", &S::swapped_bytes},
      Field{"prefix_hit_rate", &S::prefix_hit_rate},
      Field{"prefix_cache", &S::prefix_cache},
      Field{"tiers", &S::tiers},
      Field{"layer_classes", &S::layer_classes},
      Field{"adapter_weights", &S::adapter_weights},
      Field{"speculative_classes", &S::speculative_classes},
      Field{"requests_arrived", &S::requests_arrived},
      Field{"requests_finished", &S::requests_finished},
      Field{"iterations", &S::iterations},
      Field{"window_iterations", &S::window_iterations},
      Field{"sim_time_s", &S::sim_time_s},
      Field{"wall_s", &S::wall_s},
      Field{"sim_seconds_per_wall_second", &S::sim_seconds_per_wall_second},
      Field{"iterations_per_wall_second", &S::iterations_per_wall_second},
  };
};
static_assert(lists_every_member<Summary>());

// What summary.json adds after the Summary's fields, each only when non-empty / non-zero, so
// summaries of runs without them, and sweep.csv's columns, keep their bytes.
struct SummaryNotes {
  std::int64_t requests_dropped_oversize = 0;    // workload.oversize: drop (or a truncate that failed)
  std::int64_t requests_truncated_oversize = 0;  // workload.oversize: truncate
  std::vector<std::string> warnings;             // settings that ran but deserve a look
  // Only with slo set / replicas.count > 1 (null otherwise): "slo" (slo.h), "cluster" and
  // "replicas" (cluster_summary.h). The per-replica array is summary.json's alone: add_to
  // moves it there and read_from leaves it out, so the notes a sweep keeps for each point do
  // not hold a fleet's megabytes.
  nlohmann::ordered_json slo, cluster, replicas;
  // Only under a cost model that keeps notes (cost.kind operators; null otherwise): "cost",
  // its lookups and extrapolated lookups per operator, summed over replicas.
  nlohmann::ordered_json cost;
  // Only with speculative decoding on (null otherwise): "speculative" (speculative_metrics.h);
  // sweep.csv columns but for num_speculative_tokens, which would shadow the swept key.
  nlohmann::ordered_json speculative;

  // Adds the non-empty notes to summary.json's object `j`, moving `replicas` (null after it).
  void add_to(nlohmann::ordered_json& j);
  // The notes add_to wrote into `j` (absent ones stay empty), but for `replicas`. Throws
  // nlohmann::json::exception on a field of the wrong type.
  static SummaryNotes read_from(const nlohmann::ordered_json& j);
};

// The sweep table's columns from the notes, after the Summary's: "slo.*", "cluster.*" and
// "speculative.*", flattened (per-replica arrays stay in each summary.json). Empty without them.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_note_columns(const SummaryNotes& notes);

// [("memory_pct.token_states", 12.3), ...] in summary.json's order.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten(const nlohmann::ordered_json& j);

// True for the fields measured on the host (wall_s, *_per_wall_second): the only ones that
// differ between two runs of the same config, so reproducible outputs leave them out.
bool is_host_timing(const std::string& flat_key);

}  // namespace pagesim::sim
