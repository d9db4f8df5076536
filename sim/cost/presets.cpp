#include "sim/cost/presets.h"

#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

namespace {

// Architecture numbers from the models' published configurations (Hugging Face config.json).
// max_seq_len is the context length, max_position_embeddings there: OPT 2048, Llama-2 4096,
// Llama-3 8192 tokens (max_model_len: model, and a contiguous allocator's max_seq_len).
struct ModelRow {
  std::string_view name;
  std::int64_t layers, hidden, heads, kv_heads, head_dim, ffn, vocab, max_seq_len;
  bool llama;  // Llama flavour (gated MLP, RMSNorm, no bias, untied head, rotary); else OPT
};

constexpr std::array kModelRows{
    //        name          layers hidden heads kv  hdim  ffn    vocab   max_seq
    ModelRow{"opt-13b",     40, 5120,  40,  40, 128, 20480, 50272,  2048, false},
    ModelRow{"opt-66b",     64, 9216,  72,  72, 128, 36864, 50272,  2048, false},
    ModelRow{"opt-175b",    96, 12288, 96,  96, 128, 49152, 50272,  2048, false},
    ModelRow{"llama-2-7b",  32, 4096,  32,  32, 128, 11008, 32000,  4096, true},
    ModelRow{"llama-2-13b", 40, 5120,  40,  40, 128, 13824, 32000,  4096, true},
    ModelRow{"llama-2-70b", 80, 8192,  64,  8,  128, 28672, 32000,  4096, true},
    ModelRow{"llama-3-8b",  32, 4096,  32,  8,  128, 14336, 128256, 8192, true},
    ModelRow{"llama-3-70b", 80, 8192,  64,  8,  128, 28672, 128256, 8192, true},
};

// OPT's learned position embedding has max_seq_len + 2 rows (an offset of 2 in the model).
constexpr std::int64_t kOptPositionOffset = 2;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// Datasheet peaks. hbm_bytes is the total the driver reports (nvidia-smi), slightly below the
// marketing size; it is what a serving engine's memory-utilization fraction multiplies.
// PCIe: effective one-direction copy rates, gen4 x16 ~25 GB/s (A100), gen5 x16 ~50 GB/s
// (H100/H200). NVLink: per GPU, one direction (A100 NVLink3 600 GB/s and H100/H200 NVLink4
// 900 GB/s total, both directions).
struct GpuRow {
  std::string_view name;
  std::int64_t hbm_bytes;
  double peak_flops, hbm_bytes_per_s, pcie_bytes_per_s, nvlink_bytes_per_s;
};

constexpr std::array kGpuRows{
    GpuRow{"a100-40gb", 40536 * kMiB, 312e12, 1.555e12, 25e9, 300e9},
    GpuRow{"a100-80gb", 81920 * kMiB, 312e12, 2.039e12, 25e9, 300e9},
    GpuRow{"h100-sxm", 81559 * kMiB, 989e12, 3.35e12, 50e9, 450e9},
    GpuRow{"h200", 143771 * kMiB, 989e12, 4.8e12, 50e9, 450e9},
};

template <std::size_t N, typename Row>
constexpr std::array<std::string_view, N> names_of(const std::array<Row, N>& rows) {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = rows[i].name;
  return out;
}

constexpr auto kModelNames = names_of(kModelRows);
constexpr auto kGpuNames = names_of(kGpuRows);

[[noreturn]] void throw_unknown(std::string_view what, std::string_view name,
                                std::span<const std::string_view> valid) {
  throw CostModelError(fmt::format("unknown {} preset '{}', expected one of: {}", what, name,
                                   fmt::join(valid, ", ")));
}

}  // namespace

ModelSpec model_preset(std::string_view name) {
  for (const ModelRow& r : kModelRows) {
    if (r.name != name) continue;
    ModelSpec m;
    m.name = std::string(r.name);
    m.layers = r.layers;
    m.hidden = r.hidden;
    m.heads = r.heads;
    m.kv_heads = r.kv_heads;
    m.head_dim = r.head_dim;
    m.ffn = r.ffn;
    m.vocab = r.vocab;
    m.dtype_bytes = 2;
    m.max_seq_len = r.max_seq_len;
    m.gated_mlp = r.llama;
    m.linear_bias = !r.llama;
    m.tied_lm_head = !r.llama;
    m.learned_positions = r.llama ? 0 : r.max_seq_len + kOptPositionOffset;
    return m;
  }
  throw_unknown("model", name, kModelNames);
}

GpuSpec gpu_preset(std::string_view name) {
  for (const GpuRow& r : kGpuRows) {
    if (r.name != name) continue;
    GpuSpec g;
    g.name = std::string(r.name);
    g.hbm_bytes = r.hbm_bytes;
    g.peak_flops = r.peak_flops;
    g.hbm_bytes_per_s = r.hbm_bytes_per_s;
    g.pcie_bytes_per_s = r.pcie_bytes_per_s;
    g.nvlink_bytes_per_s = r.nvlink_bytes_per_s;
    return g;
  }
  throw_unknown("gpu", name, kGpuNames);
}

std::span<const std::string_view> model_preset_names() { return kModelNames; }
std::span<const std::string_view> gpu_preset_names() { return kGpuNames; }

}  // namespace pagesim::sim
