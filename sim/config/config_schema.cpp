#include "sim/config/config_schema.h"

#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sim/config/experiment_config.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {
namespace {

using nlohmann::ordered_json;
using Type = KeyInfo::Type;

// Top-level keys whose strings name a preset: the schema lists the names for completion (the
// reader takes any string and names the valid ones when it does not know it).
std::vector<std::string> preset_names(const std::string& path) {
  std::vector<std::string> out;
  if (path == "model")
    for (std::string_view n : model_preset_names()) out.emplace_back(n);
  if (path == "gpu")
    for (std::string_view n : gpu_preset_names()) out.emplace_back(n);
  return out;
}

ordered_json schema_of(const KeyInfo& k, const std::string& path);

ordered_json object_of(const std::vector<KeyInfo>& keys, const std::string& path) {
  ordered_json o = {{"type", "object"}, {"additionalProperties", false}};
  ordered_json props = ordered_json::object();
  for (const KeyInfo& k : keys) props[k.key] = schema_of(k, path.empty() ? k.key : path + "." + k.key);
  o["properties"] = props;
  return o;
}

// The default as JSON: a number, a boolean or a string, as the YAML text reads.
ordered_json default_of(const KeyInfo& k) {
  const std::string& t = k.default_text;
  switch (k.type) {
    case Type::kBool: return t == "true";
    case Type::kInteger:
    case Type::kNonNegativeInteger: return std::stoll(t);
    case Type::kNumber: {
      const double d = std::stod(t == ".inf" ? "inf" : t);
      return std::isfinite(d) ? ordered_json(d) : ordered_json();
    }
    default: return t;
  }
}

ordered_json schema_of(const KeyInfo& k, const std::string& path) {
  ordered_json s;
  switch (k.type) {
    case Type::kBool: s = {{"type", "boolean"}}; break;
    case Type::kInteger: s = {{"type", "integer"}}; break;
    case Type::kNonNegativeInteger: s = {{"type", "integer"}, {"minimum", 0}}; break;
    case Type::kNumber: s = {{"type", "number"}}; break;
    // YAML reads `name: 2024` as a number; pagesim takes its text.
    case Type::kString:
      s = {{"type", ordered_json::array({"string", "number"})}};
      if (const auto names = preset_names(path); !names.empty()) s = {{"type", "string"}, {"enum", names}};
      break;
    // YAML 1.1 readers (PyYAML) take `off` for false: max_model_len: off.
    case Type::kParsed: s = {{"type", ordered_json::array({"string", "number", "boolean"})}}; break;
    case Type::kChoice: s = {{"enum", k.choices}}; break;
    case Type::kSection: return object_of(k.children, path);
    case Type::kList:
      return {{"type", "array"}, {"items", object_of(k.children, path + "[]")}, {"description", k.meaning}};
    case Type::kStringOrSection: {
      ordered_json name = {{"type", "string"}};
      if (const auto names = preset_names(path); !names.empty()) name["enum"] = names;
      return {{"anyOf", ordered_json::array({name, object_of(k.children, path)})},
              {"default", k.default_text},
              {"description", k.meaning}};
    }
    case Type::kOther: return ordered_json::object();  // sweep and replicas.overrides: below
  }
  if (const ordered_json d = default_of(k); !d.is_null()) s["default"] = d;
  if (!k.meaning.empty()) s["description"] = k.meaning;
  return s;
}

// Every dotted key a sweep may vary: fields, sections and lists (not into list elements).
void collect_paths(const std::vector<KeyInfo>& keys, const std::string& prefix, std::vector<std::string>& out) {
  for (const KeyInfo& k : keys) {
    if (k.key == "sweep") continue;
    const std::string path = prefix.empty() ? k.key : prefix + "." + k.key;
    out.push_back(path);
    if (k.type == Type::kSection || k.type == Type::kStringOrSection) collect_paths(k.children, path, out);
  }
}

ordered_json sweep_schema(const std::vector<std::string>& paths) {
  std::vector<std::string> case_keys = {"label"};
  case_keys.insert(case_keys.end(), paths.begin(), paths.end());
  std::vector<std::string> axis_keys = {"cases"};
  axis_keys.insert(axis_keys.end(), paths.begin(), paths.end());
  const ordered_json one_case = {{"type", "object"},
                                 {"properties", {{"label", {{"type", ordered_json::array({"string", "number"})}}}}},
                                 {"propertyNames", {{"enum", case_keys}}}};
  return {{"description", "Runs of this experiment: `key.path: [values]` grid axes (their cartesian product) and "
                          "`cases`, named combinations crossed with the grid (sim/config/sweep.h)."},
          {"type", "object"},
          {"properties", {{"cases", {{"type", "array"}, {"items", one_case}}}}},
          {"propertyNames", {{"enum", axis_keys}}},
          {"additionalProperties", {{"type", "array"}}}};
}

}  // namespace

