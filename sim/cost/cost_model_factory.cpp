#include "sim/cost/cost_model_factory.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {

ModelSpec resolve_model(const std::variant<std::string, ModelSpec>& model) {
  if (const auto* name = std::get_if<std::string>(&model)) return model_preset(*name);
  return std::get<ModelSpec>(model);
}

GpuSpec resolve_gpu(const std::variant<std::string, GpuSpec>& gpu) {
  if (const auto* name = std::get_if<std::string>(&gpu)) return gpu_preset(*name);
  return std::get<GpuSpec>(gpu);
}

namespace {

std::filesystem::path input_file(const CostModelSpec& spec, const std::string& path) {
  return spec.input_file ? spec.input_file(path) : std::filesystem::path(path);
}

// The tables of the source tree (or, without it, of the installed package's bundled data)
// unless the settings name others; the GPU's folder from its preset unless they name it;
// vLLM's CUDA-graph sizes for the batch limits.
OperatorsCostParams operators_params(const OperatorsCostSettings& s, const CostModelSpec& spec,
                                     const GpuSpec& gpu) {
  OperatorsCostParams p;
  std::error_code ec;
  const std::filesystem::path built_in = std::filesystem::is_directory(default_operator_tables(), ec)
                                             ? default_operator_tables()
                                             : input_file(spec, "sim/cost/operator_tables");
  p.tables = s.tables.empty() ? built_in : input_file(spec, s.tables);
  p.engine = s.engine;
  p.gpu = s.gpu;
  if (p.gpu.empty()) {
    const std::optional<std::string_view> folder = operator_table_gpu(gpu.name);
    if (!folder)
      throw CostModelError(fmt::format("cost.kind operators has no measured operator tables for gpu '{}'; set "
                                       "cost.operators.gpu to one of the GPUs of {}: {}",
                                       gpu.name, p.tables.string(), fmt::join(operator_table_folders(p.tables), ", ")));
    p.gpu = std::string(*folder);
  }
  const std::int64_t max_size = s.cuda_graph_max_size == -1 ? CudaGraphSizes::vllm_default_max_size(spec.max_num_seqs)
                                                            : s.cuda_graph_max_size;
  p.cuda_graphs = CudaGraphSizes::vllm_default(max_size, spec.max_num_batched_tokens);
  p.gpu_scale = s.gpu_scale;
  p.memory_ops = s.memory_ops;
  p.host_step_s = s.host_step_s;
  p.host_per_seq_s = s.host_per_seq_s;
  return p;
}

}  // namespace

std::unique_ptr<CostModel> make_cost_model(const CostModelSpec& spec) {
  const CostSettings& settings = spec.settings;
  if (const auto* r = std::get_if<RooflineCostSettings>(&settings))
    return std::make_unique<RooflineCostModel>(resolve_model(spec.model), r->applied_to(resolve_gpu(spec.gpu)), spec.tp);
  if (const auto* k = std::get_if<ConstantCostCoefficients>(&settings)) return std::make_unique<ConstantCostModel>(*k);
  if (const auto* p = std::get_if<ProfileCostSettings>(&settings)) {
    if (p->profile.empty()) throw CostModelError("profile cost model: the profile setting is empty, expected a CSV path");
    auto profile = std::make_unique<ProfileCostModel>(input_file(spec, p->profile),
                                                      std::max(0.0, p->iteration_overhead_s), p->profile);
    profile->check_model(resolve_model(spec.model));
    return profile;
  }
  const GpuSpec gpu = resolve_gpu(spec.gpu);
  return std::make_unique<OperatorsCostModel>(resolve_model(spec.model), gpu, spec.tp,
                                              operators_params(std::get<OperatorsCostSettings>(settings), spec, gpu));
}

}  // namespace pagesim::sim
