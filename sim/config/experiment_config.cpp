#include "sim/config/experiment_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "sim/config/calibration.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_checks.h"
#include "sim/config/experiment_fields.h"
#include "sim/config/input_path.h"
#include "sim/config/kind_rules.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {

// The field lists are experiment_fields.h's, the checks experiment_checks.h's and the tree
// edits config_tree.h's; here: parsing a file into the config and writing it back.

std::vector<std::string> parse_lora_modules(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(pos, end - pos);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    bool known = false;
    for (std::string_view m : kLoraModules) known |= m == name;
    std::string all;
    for (std::string_view m : kLoraModules) all += (all.empty() ? "" : ", ") + std::string(m);
    if (!known)
      throw std::invalid_argument(fmt::format("expected comma-separated module names among {}, found '{}'", all, name));
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw std::invalid_argument(fmt::format("module '{}' is named twice", name));
    out.push_back(name);
    pos = end + 1;
  }
  return out;
}

std::string format_lora_modules(const std::vector<std::string>& modules) {
  std::string s;
  for (const std::string& m : modules) s += (s.empty() ? "" : ",") + m;
  return s;
}

namespace {

// ---- replicas and slo ----

// The top-level keys a replicas.overrides entry may set besides `index`: what one serving
// instance is (its hardware, model, pool and policies), not what the cluster serves.
constexpr const char* kOverridableKeys[] = {"model", "gpu", "tensor_parallel", "max_model_len",
                                            "kv", "allocator", "scheduler", "cost"};

// Lays `value` over `root` at `path`, key by key for maps, so that an override's
// `kv: {slots: N}` changes kv.slots and keeps the experiment's other kv keys.
void overlay(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& file) {
  if (value.IsMap() && value.size() > 0) {
    for (const auto& kv : value) overlay(root, path + "." + kv.first.Scalar(), kv.second, file);
    return;
  }
  set_path(root, path, value, file);
}

// Parses replicas.overrides of `root` into c.replicas.overrides: each entry's keys laid over
// the experiment and the result parsed as a whole experiment, so every key is checked as it
// would be at the top level; errors name the entry's key path.
void parse_replica_overrides(const YAML::Node& root, const std::string& file, ExperimentConfig& c) {
  const YAML::Node section = root["replicas"];
  if (!section || !section.IsMap() || !section["overrides"]) return;
  const YAML::Node list = section["overrides"];
  const ConfigOrigin& o = c.origin;
  c.origin.record("replicas.overrides", YamlReader::line_of(list));
  if (!list.IsSequence())
    throw o.error("replicas.overrides", "expected a list of per-replica settings ({index: i, gpu: ..., kv: ...})");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string at = fmt::format("replicas.overrides[{}]", i);
    c.origin.record(at, YamlReader::line_of(e));
    if (!e.IsMap()) throw o.error(at, "expected a map with an index and the settings that replica changes");
    std::string allowed = "index";
    for (const char* k : kOverridableKeys) allowed += std::string(", ") + k;
    for (const auto& kv : e) {
      const std::string k = kv.first.Scalar();
      bool known = k == "index";
      for (const char* a : kOverridableKeys) known |= k == a;
      if (!known)
        throw ConfigError(file, YamlReader::line_of(kv.first), at + "." + k,
                          "unknown key (allowed here: " + allowed + "; the workload, seed and outputs are the "
                          "cluster's, not a replica's)");
    }
    const YAML::Node index = e["index"];
    if (!index) throw o.error(at, "expected an index: the replica (0 to replicas.count - 1) these settings apply to");
    ReplicaOverride ov;
    try {
      ov.index = index.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      throw ConfigError(file, YamlReader::line_of(index), at + ".index",
                        "expected an integer, found '" + (index.IsScalar() ? index.Scalar() : std::string("a collection")) + "'");
    }
    if (ov.index < 0 || ov.index >= c.replicas.count)
      throw ConfigError(file, YamlReader::line_of(index), at + ".index",
                        fmt::format("expected a replica index in [0, {}] (replicas.count = {}), found {}",
                                    c.replicas.count - 1, c.replicas.count, ov.index));
    for (const ReplicaOverride& earlier : c.replicas.overrides)
      if (earlier.index == ov.index)
        throw ConfigError(file, YamlReader::line_of(index), at + ".index",
                          fmt::format("replica {} already has an override: give each replica one entry", ov.index));
    YAML::Node replica_root = fork_root(root);
    replica_root.remove("replicas");
    replica_root.remove("sweep");
    for (const auto& kv : e)
      if (kv.first.Scalar() != "index") overlay(replica_root, kv.first.Scalar(), kv.second, file);
    // A replica of another pool kind keeps none of the experiment's keys of its kind.
    if (const YAML::Node a = e["allocator"]; a && a.IsMap()) {
      std::vector<KeyAssignment> laid;
      for (const auto& kv : a) laid.push_back({"allocator." + kv.first.Scalar(), kv.second});
      drop_other_kinds_keys(replica_root, laid, kServingKinds);
    }
    try {
      ov.config = std::make_shared<const ExperimentConfig>(parse_experiment(replica_root, file));
    } catch (const ConfigError& err) {
      // Keys the entry gave are named under it; others are the experiment's own.
      const std::string top = err.key().substr(0, err.key().find_first_of(".["));
      const bool from_entry = !err.key().empty() && e[top];
      // A key the overlay created anew has no mark: the line of the entry's section stands in.
      const int line = err.line() > 0 ? err.line() : YamlReader::line_of(from_entry ? e[top] : e);
      throw ConfigError(err.file(), line, from_entry ? at + "." + err.key() : err.key(),
                        from_entry ? err.message() : fmt::format("{} (on replica {}, with {})", err.message(), ov.index, at));
    }
    c.replicas.overrides.push_back(std::move(ov));
  }
}