std::string experiment_json_schema() {
  const std::vector<KeyInfo> keys = experiment_keys();
  ordered_json root = {{"$schema", "https://json-schema.org/draft/2020-12/schema"},
                       {"$id", "https://github.com/pagesim/pagesim/docs/experiment.schema.json"},
                       {"title", "pagesim experiment"},
                       {"description", "An experiment file of pagesim (generated by `pagesim schema` from the "
                                       "reader's field list; docs/experiment-keys.md lists the same keys)."}};
  const ordered_json body = object_of(keys, "");
  root["type"] = "object";
  root["additionalProperties"] = false;
  root["properties"] = body["properties"];
  std::vector<std::string> paths;
  collect_paths(keys, "", paths);
  root["properties"]["sweep"] = sweep_schema(paths);
  // `replicas: N` is short for `replicas: {count: N}`; overrides are whole replica settings.
  ordered_json& replicas = root["properties"]["replicas"];
  replicas["properties"]["overrides"] = {
      {"type", "array"},
      {"items", {{"type", "object"}, {"required", ordered_json::array({"index"})}}}};
  replicas = {{"anyOf", ordered_json::array({{{"type", "integer"}, {"minimum", 1}}, replicas})}};
  return root.dump(2) + "\n";
}

namespace {

std::string type_name(const KeyInfo& k) {
  switch (k.type) {
    case Type::kBool: return "boolean";
    case Type::kInteger: return "integer";
    case Type::kNonNegativeInteger: return "integer ≥ 0";
    case Type::kNumber: return "number";
    case Type::kString: return "string";
    case Type::kChoice: return "choice";
    case Type::kParsed: return "text";
    case Type::kSection: return "section";
    case Type::kList: return "list of maps";
    case Type::kStringOrSection: return "name or section";
    case Type::kOther: return "see below";
  }
  return "?";
}

std::string code(const std::string& s) { return s.empty() ? "" : "`" + s + "`"; }

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + code(n);
  return out;
}

void rows(const std::vector<KeyInfo>& keys, const std::string& prefix, std::string& out) {
  for (const KeyInfo& k : keys) {
    const std::string path = prefix.empty() ? k.key : prefix + "." + k.key;
    if (k.type == Type::kSection) {
      rows(k.children, path, out);
      continue;
    }
    std::string allowed = joined(k.choices);
    if (const auto names = preset_names(path); !names.empty()) allowed = "a preset: " + joined(names);
    if (k.type == Type::kStringOrSection) allowed += "; or a section (below)";
    const std::string dflt = k.type == Type::kList ? "" : code(k.default_text);
    out += fmt::format("| `{}` | {} | {} | {} | {} |\n", path, k.meaning, type_name(k), dflt, allowed);
    if (k.type == Type::kList) rows(k.children, path + "[]", out);
    if (k.type == Type::kStringOrSection) rows(k.children, path, out);
  }
}

}  // namespace

std::string experiment_keys_markdown() {
  std::string out =
      "# Experiment keys\n\n"
      "<!-- Generated by `pagesim keys > docs/experiment-keys.md` from the reader's field list "
      "(sim/config/experiment_config.cpp, model_config.h); tests/sim/config/config_schema_test.cpp fails "
      "when this file is stale. Do not edit by hand. -->\n\n"
      "Every key an experiment file may give, in the order the reader takes them, with its meaning as the "
      "reader's field list states it. A key left out takes its "
      "default (what `config.resolved.yaml` writes). Types: *integer* (a whole number, also as 1.0 or 2.0e+4), "
      "*number* (integers too), *boolean*, *string*, read as JSON Schema reads them: a quoted scalar ('5', "
      "'yes') is a string, never a number or a boolean; *choice*: one of the names listed; *text*: a value in the key's own syntax (below); "
      "*list of maps*: each entry has the keys listed under `key[]`. Ranges and combinations are checked when "
      "the file is read, with an error naming the file, line and key. `pagesim schema` prints the same keys "
      "as a JSON Schema (docs/experiment.schema.json) for editors.\n\n"
      "Text keys: `max_model_len`: `model` (the model's context length), `off`, or tokens; `vllm_version`: a "
      "vLLM release, `MAJOR.MINOR[.PATCH]`, whose behaviour pagesim follows where releases differ "
      "(sim/core/vllm_version.h); "
      "`allocator.reservation`: `max`, `pow2`, `oracle`, `fixed:N`; `lora.target_modules`: comma-separated "
      "module names.\n\n"
      "`sweep` (sim/config/sweep.h): `key.path: [v1, v2, ...]` grid axes over any key below, and "
      "`cases: [{label: x, key.path: v, ...}, ...]`. `replicas` may also be a number (the count); "
      "`replicas.overrides` is a list of `{index: i, <key>: value, ...}` giving replica i its own `model`, "
      "`gpu`, `tensor_parallel`, `max_model_len`, `kv`, `allocator`, `scheduler` or `cost`.\n\n"
      "`model` is a preset name or a section describing a custom model: `hf_config` (a Hugging Face "
      "config.json, read offline) or the architecture inline (sim/config/model_config.h).\n\n"
      "| key | meaning | type | default | allowed |\n|---|---|---|---|---|\n";
  rows(experiment_keys(), "", out);
  return out;
}

}  // namespace pagesim::sim
