#include "sim/config/sweep.h"

#include <algorithm>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {
namespace {

std::string as_text(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << v;
  return e.c_str();
}

struct Case {
  std::string label;
  std::vector<std::pair<std::string, YAML::Node>> sets;
};

}  // namespace

std::vector<SweepPoint> expand_sweep(const YAML::Node& root, const std::string& file) {
  std::vector<SweepPoint> points;
  if (!root || !root.IsMap() || !root["sweep"]) return points;
  const YAML::Node sweep = root["sweep"];
  if (!sweep.IsMap())
    throw ConfigError(file, YamlReader::line_of(sweep), "sweep", "expected a map of key paths to lists, and/or cases");

  std::vector<Case> cases;
  std::vector<std::pair<std::string, YAML::Node>> axes;
  for (const auto& kv : sweep) {
    const std::string key = kv.first.Scalar();
    const YAML::Node val = kv.second;
    if (key == "cases") {
      if (!val.IsSequence() || val.size() == 0)
        throw ConfigError(file, YamlReader::line_of(val), "sweep.cases", "expected a non-empty list of maps");
      for (std::size_t i = 0; i < val.size(); ++i) {
        const YAML::Node c = val[i];
        const std::string where = "sweep.cases[" + std::to_string(i) + "]";
        if (!c.IsMap()) throw ConfigError(file, YamlReader::line_of(c), where, "expected a map of key.path: value");
        Case k;
        for (const auto& e : c) {
          if (e.first.Scalar() == "label") k.label = e.second.Scalar();
          else k.sets.emplace_back(e.first.Scalar(), e.second);
        }
        if (k.label.empty()) k.label = "case" + std::to_string(i);
        for (std::size_t j = 0; j < cases.size(); ++j)
          if (cases[j].label == k.label)
            throw ConfigError(file, YamlReader::line_of(c["label"] ? c["label"] : c), where + ".label",
                              "label '" + k.label + "' is already used by sweep.cases[" + std::to_string(j) +
                                  "] (labels name the points and must be unique)");
        cases.push_back(std::move(k));
      }
    } else {
      if (!val.IsSequence() || val.size() == 0)
        throw ConfigError(file, YamlReader::line_of(val), "sweep." + key, "expected a non-empty list of values");
      axes.emplace_back(key, val);
    }
  }
  if (cases.empty()) cases.push_back(Case{});

  // Points share the file's nodes (fork_root, set_path), so errors keep their lines.
  YAML::Node base = fork_root(root);
  base.remove("sweep");
  // Odometer over the grid axes, last axis fastest; false once every combination was seen.
  std::vector<std::size_t> idx(axes.size(), 0);
  auto advance = [&] {
    for (std::size_t a = axes.size(); a-- > 0;) {
      if (++idx[a] < axes[a].second.size()) return true;
      idx[a] = 0;
    }
    return false;
  };
  for (const Case& c : cases) {
    do {
      SweepPoint p;
      p.root = fork_root(base);
      std::string label = c.label;
      for (const auto& [k, v] : c.sets) {
        set_path(p.root, k, v, file + " (sweep.cases)");
        p.assignments.emplace_back(k, as_text(v));
      }
      for (std::size_t a = 0; a < axes.size(); ++a) {
        const YAML::Node v = axes[a].second[idx[a]];
        set_path(p.root, axes[a].first, v, file + " (sweep)");
        p.assignments.emplace_back(axes[a].first, as_text(v));
        label += (label.empty() ? "" : ",") + axes[a].first + "=" + as_text(v);
      }
      p.label = label.empty() ? "point" : label;
      points.push_back(std::move(p));
    } while (advance());
  }
  return points;
}

std::vector<std::string> swept_keys(const std::vector<SweepPoint>& points) {
  std::vector<std::string> keys;
  for (const auto& p : points)
    for (const auto& [k, v] : p.assignments)
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  return keys;
}

}  // namespace pagesim::sim