// The input paths of `c` (input_path.h; null where the cost kind has no such key), and
// whether the run reads each as configured. C: ExperimentConfig, const or not.
template <class C>
auto input_paths_of(C& c) {
  using Value = std::conditional_t<std::is_const_v<C>, const std::string, std::string>;
  struct Input {
    const char* key;
    Value* value;
    InputKind kind;
    bool read;
  };
  auto& w = c.workload;
  const bool lengths_file = (w.kind == traces::WorkloadKind::kSynthetic || w.kind == traces::WorkloadKind::kSessions) &&
                            w.lengths.kind != traces::LengthsKind::kDistributions;
  auto& m = c.custom_model;
  auto* profile = std::get_if<ProfileCostSettings>(&c.cost);
  auto* operators = std::get_if<OperatorsCostSettings>(&c.cost);
  return std::array<Input, 6>{{
      {"workload.trace.path", &w.trace.path, InputKind::kFile, w.kind == traces::WorkloadKind::kTrace},
      {"model.hf_config", &m.hf_config, InputKind::kFile, m.given && !m.hf_config.empty()},
      {"workload.lengths.path", &w.lengths.path, InputKind::kFile, lengths_file},
      {"cost.profile", profile ? &profile->profile : nullptr, InputKind::kFile, profile != nullptr},
      {"cost.operators.tables", operators ? &operators->tables : nullptr, InputKind::kFolder, operators != nullptr},
      {"calibration", &c.calibration, InputKind::kFile, c.calibration != kNoCalibration},
  }};
}

// The folder `key`'s relative path resolves against: the working directory for a --set
// value, else the experiment file's folder.
std::filesystem::path input_base(const ConfigOrigin& origin, const char* key) {
  return experiment_dir(origin.given_without_line(key) ? std::string() : origin.file());
}

// Every input path of `c` that some folder holds, in its portable form (input_path.h); the
// others stay as written (check_input_paths names those the run reads).
void resolve_input_paths(ExperimentConfig& c) {
  for (const auto& in : input_paths_of(c)) {
    if (!in.value || in.value->empty() || (in.value == &c.calibration && !in.read)) continue;
    if (const std::optional<std::string> found = find_input(*in.value, input_base(c.origin, in.key), in.kind))
      *in.value = *found;
  }
}

