#include "sim/cost/cost_model_factory.h"

#include <fmt/format.h>

#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"
#include "sim/cost/profile_cost_model.h"
#include "sim/cost/roofline_cost_model.h"

namespace pagesim::sim {

ModelSpec resolve_model(const std::variant<std::string, ModelSpec>& model) {
  if (const auto* name = std::get_if<std::string>(&model)) return model_preset(*name);
  return std::get<ModelSpec>(model);
}

GpuSpec resolve_gpu(const std::variant<std::string, GpuSpec>& gpu) {
  if (const auto* name = std::get_if<std::string>(&gpu)) return gpu_preset(*name);
  return std::get<GpuSpec>(gpu);
}

std::unique_ptr<CostModel> make_cost_model(const CostModelSpec& spec) {
  switch (spec.kind) {
    case CostModelKind::roofline:
      return std::make_unique<RooflineCostModel>(resolve_model(spec.model),
                                                 resolve_gpu(spec.gpu), spec.tp);
    case CostModelKind::constant:
      return std::make_unique<ConstantCostModel>(spec.constant);
    case CostModelKind::profile:
      if (spec.profile_path.empty()) {
        throw CostModelError("profile cost model: profile_path is empty, expected a CSV path");
      }
      {
        auto profile = std::make_unique<ProfileCostModel>(spec.profile_path, spec.iteration_overhead_s,
                                                          spec.profile_name);
        profile->check_model(resolve_model(spec.model));
        return profile;
      }
    case CostModelKind::operators:
      return std::make_unique<OperatorsCostModel>(resolve_model(spec.model), resolve_gpu(spec.gpu), spec.tp,
                                                  spec.operators);
  }
  throw CostModelError(
      fmt::format("cost model kind {} is not one of roofline, constant, profile, operators",
                  static_cast<int>(spec.kind)));
}

}  // namespace pagesim::sim
