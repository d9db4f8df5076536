// make_cost_model: builds the CostModel an experiment asks for from a plain spec.
//
// CostModelSpec names the kind and only the fields that kind reads:
//   roofline  model (a preset name or a full ModelSpec), gpu (preset name or GpuSpec), tp
//   constant  constant (the coefficients)
//   profile   profile_path (CSV, see profile_cost_model.h), iteration_overhead_s, model
//             (the table must have moe rows exactly when it has MoE layers: check_model)
//   operators model, gpu (its GpuSpec: PCIe for swaps), tp, operators (the tables, CUDA-graph
//             sizes, calibration coefficients; operators_cost_model.h)
// The defaults describe the vLLM paper's setting (OPT-13B on one A100-40GB). A preset can be
// tuned by looking it up (presets.h), changing fields, and passing the struct. Pure
// functions; the returned model is independent of the spec.
#pragma once

#include <array>
#include <filesystem>
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

struct CostModelSpec {
  CostModelKind kind = CostModelKind::roofline;
  std::variant<std::string, ModelSpec> model = std::string("opt-13b");  // roofline, operators, profile: preset/spec
  std::variant<std::string, GpuSpec> gpu = std::string("a100-40gb");    // roofline, operators: preset/spec
  int tp = 1;                            // roofline, operators: tensor-parallel degree (GPUs)
  ConstantCostCoefficients constant;     // constant: coefficients (s, s/token, ...)
  std::filesystem::path profile_path;    // profile: the CSV to read
  std::string profile_name;              // profile: how describe() and errors name it ("" = path)
  double iteration_overhead_s = 0;       // profile: host seconds added to every non-empty
                                         // iteration (profile_cost_model.h), >= 0
  OperatorsCostSettings operators;       // operators: tables, engine, CUDA graphs, coefficients
};

// The ModelSpec or GpuSpec a spec field designates: the preset of that name, or the given
// struct. Throws CostModelError listing the valid names for an unknown preset.
ModelSpec resolve_model(const std::variant<std::string, ModelSpec>& model);
GpuSpec resolve_gpu(const std::variant<std::string, GpuSpec>& gpu);

// Throws CostModelError (ProfileFormatError for a bad profile) when the spec's fields for its
// kind are invalid; never returns null.
std::unique_ptr<CostModel> make_cost_model(const CostModelSpec& spec);

}  // namespace pagesim::sim