// speculative.acceptance: one probability (every position) or a list of them (position by
// position), into c.speculative.settings.acceptance.
void read_acceptance(const YAML::Node& root, ExperimentConfig& c) {
  const YAML::Node section = root["speculative"];
  if (!section || !section.IsMap()) return;
  const YAML::Node n = section["acceptance"];
  if (!n) return;
  const std::string key = "speculative.acceptance";
  const int line = YamlReader::line_of(n);
  c.origin.record(key, line);
  auto number = [&](const YAML::Node& v, const std::string& where) {
    double x = 0;
    try {
      if (!v.IsScalar()) throw YAML::Exception(YAML::Mark::null_mark(), "");
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      throw ConfigError(c.origin.file(), YamlReader::line_of(v), where,
                        "expected an acceptance probability in [0, 1] (or a list of them, one per proposed position)");
    }
    return x;
  };
  std::vector<double>& out = c.speculative.settings.acceptance;
  out.clear();
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(number(n[i], key + "[" + std::to_string(i) + "]"));
  } else {
    out.push_back(number(n, key));
  }
}

}  // namespace

std::int64_t parse_max_model_len(const std::string& text) {
  if (text == "off") return kMaxModelLenOff;
  if (text == "model") return kMaxModelLenOfModel;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    throw std::invalid_argument("expected off, model (the model's context length) or a number of tokens >= 1, "
                                "found '" + text + "'");
  return n;
}

std::string format_max_model_len(std::int64_t value) {
  if (value == kMaxModelLenOff) return "off";
  if (value == kMaxModelLenOfModel) return "model";
  return std::to_string(value);
}

bool ReplicasConfig::at_default() const {
  const RouterSettings d;
  return count == 1 && overrides.empty() && !disaggregated.enabled() && !global_cache.enabled && router.kind == d.kind &&
         router.balance_abs_threshold == d.balance_abs_threshold &&
         router.balance_rel_threshold == d.balance_rel_threshold && router.cache_threshold == d.cache_threshold;
}

void check_input_paths(const ExperimentConfig& c) {
  for (const auto& in : input_paths_of(c)) {
    if (!in.read || !in.value || in.value->empty()) continue;
    const std::filesystem::path base = input_base(c.origin, in.key);
    if (!find_input(*in.value, base, in.kind)) throw c.origin.error(in.key, input_not_found(*in.value, base, in.kind));
  }
}

const ExperimentConfig& replica_config(const ExperimentConfig& config, std::int64_t i) {
  for (const ReplicaOverride& o : config.replicas.overrides)
    if (o.index == i) return *o.config;
  return config;
}

std::vector<std::int64_t> first_replica_of_each_config(const ExperimentConfig& config) {
  std::vector<std::int64_t> firsts;
  std::unordered_set<const ExperimentConfig*> seen;
  for (std::int64_t i = 0; i < config.replicas.count; ++i)
    if (seen.insert(&replica_config(config, i)).second) firsts.push_back(i);
  return firsts;
}

namespace {
// parse_experiment of an experiment whose calibration, if any, is laid in already.
ExperimentConfig parse_settings(const YAML::Node& given, const std::string& file);
}  // namespace

ExperimentConfig parse_experiment(const YAML::Node& file_root, const std::string& file) {
  if (!file_root || !file_root.IsMap())
    throw ConfigError(file, YamlReader::line_of(file_root), "", "expected a YAML map of settings");
  CalibratedKeys calibrated;
  const YAML::Node given = apply_calibration(file_root, file, &calibrated);
  if (calibrated.keys.empty()) return parse_settings(given, file);
  try {
    return parse_settings(given, file);
  } catch (const ConfigError& e) {
    calibrated.rethrow(e);
  }
}

