#include "sim/profile/operator_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/cost/batch_shape.h"
#include "sim/cost/operators_cost_model.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {

std::string_view to_string(CheckedOperator op) {
  switch (op) {
    case CheckedOperator::kGemmLayer: return "gemm_layer";
    case CheckedOperator::kLmHead: return "lm_head";
    case CheckedOperator::kContextAttention: return "context_attention";
    case CheckedOperator::kGenerationAttention: return "generation_attention";
    case CheckedOperator::kMoe: return "moe";
  }
  return "?";
}

std::string operator_check_skip_reason(const ModelSpec& m) {
  if (m.dtype_bytes != 2) return fmt::format("its elements are {} bytes (the check times bf16)", m.dtype_bytes);
  if ((m.expert_weight_bytes > 0 && m.expert_weight_bytes != 2) || (m.block_weight_bytes > 0 && m.block_weight_bytes != 2))
    return fmt::format("its experts or blocks are stored at {} / {} bytes per weight (the check times bf16)",
                       m.expert_weight_bytes, m.block_weight_bytes);
  const std::vector<ModelLayerGroup> groups = m.layer_groups_or_uniform();
  if (groups.size() != 1 || groups[0].kind != alloc::LayerGroupKind::kFull)
    return "it has layer groups other than one full-attention group";
  return "";
}

std::vector<OperatorCheckPoint> operator_check_points(const ModelSpec& m, std::int64_t max_context) {
  const std::int64_t longest = max_context > 0 ? max_context : m.max_seq_len;
  std::vector<OperatorCheckPoint> p;
  for (std::int64_t tokens : {1, 16, 64, 256, 1024, 4096, 8192})
    p.push_back({CheckedOperator::kGemmLayer, tokens, 0});
  for (std::int64_t seqs : {1, 16, 64, 256}) p.push_back({CheckedOperator::kLmHead, seqs, 0});
  // Token counts the moe table measured (1 ... 16384).
  if (m.moe_layers > 0)
    for (std::int64_t tokens : {1, 16, 64, 256, 1024, 4096, 8192}) p.push_back({CheckedOperator::kMoe, tokens, 0});
  // Lengths the tables measured (context: 1 and 16..16384 in powers of two; generation:
  // powers of two), so a published value is a measured one wherever the heads are.
  for (std::int64_t batch : {1, 4})
    for (std::int64_t len : {256, 1024, 4096})
      if (len <= longest) p.push_back({CheckedOperator::kContextAttention, batch, len});
  for (std::int64_t batch : {1, 16, 64, 256})
    for (std::int64_t len : {512, 2048, 4096})
      if (len <= longest) p.push_back({CheckedOperator::kGenerationAttention, batch, len});
  return p;
}

std::optional<std::string> operator_check_gpu_preset(std::string_view device) {
  auto has = [&](std::string_view s) { return device.find(s) != std::string_view::npos; };
  if (has("H200")) return "h200";
  if (has("H100") && (has("HBM3") || has("SXM"))) return "h100-sxm";
  if (has("A100") && has("80GB")) return "a100-80gb";
  if (has("L40S")) return "l40s";
  return std::nullopt;
}

std::vector<OperatorCheckRow> operator_check_rows(const ModelSpec& model, const std::string& gpu_preset_name,
                                                  const std::filesystem::path& tables,
                                                  const std::vector<OperatorCheckPoint>& points,
                                                  const std::vector<double>& measured) {
  if (points.size() != measured.size())
    throw std::invalid_argument(
        fmt::format("operator check: {} points but {} measured times", points.size(), measured.size()));
  OperatorsCostParams settings;
  settings.tables = tables;
  const std::optional<std::string_view> folder = operator_table_gpu(gpu_preset_name);
  if (!folder) throw std::invalid_argument("operator check: GPU preset " + gpu_preset_name + " has no operator tables");
  settings.gpu = std::string(*folder);
  const OperatorsCostModel published(model, gpu_preset(gpu_preset_name), 1, settings);
  const double layers = static_cast<double>(model.layers);
  // Extrapolated lookups of one operator so far (a batch also looks up the others).
  auto extrapolated = [&](std::string_view op) {
    for (const auto& [name, count] : published.notes().extrapolated_lookups)
      if (name == op) return count;
    return std::int64_t{0};
  };
  std::vector<OperatorCheckRow> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const OperatorCheckPoint& p = points[i];
    BatchShape b;
    double seconds = 0;
    const std::string_view table = p.op == CheckedOperator::kContextAttention      ? "context_attention"
                                   : p.op == CheckedOperator::kGenerationAttention ? "generation_attention"
                                   : p.op == CheckedOperator::kMoe                 ? "moe"
                                                                                   : "gemm";
    const std::int64_t before = extrapolated(table);
    switch (p.op) {
      case CheckedOperator::kGemmLayer:
        b.add_prefill_chunk(p.batch, 0, false);  // no sampled sequence: no LM head
        seconds = published.breakdown(b).gemm_seconds / layers;
        break;
      case CheckedOperator::kLmHead:
        for (std::int64_t s = 0; s < p.batch; ++s) b.add_decode_seq(1);
        seconds = published.breakdown(b).lm_head_seconds;
        break;
      case CheckedOperator::kContextAttention:
        for (std::int64_t s = 0; s < p.batch; ++s) b.add_prefill_chunk(p.length, 0, true);
        seconds = published.breakdown(b).context_attention_seconds / layers;
        break;
      case CheckedOperator::kGenerationAttention:
        for (std::int64_t s = 0; s < p.batch; ++s) b.add_decode_seq(p.length);
        seconds = published.breakdown(b).generation_attention_seconds / layers;
        break;
      case CheckedOperator::kMoe:
        b.add_prefill_chunk(p.batch, 0, false);
        seconds = published.breakdown(b).moe_seconds / static_cast<double>(model.moe_layers);
        break;
    }
    rows.push_back({p, measured[i], seconds, extrapolated(table) > before});
  }
  return rows;
}

std::string operator_check_csv(const std::vector<std::string>& comments, const std::vector<OperatorCheckRow>& rows) {
  std::string s;
  for (const std::string& c : comments) s += "# " + c + "\n";
  s += "operator,batch,length,measured_us,published_us,ratio,published_extrapolated\n";
  for (const OperatorCheckRow& r : rows) {
    s += fmt::format("{},{},{},{:.4g},{:.4g},{:.3f},{}\n", to_string(r.point.op), r.point.batch, r.point.length,
                     r.measured_s * 1e6, r.published_s * 1e6,
                     r.published_s > 0 ? r.measured_s / r.published_s : std::nan(""),
                     r.published_extrapolated ? "yes" : "no");
  }
  return s;
}

std::string operator_check_summary(const std::vector<OperatorCheckRow>& rows) {
  std::map<int, std::vector<double>> ratios;
  for (const OperatorCheckRow& r : rows)
    if (r.published_s > 0) ratios[static_cast<int>(r.point.op)].push_back(r.measured_s / r.published_s);
  std::string s;
  for (auto& [op, v] : ratios) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    s += fmt::format("  {:<21} {:>2} points: measured / published median {:.2f} (range {:.2f} to {:.2f})\n",
                     to_string(static_cast<CheckedOperator>(op)), n, median, v.front(), v.back());
  }
  return s;
}

}  // namespace pagesim::sim
