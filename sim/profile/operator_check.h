// OperatorCheck: the operators `cost.kind: operators` reads (sim/cost/operators_cost_model.h),
// timed on the GPU `pagesim profile` runs on and set beside the published tables' latency for
// the same device kind, so every GPU run cross-checks those tables.
//
// Points, for a model with one full-attention layer group at tensor parallel 1, bf16 (the
// tables' dtype for 2-byte weights and KV):
//   gemm_layer            x = M tokens: one layer's linear GEMMs (qkv, o_proj, gate_up or up,
//                         down; profile_grid.h layer_gemms), cuBLAS bf16; with MoE layers the
//                         mean over the layers of dense layers' GEMMs and MoE layers' qkv,
//                         o_proj, router and shared experts (the tables' gemm operator)
//   moe                   x = M tokens (MoE models): one MoE block's fused experts given router
//                         logits (top-k, expert GEMMs, activation, combine; the tables' moe
//                         operator, as aiconfigurator's collector times vLLM's FusedMoE),
//                         tokens spread evenly over the experts (the tables: power-law routing,
//                         aiconfigurator's default, so a few experts get more tokens)
//   lm_head               x = S sampled sequences: the LM-head GEMM, cuBLAS bf16
//   context_attention     batch prompts of `length` tokens, no cached prefix: paged_prefill
//   generation_attention  batch sequences reading `length` tokens of KV: paged_decode
// The published value is what OperatorsCostModel::breakdown computes for the batch that is
// exactly that operator (no CUDA-graph padding), per layer: the lookups, interpolation and
// head folding a simulation uses. Attention compares pagesim's own kernels with the vLLM
// attention backend the tables measured (FlashAttention on Hopper), GEMMs cuBLAS with cuBLAS.
// All-reduce is not timed (one GPU has none).
//
// Pure host code (no CUDA): the points, the published lookups, the CSV and the summary are
// tested with fake timings. Plain value types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cost/model_spec.h"

namespace pagesim::sim {

enum class CheckedOperator { kGemmLayer, kLmHead, kContextAttention, kGenerationAttention, kMoe };
std::string_view to_string(CheckedOperator op);

struct OperatorCheckPoint {
  CheckedOperator op = CheckedOperator::kGemmLayer;
  std::int64_t batch = 0;   // GEMM rows (tokens or sampled sequences); attention sequences
  std::int64_t length = 0;  // attention: prompt or KV tokens per sequence; 0 for GEMMs
};

// The points for `model`, attention lengths up to `max_context` (0: the model's
// max_seq_len). REQUIRES: operator_check_skip_reason(model) is empty.
std::vector<OperatorCheckPoint> operator_check_points(const ModelSpec& model, std::int64_t max_context);

// Why `model` cannot be checked ("" when it can): layer groups other than one full-attention
// group, or weights (experts, blocks) or elements of other than 2 bytes.
std::string operator_check_skip_reason(const ModelSpec& model);

// The GPU preset (presets.h) whose published tables describe a device, from the CUDA device
// name: "NVIDIA H200" → h200, "NVIDIA H100 80GB HBM3" → h100-sxm, "NVIDIA A100-SXM4-80GB" →
// a100-80gb, "NVIDIA L40S" → l40s; nullopt for any other device (an H100 PCIe, a 40 GB A100:
// the tables measured none).
std::optional<std::string> operator_check_gpu_preset(std::string_view device_name);

struct OperatorCheckRow {
  OperatorCheckPoint point;
  double measured_s = 0;
  double published_s = 0;
  bool published_extrapolated = false;  // the tables' lookup left their measured range
};

// Published seconds for every point from the tables under `tables` for `gpu_preset`
// (engine vllm-0.14.0), measured seconds from `measured` (same order as `points`). Throws
// CostModelError when the tables lack the model's operators; std::invalid_argument when the
// sizes differ.
std::vector<OperatorCheckRow> operator_check_rows(const ModelSpec& model, const std::string& gpu_preset,
                                                  const std::filesystem::path& tables,
                                                  const std::vector<OperatorCheckPoint>& points,
                                                  const std::vector<double>& measured);

// The CSV: "# " + each comment line, then
// operator,batch,length,measured_us,published_us,ratio,published_extrapolated
// (ratio = measured / published; microseconds with 4 significant digits).
std::string operator_check_csv(const std::vector<std::string>& comments, const std::vector<OperatorCheckRow>& rows);

// One line per operator: points, median and range of measured / published.
std::string operator_check_summary(const std::vector<OperatorCheckRow>& rows);

}  // namespace pagesim::sim