namespace {
ExperimentConfig parse_settings(const YAML::Node& given, const std::string& file) {
  YAML::Node root = given;
  if (const YAML::Node n = given["replicas"]; n && n.IsScalar()) {
    // `replicas: N` is short for `replicas: {count: N}` (the value keeps its line).
    root = fork_root(given);
    YAML::Node section(YAML::NodeType::Map);
    section["count"] = n;
    root["replicas"] = section;
  }
  ExperimentConfig c;
  c.origin = ConfigOrigin(file);
  YamlReader r(root, "", c.origin);
  visit_experiment_fields(r, c);
  r.done();
  c.workload.seed = c.seed;
  c.workload.inference_perf.shared_prefix.question_distribution.given =
      c.origin.has("workload.inference_perf.shared_prefix.question_distribution");
  c.workload.inference_perf.shared_prefix.output_distribution.given =
      c.origin.has("workload.inference_perf.shared_prefix.output_distribution");
  c.client.enabled = c.origin.has("client");
  c.lora.enabled = c.origin.has("lora");
  if (c.custom_model.given) complete_custom_model(c.model, c.custom_model, c.origin);
  // What scheduler.kind implies (sglang: allocator.kind radix with pages of 1 token; vllm-v1:
  // prefix caching, as vLLM v1 turns it on by default) where the file leaves the keys out.
  apply_kind_defaults(c, kServingKinds);
  c.replicas.router.seed = c.seed;
  c.replicas.global_cache.enabled = c.origin.has("replicas.global_cache");
  read_acceptance(root, c);
  // vLLM keeps a draft model's and an EAGLE head's KV in the target's KV budget.
  if (!c.origin.has("speculative.draft_kv") && (c.speculative.settings.method == SpeculativeMethod::kDraftModel ||
                                                 c.speculative.settings.method == SpeculativeMethod::kEagle))
    c.speculative.settings.draft_kv = DraftKvPlacement::kShared;
  check_values(c, kServingKinds);
  check_speculative(c, kServingKinds);
  resolve_input_paths(c);
  parse_replica_overrides(root, file, c);
  check_replicas(c, kServingKinds);
  return c;
}
}  // namespace

YAML::Node to_yaml(const ExperimentConfig& config, bool every_field) {
  ExperimentConfig c = config;  // the visitors take non-const references
  YAML::Node root(YAML::NodeType::Map);
  YamlWriter w(root, every_field);
  visit_experiment_fields(w, c);
  // A pool that is its cache has one cache and one eviction order (radix): the reader refuses
  // the two keys (prefix_cache: false, any eviction) there, so a resolved config leaves them out.
  if (allocator_kind(kServingKinds, c.allocator.kind).traits().prefix_caching == alloc::PrefixCaching::kAlways) {
    root["allocator"].remove("prefix_cache");
    root["allocator"].remove("eviction");
  }
  if (root["speculative"]) {
    const std::vector<double>& a = c.speculative.settings.acceptance;
    if (a.size() == 1) {
      root["speculative"]["acceptance"] = YamlWriter::yaml_number(a.front());
    } else {
      YAML::Node list(YAML::NodeType::Sequence);
      for (double p : a) list.push_back(YamlWriter::yaml_number(p));
      root["speculative"]["acceptance"] = list;
    }
  }
  if (!c.replicas.overrides.empty()) {
    // Each replica's settings in full (not only the keys its entry gave).
    YAML::Node list(YAML::NodeType::Sequence);
    for (const ReplicaOverride& o : c.replicas.overrides) {
      const YAML::Node all = to_yaml(*o.config, every_field);
      YAML::Node entry(YAML::NodeType::Map);
      entry["index"] = o.index;
      for (const char* k : kOverridableKeys)
        if (all[k]) entry[k] = all[k];
      list.push_back(entry);
    }
    root["replicas"]["overrides"] = list;
  }
  return root;
}

std::vector<KeyInfo> experiment_keys() {
  ExperimentConfig c;
  KeySchemaBuilder b;
  visit_experiment_fields(b, c);
  // A custom model's name defaults to its config file's name or "custom", not the preset's.
  for (KeyInfo& k : b.keys())
    if (k.key == "model")
      for (KeyInfo& m : k.children)
        if (m.key == "name") m.default_text.clear();
  return std::move(b.keys());
}

}  // namespace pagesim::sim
