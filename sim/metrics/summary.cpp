#include "sim/metrics/summary.h"

#include <utility>

namespace pagesim::sim {
namespace {

void flatten_into(const std::string& prefix, const nlohmann::ordered_json& j,
                  std::vector<std::pair<std::string, nlohmann::ordered_json>>& out) {
  if (!j.is_object()) {
    out.emplace_back(prefix, j);
    return;
  }
  for (const auto& [k, v] : j.items()) flatten_into(prefix.empty() ? k : prefix + "." + k, v, out);
}

}  // namespace

nlohmann::ordered_json Summary::to_json() const { return record_json(*this); }

void SummaryNotes::add_to(nlohmann::ordered_json& j) {
  if (requests_dropped_oversize > 0) j["requests_dropped_oversize"] = requests_dropped_oversize;
  if (requests_truncated_oversize > 0) j["requests_truncated_oversize"] = requests_truncated_oversize;
  if (!warnings.empty()) j["warnings"] = warnings;
  if (!slo.is_null()) j["slo"] = slo;
  if (!cluster.is_null()) j["cluster"] = cluster;
  if (!replicas.is_null()) j["replicas"] = std::exchange(replicas, nullptr);
  if (!cost.is_null()) j["cost"] = cost;
  if (!speculative.is_null()) j["speculative"] = speculative;
}

std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_note_columns(const SummaryNotes& notes) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out;
  for (const auto& [name, j] : {std::pair{"slo", &notes.slo}, std::pair{"cluster", &notes.cluster}}) {
    if (j->is_null()) continue;
    for (auto& [k, v] : flatten(*j)) out.emplace_back(std::string(name) + "." + k, std::move(v));
  }
  // The speculative note's measurements; num_speculative_tokens is the config key of that name
  // (a swept speculative.num_speculative_tokens has its own column), so it is left out.
  if (!notes.speculative.is_null())
    for (auto& [k, v] : flatten(notes.speculative))
      if (k != "num_speculative_tokens") out.emplace_back("speculative." + k, std::move(v));
  return out;
}

SummaryNotes SummaryNotes::read_from(const nlohmann::ordered_json& j) {
  SummaryNotes n;
  if (j.contains("requests_dropped_oversize")) n.requests_dropped_oversize = j.at("requests_dropped_oversize");
  if (j.contains("requests_truncated_oversize")) n.requests_truncated_oversize = j.at("requests_truncated_oversize");
  if (j.contains("warnings")) n.warnings = j.at("warnings").get<std::vector<std::string>>();
  if (j.contains("slo")) n.slo = j.at("slo");
  if (j.contains("cluster")) n.cluster = j.at("cluster");
  if (j.contains("cost")) n.cost = j.at("cost");
  if (j.contains("speculative")) n.speculative = j.at("speculative");
  return n;
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
