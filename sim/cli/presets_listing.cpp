#include "sim/cli/presets_listing.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "allocator/contiguous/placement.h"
#include "allocator/make_allocator.h"
#include "allocator/pool/eviction_policy.h"
#include "sim/config/enum_names.h"
#include "sim/cost/presets.h"
#include "sim/scheduler/scheduler_kinds.h"

namespace pagesim::sim {

std::string format_presets() {
  // KV/token is what a uniform allocator charges (every attending layer holds every token);
  // the layer groups say which layers keep less (sliding window, chunk, encoder keys, state).
  std::string out = "models (model: NAME; KV at kv_dtype: auto; KV/token as a uniform allocator charges it)\n";
  out += fmt::format("  {:<20} {:>6} {:>6} {:>9} {:>8} {:>8} {:>12} {:>9}  {}\n", "name", "layers", "hidden",
                     "heads/kv", "head_dim", "params", "KV/token", "context", "layer groups");
  for (std::string_view name : model_preset_names()) {
    const ModelSpec m = model_preset(name);
    std::string groups;
    for (const ModelLayerGroup& g : m.groups) {
      if (!groups.empty()) groups += " + ";
      groups += fmt::format("{}x{}", g.layers, alloc::to_string(g.kind));
      if (g.window_tokens > 0) groups += fmt::format("({})", g.window_tokens);
      if (g.encoder_tokens > 0) groups += fmt::format("({} enc)", g.encoder_tokens);
    }
    out += fmt::format("  {:<20} {:>6} {:>6} {:>9} {:>8} {:>7.1f}B {:>8.0f} KiB {:>9}  {}\n", m.name, m.layers,
                       m.hidden, fmt::format("{}/{}", m.heads, m.kv_heads), m.head_dim,
                       static_cast<double>(m.parameter_count()) / 1e9,
                       static_cast<double>(m.kv_bytes_per_token()) / 1024.0, m.max_seq_len,
                       groups.empty() ? "all full" : groups);
  }
  // Without NVLink (l40s) the GPU-to-GPU rate is PCIe peer-to-peer.
  out += "\ngpus (gpu: NAME; datasheet peaks)\n";
  out += fmt::format("  {:<14} {:>9} {:>11} {:>10} {:>9} {:>11}\n", "name", "HBM", "fp16 peak", "HBM BW", "PCIe",
                     "NVLink/P2P");
  for (std::string_view name : gpu_preset_names()) {
    const GpuSpec g = gpu_preset(name);
    out += fmt::format("  {:<14} {:>5.1f} GiB {:>5.0f} TFLOP/s {:>6.2f} TB/s {:>4.0f} GB/s {:>6.0f} GB/s\n", g.name,
                       static_cast<double>(g.hbm_bytes) / std::pow(2.0, 30), g.peak_flops / 1e12,
                       g.hbm_bytes_per_s / 1e12, g.pcie_bytes_per_s / 1e9, g.nvlink_bytes_per_s / 1e9);
  }
  out += "\nschedulers (scheduler.kind)\n";
  for (const SchedulerDescriptor& d : kSchedulerKinds) {
    std::string pool = d.allocators.size() == alloc::kAllocatorKindNames.size() ? "any" : "";
    if (pool.empty())
      for (alloc::AllocatorKind a : d.allocators) pool += (pool.empty() ? "" : ", ") + std::string(alloc::to_string(a));
    out += fmt::format("  {:<10} {}\n  {:<10} allocator: {}; chunked prefill: {}\n", d.name, d.summary, "", pool,
                       d.traits.chunked_prefill ? "yes" : "no");
  }
  out += "\nallocators (allocator.kind)\n";
  for (const auto& [kind, name] : alloc::kAllocatorKindNames) out += fmt::format("  {:<10} {}\n", name, describe(kind));
  out += fmt::format("\ncontiguous placements (allocator.placement): {}\n", enum_name_list(alloc::kPlacementKindNames));
  out += "\neviction policies (allocator.eviction, paged prefix cache)\n";
  for (const auto& [kind, name] : alloc::kEvictionKindNames)
    out += fmt::format("  {:<20} {}\n", name, describe(kind));
  return out;
}

}  // namespace pagesim::sim
