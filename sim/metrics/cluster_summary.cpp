#include "sim/metrics/cluster_summary.h"

#include <algorithm>

#include "sim/metrics/global_cache_records.h"

namespace pagesim::sim {
namespace {

nlohmann::ordered_json balance(const std::vector<double>& per_replica) {
  double max = 0, sum = 0;
  for (double v : per_replica) {
    max = std::max(max, v);
    sum += v;
  }
  const double mean = sum / static_cast<double>(per_replica.size());
  nlohmann::ordered_json j;
  j["max"] = max;
  j["mean"] = mean;
  j["max_over_mean"] = mean > 0 ? max / mean : 0;
  return j;
}

}  // namespace

ClusterJson cluster_json(const std::string& router, const std::vector<ReplicaResult>& replicas, bool global_cache) {
  ClusterJson out;
  GlobalCacheSummary global_total;
  std::int64_t kv_slots = 0;
  nlohmann::ordered_json slots;  // class -> summed time-weighted mean slots
  std::vector<double> requests, tokens;
  out.replicas = nlohmann::ordered_json::array();
  for (const ReplicaResult& r : replicas) {
    kv_slots += r.kv_slots;
    nlohmann::ordered_json tw = record_json(r.summary.memory_pct_time_weighted);
    // A layer-group model's three more classes partition the pool with the five.
    if (r.summary.layer_classes) {
      const nlohmann::ordered_json layers = record_json(r.summary.layer_classes->memory_pct_time_weighted);
      for (const auto& [k, v] : layers.items()) tw[k] = v;
    }
    // So do LoRA's adapter weights and speculative decoding's four classes.
    if (r.summary.adapter_weights) tw["adapter_weights"] = r.summary.adapter_weights->memory_pct_time_weighted;
    if (r.summary.speculative_classes) {
      const nlohmann::ordered_json spec = record_json(r.summary.speculative_classes->memory_pct_time_weighted);
      for (const auto& [k, v] : spec.items()) tw[k] = v;
    }
    for (const auto& [k, v] : tw.items()) {
      const double mean_slots = v.get<double>() * static_cast<double>(r.kv_slots) / 100.0;
      slots[k] = (slots.contains(k) ? slots[k].get<double>() : 0.0) + mean_slots;
    }
    if (r.role != "decode") {
      requests.push_back(static_cast<double>(r.requests_routed));
      tokens.push_back(static_cast<double>(r.tokens_routed));
    }
    nlohmann::ordered_json j;
    j["index"] = r.index;
    j["allocator"] = r.allocator;
    j["scheduler"] = r.scheduler;
    j["cost_model"] = r.cost_model;
    j["kv_slots"] = r.kv_slots;
    j["requests_routed"] = r.requests_routed;
    j["tokens_routed"] = r.tokens_routed;
    if (!r.role.empty()) {
      j["role"] = r.role;
      j["kv_transfers_in"] = r.kv_transfers_in;
    }
    const nlohmann::ordered_json fields = r.summary.to_json();
    for (const auto& [k, v] : fields.items())
      if (!is_host_timing(k)) j[k] = v;
    if (global_cache) {
      const std::optional<PrefixCacheSummary>& pc = r.summary.prefix_cache;
      const GlobalCacheSummary g =
          GlobalCacheSummary::of(r.global_fetch, pc ? pc->prompt_tokens : 0, pc ? pc->hit_tokens : 0);
      j["global_cache"] = record_json(g);
      global_total += g;
    }
    out.replicas.push_back(std::move(j));
  }
  nlohmann::ordered_json& c = out.cluster;
  c["replicas"] = replicas.size();
  c["router"] = router;
  c["kv_slots"] = kv_slots;
  c["memory_slots_time_weighted"] = slots;
  nlohmann::ordered_json pct;
  for (const auto& [k, v] : slots.items())
    pct[k] = kv_slots > 0 ? 100.0 * v.get<double>() / static_cast<double>(kv_slots) : 0.0;
  c["memory_pct_time_weighted"] = pct;
  c["load_balance"]["requests"] = balance(requests);
  c["load_balance"]["tokens"] = balance(tokens);
  if (global_cache) c["global_cache"] = record_json(global_total);
  return out;
}

}  // namespace pagesim::sim
