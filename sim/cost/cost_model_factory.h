// make_cost_model: builds the CostModel an experiment asks for from a plain spec.
//
// CostModelSpec names the model, the GPU and the tensor-parallel degree, and holds the settings
// of one cost.kind, declared beside its model, the experiment's cost section as given:
//   roofline  RooflineCostSettings: overrides of the GPU preset (roofline_cost_model.h)
//   constant  ConstantCostCoefficients: the coefficients (constant_cost_model.h)
//   profile   ProfileCostSettings: the CSV and host time (profile_cost_model.h); the table
//             must have moe rows exactly when the model has MoE layers (check_model)
//   operators OperatorsCostSettings: the tables and calibration (operators_cost_model.h); the
//             GPU's PCIe prices swaps, its preset names the tables' folder unless the settings
//             do, and the batch limits size vLLM's CUDA graphs
// The defaults describe the vLLM paper's setting (OPT-13B on one A100-40GB). A preset can be
// tuned by looking it up (presets.h), changing fields, and passing the struct. Pure
// functions; the returned model is independent of the spec.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "sim/cost/constant_cost_model.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/operators_cost_model.h"
#include "sim/cost/profile_cost_model.h"
#include "sim/cost/roofline_cost_model.h"

namespace pagesim::sim {

enum class CostModelKind { roofline, constant, profile, operators };

// The names configs write (a std::array of pairs, the form of every name table).
inline constexpr std::array<std::pair<CostModelKind, std::string_view>, 4> kCostModelKindNames = {{
    {CostModelKind::roofline, "roofline"},
    {CostModelKind::constant, "constant"},
    {CostModelKind::profile, "profile"},
    {CostModelKind::operators, "operators"},
}};

// "roofline", "constant", "profile", "operators"; "?" for a value outside the enum.
constexpr std::string_view to_string(CostModelKind kind) {
  for (const auto& [k, name] : kCostModelKindNames)
    if (k == kind) return name;
  return "?";
}

// The settings of one cost.kind: the alternative at index i is kCostModelKindNames[i]'s.
using CostSettings =
    std::variant<RooflineCostSettings, ConstantCostCoefficients, ProfileCostSettings, OperatorsCostSettings>;
static_assert(std::variant_size_v<CostSettings> == kCostModelKindNames.size());

constexpr CostModelKind kind_of(const CostSettings& settings) {
  return static_cast<CostModelKind>(settings.index());
}

struct CostModelSpec {
  std::variant<std::string, ModelSpec> model = std::string("opt-13b");  // roofline, operators, profile: preset/spec
  std::variant<std::string, GpuSpec> gpu = std::string("a100-40gb");    // roofline, operators: preset/spec
  int tp = 1;                  // roofline, operators: tensor-parallel degree (GPUs)
  CostSettings settings;       // the kind and its settings; default: roofline with the GPU preset's settings
  // Where a setting's relative path is found (the profile CSV, the operator tables); empty:
  // the path as given.
  std::function<std::filesystem::path(const std::string&)> input_file;
  // operators: the scheduler's batch limits, by which vLLM sizes its CUDA graphs.
  std::int64_t max_num_seqs = 256;
  std::int64_t max_num_batched_tokens = 2560;
};

// The ModelSpec or GpuSpec a spec field designates: the preset of that name, or the given
// struct. Throws CostModelError listing the valid names for an unknown preset.
ModelSpec resolve_model(const std::variant<std::string, ModelSpec>& model);
GpuSpec resolve_gpu(const std::variant<std::string, GpuSpec>& gpu);

// Throws CostModelError (ProfileFormatError for a bad profile) when the spec's fields for its
// kind are invalid; never returns null.
std::unique_ptr<CostModel> make_cost_model(const CostModelSpec& spec);

}  // namespace pagesim::sim
