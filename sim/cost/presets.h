// Named model and GPU presets: the one place where real architecture and datasheet numbers
// live, as constant tables (presets.cpp). Lookups return copies, so a caller can start from a
// preset and change a setting (say, memory_efficiency) without touching the table.
//
// Models: opt-13b, opt-66b, opt-175b, llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b,
// llama-3-70b, yi-6b, yi-34b, codellama-34b, llama-3.1-8b, llama-3.1-70b, mistral-nemo-12b,
// qwen2.5-7b, qwen3-14b (one full-attention group), and with layer groups (ModelSpec::groups):
// gemma-2-9b, gemma-2-27b, gemma-3-27b, ministral-8b (sliding window + full),
// llama-3.2-11b-vision (cross-attention + full), gpt-oss-120b (sliding + full, MoE),
// llama-4-scout (chunked local + full, MoE), jamba-v0.1 (Mamba + full, MoE); MoE with full
// attention: mixtral-8x7b, mixtral-8x22b; with latent attention (ModelSpec::mla) and MoE:
// deepseek-v3, deepseek-r1, deepseek-v3.2-exp (with the sparse-attention indexer),
// deepseek-v2-lite, kimi-k2 (fp8 weights but V2-Lite's bf16); llama-3.1-405b (dense GQA). All fp16/bf16 weights and KV (dtype_bytes = 2;
// gpt-oss's experts MXFP4; llama-4-scout-fp8 is llama-4-scout with fp8 experts).
// GPUs: a100-40gb, a100-80gb (SXM), h100-sxm, h200, l40s (PCIe, no NVLink); GpuSpec fields
// not in the table (efficiencies, overheads) take the gpu_defaults values.
// Stateless functions; safe from any thread.
#pragma once

#include <span>
#include <string_view>

#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"

namespace pagesim::sim {

// The preset with this name. Throws CostModelError listing the valid names when unknown.
ModelSpec model_preset(std::string_view name);
GpuSpec gpu_preset(std::string_view name);

// Valid preset names, in table order. The span points into a static table (always valid).
std::span<const std::string_view> model_preset_names();
std::span<const std::string_view> gpu_preset_names();

}  // namespace pagesim::sim
