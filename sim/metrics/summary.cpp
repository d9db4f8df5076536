#include "sim/metrics/summary.h"

namespace pagesim::sim {
namespace {

nlohmann::ordered_json mem_json(const MemoryPct& m) {
  return {{"token_states", m.token_states}, {"reserved", m.reserved},   {"over_reserved", m.over_reserved},
          {"rounding", m.rounding},         {"free", m.free},           {"unusable_free", m.unusable_free},
          {"cached_free", m.cached_free}};
}

nlohmann::ordered_json dist_json(const Distribution& d) {
  return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

void flatten_into(const std::string& prefix, const nlohmann::ordered_json& j,
                  std::vector<std::pair<std::string, nlohmann::ordered_json>>& out) {
  if (!j.is_object()) {
    out.emplace_back(prefix, j);
    return;
  }
  for (const auto& [k, v] : j.items()) flatten_into(prefix.empty() ? k : prefix + "." + k, v, out);
}

}  // namespace

nlohmann::ordered_json Summary::to_json() const {
  nlohmann::ordered_json j;
  j["memory_pct"] = mem_json(memory_pct);
  j["memory_pct_time_weighted"] = mem_json(memory_pct_time_weighted);
  j["mean_batched_requests"] = mean_batched_requests;
  j["mean_batched_seqs"] = mean_batched_seqs;
  j["sharing_saving_pct"] = sharing_saving_pct;
  j["throughput_rps"] = throughput_rps;
  j["throughput_tokens_per_s"] = throughput_tokens_per_s;
  j["normalized_latency_s_per_token"] = normalized_latency_s_per_token;
  j["normalized_latency"] = dist_json(normalized_latency);
  j["e2e_s"] = dist_json(e2e_s);
  j["ttft_s"] = dist_json(ttft_s);
  j["tpot_s"] = dist_json(tpot_s);
  j["preemptions"] = preemptions;
  j["recompute_preemptions"] = recompute_preemptions;
  j["swap_preemptions"] = swap_preemptions;
  j["swapped_bytes"] = swapped_bytes;
  j["prefix_hit_rate"] = prefix_hit_rate;
  j["requests_arrived"] = requests_arrived;
  j["requests_finished"] = requests_finished;
  j["iterations"] = iterations;
  j["window_iterations"] = window_iterations;
  j["sim_time_s"] = sim_time_s;
  j["wall_s"] = wall_s;
  j["sim_seconds_per_wall_second"] = sim_seconds_per_wall_second;
  j["iterations_per_wall_second"] = iterations_per_wall_second;
  return j;
}

std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten(const nlohmann::ordered_json& j) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out;
  flatten_into("", j, out);
  return out;
}

bool is_host_timing(const std::string& flat_key) {
  return flat_key == "wall_s" || flat_key.ends_with("_per_wall_second");
}

}  // namespace pagesim::sim
