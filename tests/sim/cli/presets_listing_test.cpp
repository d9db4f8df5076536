// `pagesim presets`: every name of the preset and name tables is listed, with its facts.
#include "sim/cli/presets_listing.h"

#include <gtest/gtest.h>

#include "allocator/make_allocator.h"
#include "allocator/pool/eviction_policy.h"
#include "sim/cost/presets.h"
#include "sim/scheduler/scheduler_kinds.h"

namespace pagesim::sim {
namespace {

TEST(PresetsListing, ListsEveryName) {
  const std::string text = format_presets();
  for (std::string_view m : model_preset_names()) EXPECT_NE(text.find("  " + std::string(m) + " "), std::string::npos) << m;
  for (std::string_view g : gpu_preset_names()) EXPECT_NE(text.find("  " + std::string(g) + " "), std::string::npos) << g;
  for (const auto& [k, name] : kSchedulerKindNames) {
    EXPECT_NE(text.find("\n  " + std::string(name) + " "), std::string::npos) << name;
    EXPECT_NE(text.find(std::string(describe(k))), std::string::npos) << name;
  }
  for (const auto& [k, name] : alloc::kAllocatorKindNames)
    EXPECT_NE(text.find(std::string(describe(k))), std::string::npos) << name;
  for (const auto& [k, name] : alloc::kEvictionKindNames)
    EXPECT_NE(text.find(std::string(name) + " "), std::string::npos) << name;
}

TEST(PresetsListing, KeyFactsOfAKnownPreset) {
  const std::string text = format_presets();
  // OPT-13B: 40 layers, 5120 wide, 800 KB of KV per token (DESIGN.md), 2048-token context.
  EXPECT_NE(text.find("opt-13b                  40   5120     40/40      128    12.9B      800 KiB      2048  all full"),
            std::string::npos)
      << text;
  // Gemma-2-9B alternates sliding-window (4096) and full layers, 21 of each.
  EXPECT_NE(text.find("21xsliding_window(4096) + 21xfull"), std::string::npos) << text;
  // L40S: no NVLink, so the GPU-to-GPU column holds PCIe peer-to-peer.
  EXPECT_NE(text.find("NVLink/P2P"), std::string::npos) << text;
  EXPECT_NE(text.find("l40s            45.0 GiB   362 TFLOP/s   0.86 TB/s   25 GB/s     25 GB/s"), std::string::npos)
      << text;
  // Mistral-Nemo: 32 heads of 128 (not 5120 / 32), 160 KiB of KV per token, 12.2B parameters.
  EXPECT_NE(text.find("mistral-nemo-12b         40   5120      32/8      128    12.2B      160 KiB    131072  all full"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("vllm-v1"), std::string::npos);
  EXPECT_NE(text.find("allocator: radix; chunked prefill: yes"), std::string::npos);
}

}  // namespace
}  // namespace pagesim::sim
