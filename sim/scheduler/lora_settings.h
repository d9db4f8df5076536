// LoraSettings: LoRA adapters served beside the base model, and where their weights live.
//
// Placements (AdapterCache, adapter_cache.h):
//   vllm     vLLM's: max_loras GPU slots reserved apart from the KV cache at start-up, each
//            sized for the largest adapter (max_lora_rank, every LoRA-capable layer: vLLM's
//            create_lora_weights allocates lora_a/lora_b_stacked of shape (max_loras, 1,
//            max_lora_rank, in/out) per wrapped linear layer, vllm/lora/layers), so the KV
//            pool shrinks by max_loras × slot bytes whether or not adapters are requested; a
//            CPU cache of max_cpu_loras adapters (vllm/config/lora.py: max_cpu_loras defaults
//            to max_loras and may not be below it); a batch holds at most max_loras distinct
//            adapters (vllm/v1/core/sched/scheduler.py skips a waiting request whose adapter
//            would exceed max_loras and goes on with the next).
//   unified  S-LoRA's unified paging (Sheng et al., "S-LoRA: Serving Thousands of Concurrent
//            LoRA Adapters", MLSys 2024, Section 4.1): adapter weights are paged in the KV pool
//            itself, loaded on demand and evicted when idle under memory pressure, so KV and
//            adapters compete for one pool and the number of resident adapters is bounded by
//            memory only.
// Bytes of one adapter: per layer and targeted matrix W (d_in × d_out), LoRA adds A (d_in × r)
// and B (r × d_out) (Hu et al., "LoRA", ICLR 2022, Section 4): r · (d_in + d_out) elements of
// dtype_bytes. Default targets: the attention projections q, k, v, o — S-LoRA's setting
// (Section 7.1: LoRA applied to the query, key, value and output projections).
// A GPU miss loads the adapter at the GPU's host-to-device bandwidth (GpuSpec::pcie_bytes_per_s),
// added to the iteration that admits the request (vLLM loads the batch's adapters before its
// forward pass), so the load is on the critical path.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagesim::sim {

enum class LoraPlacement { kVllm, kUnified };
inline constexpr std::array<std::pair<LoraPlacement, std::string_view>, 2> kLoraPlacementNames = {{
    {LoraPlacement::kVllm, "vllm"},
    {LoraPlacement::kUnified, "unified"},
}};

enum class LoraPopularity { kUniform, kZipf };
inline constexpr std::array<std::pair<LoraPopularity, std::string_view>, 2> kLoraPopularityNames = {{
    {LoraPopularity::kUniform, "uniform"},
    {LoraPopularity::kZipf, "zipf"},
}};

// The linear layers LoRA can target, by their Hugging Face names (PEFT target_modules).
inline constexpr std::array<std::string_view, 7> kLoraModules = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                                                 "gate_proj", "up_proj", "down_proj"};

struct LoraSettings {
  bool enabled = false;  // the lora section is given
  LoraPlacement placement = LoraPlacement::kVllm;
  // vllm: GPU adapter slots (vLLM's --max-loras, default 1), >= 1.
  std::int64_t max_loras = 1;
  // Adapters kept in host memory (vLLM's --max-cpu-loras); 0 = max_loras (vLLM's default).
  // A GPU load of an adapter not cached there is counted as a CPU miss (its disk read is not
  // priced).
  std::int64_t max_cpu_loras = 0;
  std::int64_t rank = 16;  // LoRA rank r of every adapter (vLLM's max_lora_rank default 16)
  std::vector<std::string> target_modules = {"q_proj", "k_proj", "v_proj", "o_proj"};
  // Synthetic assignment: each request without an adapter (from the trace) names one of
  // `adapters` adapters, drawn by `popularity` (zipf: weight 1/(k+1)^zipf_alpha); 0: none.
  std::int64_t adapters = 0;
  LoraPopularity popularity = LoraPopularity::kUniform;
  double zipf_alpha = 1.0;

  std::int64_t cpu_capacity() const { return max_cpu_loras > 0 ? max_cpu_loras : max_loras; }
};

}  // namespace pagesim::sim
