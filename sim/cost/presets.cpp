#include "sim/cost/presets.h"

#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/close_names.h"
#include "sim/cost/cost_error.h"

namespace pagesim::sim {

namespace {

// Architecture numbers from the models' published configurations (Hugging Face config.json).
// max_seq_len is the context length, max_position_embeddings there: OPT 2048, Llama-2 4096,
// Llama-3 8192 tokens (max_model_len: model, and a contiguous allocator's max_seq_len).
// head_dim is the config's head_dim where it has one (Mistral-Nemo: 128 with hidden 5120 and
// 32 heads, so the query heads are 4096 wide, not hidden), else hidden / heads.
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
    // The vAttention paper's models (ASPLOS'25, Table 8), Llama architecture:
    // https://huggingface.co/01-ai/Yi-6B/blob/main/config.json and
    // https://huggingface.co/01-ai/Yi-34B/blob/main/config.json (4096 positions).
    ModelRow{"yi-6b",       32, 4096,  32,  4,  128, 11008, 64000,  4096, true},
    ModelRow{"yi-34b",      60, 7168,  56,  8,  128, 20480, 64000,  4096, true},
    // https://huggingface.co/codellama/CodeLlama-34b-hf/blob/main/config.json : 48 layers,
    // hidden 8192, 64 heads, 8 KV heads, intermediate 22016, vocab 32000, 16384 positions.
    ModelRow{"codellama-34b", 48, 8192, 64, 8,  128, 22016, 32000,  16384, true},
    // https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json and
    // https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json : as Llama-3 (8B:
    // 32 layers, hidden 4096, 32 heads, 8 KV heads, intermediate 14336; 70B: 80, 8192, 64, 8,
    // 28672; vocab 128256), 131072 positions (rope_scaling llama3, factor 8 of 8192).
    ModelRow{"llama-3.1-8b",  32, 4096, 32, 8,  128, 14336, 128256, 131072, true},
    ModelRow{"llama-3.1-70b", 80, 8192, 64, 8,  128, 28672, 128256, 131072, true},
    // https://huggingface.co/meta-llama/Llama-3.1-405B/blob/main/config.json : 126 layers,
    // hidden 16384, 128 heads, 8 KV heads, intermediate 53248, vocab 128256, 131072 positions:
    // the dense GQA model nearest DeepSeek-V3 in size (experiments/modern_kv compares them).
    ModelRow{"llama-3.1-405b", 126, 16384, 128, 8, 128, 53248, 128256, 131072, true},
    // https://huggingface.co/mistralai/Mistral-Nemo-Base-2407/blob/main/config.json : 40
    // layers, hidden 5120, 32 heads, 8 KV heads, head_dim 128, intermediate 14336, vocab 131072,
    // untied. Its max_position_embeddings is 1024000, the rotary table, not the trained
    // context: the model card gives a 128k context window, which the preset takes (131072).
    ModelRow{"mistral-nemo-12b", 40, 5120, 32, 8, 128, 14336, 131072, 131072, true},
    // https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json : 28 layers, hidden 3584,
    // 28 heads, 4 KV heads, intermediate 18944, vocab 152064, 131072 positions, untied
    // (tie_word_embeddings false), full attention (use_sliding_window false). Qwen2 has biases
    // on q, k and v only, 28 · (3584 + 2 · 512) = 129,024 parameters, left out.
    ModelRow{"qwen2.5-7b",    28, 3584, 28, 4,  128, 18944, 152064, 131072, true},
    // https://huggingface.co/Qwen/Qwen3-14B/blob/main/config.json : 40 layers, hidden 5120, 40
    // heads, 8 KV heads, head_dim 128, intermediate 17408, vocab 151936, 40960 positions,
    // untied, no attention bias. Its q and k RMSNorms (2 · 128 per layer) are left out.
    ModelRow{"qwen3-14b",     40, 5120, 40, 8,  128, 17408, 151936, 40960, true},
};

// OPT's learned position embedding has max_seq_len + 2 rows (an offset of 2 in the model).
constexpr std::int64_t kOptPositionOffset = 2;

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// Datasheet peaks. hbm_bytes is the total the driver reports (nvidia-smi), slightly below the
// marketing size; it is what a serving engine's memory-utilization fraction multiplies.
// PCIe: effective one-direction copy rates, gen4 x16 ~25 GB/s (A100), gen5 x16 ~50 GB/s
// (H100/H200). NVLink: per GPU, one direction (A100 NVLink3 600 GB/s and H100/H200 NVLink4
// 900 GB/s total, both directions).
// L40S (NVIDIA L40S datasheet): 48 GB of GDDR6, which the driver reports as 46068 MiB
// (nvidia-smi --query-gpu=memory.total, akash-network/provider-configs#99); dense bf16 tensor
// peak 362.05 TFLOP/s (733 with sparsity); 864 GB/s; PCIe gen4 x16 (~25 GB/s, as the A100's).
// It has no NVLink: its nvlink_bytes_per_s is the PCIe peer-to-peer rate over the same gen4
// x16 link, ~25 GB/s one direction, which the tensor-parallel all-reduce then uses.
// cuda_total_bytes: the total cudaMemGetInfo reports, which vLLM's gpu_memory_utilization
// multiplies (GpuSpec; 0 where no log gives it, then hbm_bytes stands in). H100 80GB HBM3:
// 79.19 GiB in vLLM's init snapshot ("total_memory=79.19GiB"; "requested memory: 75.23GiB"
// at 0.95 and 71.27 at 0.9 bound it to 79.184-79.189 GiB), vLLM v0.19.0 logs of
// llm-d-incubation/llm-d-planner@d3121e0 accuracy/results/v0.19.0/logs/: 81088 MiB = 79.1875
// GiB. A100 80GB: 79.15 GiB (pagesim issue #37's logged configurations): 81050 MiB.
// compute_capability: NVIDIA's CUDA GPUs table (developer.nvidia.com/cuda-gpus): A100 8.0,
// L40S 8.9, H100 and H200 9.0.
struct GpuRow {
  std::string_view name;
  std::int64_t hbm_bytes, cuda_total_bytes;
  double peak_flops, hbm_bytes_per_s, pcie_bytes_per_s, nvlink_bytes_per_s;
  std::int32_t compute_capability;
};

constexpr std::array kGpuRows{
    GpuRow{"a100-40gb", 40536 * kMiB, 0, 312e12, 1.555e12, 25e9, 300e9, 80},
    GpuRow{"a100-80gb", 81920 * kMiB, 81050 * kMiB, 312e12, 2.039e12, 25e9, 300e9, 80},
    GpuRow{"h100-sxm", 81559 * kMiB, 81088 * kMiB, 989e12, 3.35e12, 50e9, 450e9, 90},
    GpuRow{"h200", 143771 * kMiB, 0, 989e12, 4.8e12, 50e9, 450e9, 90},
    GpuRow{"l40s", 46068 * kMiB, 0, 362.05e12, 864e9, 25e9, 25e9, 89},
};

template <std::size_t N, typename Row>
constexpr std::array<std::string_view, N> names_of(const std::array<Row, N>& rows) {
  std::array<std::string_view, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = rows[i].name;
  return out;
}

constexpr auto kGpuNames = names_of(kGpuRows);

// Models whose layers are not all alike (and MoE models), one function each: the groups need a
// vector. Numbers from each model's Hugging Face config.json (URL beside each); derived
// sizes (encoder tokens, recurrent state, layer counts per kind) are worked out in comments.
using alloc::LayerGroupKind;

ModelSpec llama_flavour(std::string_view name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                        std::int64_t kv_heads, std::int64_t head_dim, std::int64_t ffn, std::int64_t vocab,
                        std::int64_t max_seq_len, bool tied_lm_head) {
  ModelSpec m;
  m.name = std::string(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.ffn = ffn;
  m.vocab = vocab;
  m.dtype_bytes = 2;  // bf16
  m.max_seq_len = max_seq_len;
  m.gated_mlp = true;  // SwiGLU / GeGLU
  m.linear_bias = false;
  m.tied_lm_head = tied_lm_head;
  return m;
}

ModelLayerGroup attention_group(LayerGroupKind kind, std::int64_t layers, std::int64_t kv_heads,
                                std::int64_t head_dim, std::int64_t window_tokens = 0,
                                std::int64_t encoder_tokens = 0) {
  ModelLayerGroup g;
  g.kind = kind;
  g.layers = layers;
  g.kv_heads = kv_heads;
  g.head_dim = head_dim;
  g.window_tokens = window_tokens;
  g.encoder_tokens = encoder_tokens;
  return g;
}

// Gemma 2: local (sliding window 4096) and global layers alternate, so half of each.
// https://huggingface.co/google/gemma-2-9b/blob/main/config.json : 42 layers, hidden 3584,
// 16 heads, 8 KV heads, head_dim 256, intermediate 14336, vocab 256000, 8192 positions,
// sliding_window 4096, tied embeddings.
ModelSpec gemma_2_9b() {
  ModelSpec m = llama_flavour("gemma-2-9b", 42, 3584, 16, 8, 256, 14336, 256000, 8192, true);
  m.groups = {attention_group(LayerGroupKind::kSlidingWindow, 21, 8, 256, 4096),
              attention_group(LayerGroupKind::kFull, 21, 8, 256)};
  return m;
}

// https://huggingface.co/google/gemma-2-27b/blob/main/config.json : 46 layers, hidden 4608,
// 32 heads, 16 KV heads, head_dim 128, intermediate 36864, vocab 256000, 8192 positions,
// sliding_window 4096.
ModelSpec gemma_2_27b() {
  ModelSpec m = llama_flavour("gemma-2-27b", 46, 4608, 32, 16, 128, 36864, 256000, 8192, true);
  m.groups = {attention_group(LayerGroupKind::kSlidingWindow, 23, 16, 128, 4096),
              attention_group(LayerGroupKind::kFull, 23, 16, 128)};
  return m;
}

// Gemma 3: five local layers (sliding window 1024) per global one (sliding_window_pattern 6:
// layers 6, 12, ..., 60 of 62 are global, so 10 global, 52 local). Text model only (the
// SigLIP image encoder's tokens enter as ordinary prompt tokens).
// https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json (text_config): 62
// layers, hidden 5376, 32 heads, 16 KV heads, head_dim 128, intermediate 21504, vocab 262208,
// 131072 positions, sliding_window 1024.
ModelSpec gemma_3_27b() {
  ModelSpec m = llama_flavour("gemma-3-27b", 62, 5376, 32, 16, 128, 21504, 262208, 131072, true);
  m.groups = {attention_group(LayerGroupKind::kSlidingWindow, 52, 16, 128, 1024),
              attention_group(LayerGroupKind::kFull, 10, 16, 128)};
  return m;
}

// Ministral 8B: interleaved sliding-window attention, one full layer (128k) per three of
// window 32768 (params.json "sliding_window": [131072, 32768, 32768, 32768], the pattern
// vLLM implements, vllm-project/vllm#9464; Hugging Face's Ministral docs, transformers
// docs/source/en/model_doc/ministral.md: "1 full attention layer followed by 3 sliding window
// attention layers ... 128K context"), so 9 full and 27 windowed of 36; 128k context.
// https://huggingface.co/mistralai/Ministral-8B-Instruct-2410/blob/main/config.json : 36
// layers, hidden 4096, 32 heads, 8 KV heads, head_dim 128, intermediate 12288, vocab 131072.
ModelSpec ministral_8b() {
  ModelSpec m = llama_flavour("ministral-8b", 36, 4096, 32, 8, 128, 12288, 131072, 131072, false);
  m.groups = {attention_group(LayerGroupKind::kFull, 9, 8, 128),
              attention_group(LayerGroupKind::kSlidingWindow, 27, 8, 128, 32768)};
  return m;
}

// Llama 3.2 Vision: 40 decoder layers of which 8 (cross_attention_layers 3, 8, ..., 38)
// attend to the image encoder's output instead of the text. Encoder keys per request: up to
// max_num_tiles 4 tiles of (image_size 560 / patch_size 14)² = 1600 patches + 1 class token:
// 4 · 1601 = 6404 (what vLLM's mllama reserves per image).
// https://huggingface.co/meta-llama/Llama-3.2-11B-Vision/blob/main/config.json : text_config
// hidden 4096, 32 heads, 8 KV heads, intermediate 14336, vocab 128256, 131072 positions;
// vision_config image_size 560, patch_size 14, max_num_tiles 4.
ModelSpec llama_3_2_11b_vision() {
  ModelSpec m = llama_flavour("llama-3.2-11b-vision", 40, 4096, 32, 8, 128, 14336, 128256, 131072, false);
  m.groups = {attention_group(LayerGroupKind::kFull, 32, 8, 128),
              attention_group(LayerGroupKind::kCrossAttention, 8, 8, 128, 0, 4 * (40 * 40 + 1))};
  return m;
}

// gpt-oss-120b: sliding (window 128) and full layers alternate (layer_types), 18 each; MoE in
// every layer, 128 experts of width 2880, 4 per token; experts ship in MXFP4 (4-bit values
// in blocks of 32 sharing one 8-bit scale: 17 bytes per 32 weights), the rest bf16.
// https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json : 36 layers, hidden 2880,
// 64 heads, 8 KV heads, head_dim 64, intermediate 2880, num_local_experts 128,
// num_experts_per_tok 4, vocab 201088, 131072 positions, sliding_window 128, untied.
// (Attention biases and sinks, ~0.01% of the weights, are left out.)
ModelSpec gpt_oss_120b() {
  ModelSpec m = llama_flavour("gpt-oss-120b", 36, 2880, 64, 8, 64, 2880, 201088, 131072, false);
  m.groups = {attention_group(LayerGroupKind::kSlidingWindow, 18, 8, 64, 128),
              attention_group(LayerGroupKind::kFull, 18, 8, 64)};
  m.moe_layers = 36;
  m.experts = 128;
  m.active_experts = 4;
  m.expert_ffn = 2880;
  m.expert_weight_bytes = kMxfp4WeightBytes;
  m.expert_biases = true;  // GptOssExperts' gate_up_proj_bias and down_proj_bias (Transformers)
  return m;
}

// Llama 4 Scout: chunked local attention (attention_chunk_size 8192) with rope, and every
// fourth layer global full attention without rope (no_rope_layers / interval 4): 12 full, 36
// chunked of 48. MoE in every layer (interleave_moe_layer_step 1): 16 routed experts of width
// 8192, 1 per token, plus one shared expert. 10M-token context. Text model only.
// https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E/blob/main/config.json : text_config
// 48 layers, hidden 5120, 40 heads, 8 KV heads, head_dim 128, intermediate_size 8192,
// intermediate_size_mlp 16384, num_local_experts 16, num_experts_per_tok 1, vocab 202048,
// max_position_embeddings 10485760.
ModelSpec llama_4_scout() {
  ModelSpec m = llama_flavour("llama-4-scout", 48, 5120, 40, 8, 128, 16384, 202048, 10485760, false);
  m.groups = {attention_group(LayerGroupKind::kChunkedLocal, 36, 8, 128, 8192),
              attention_group(LayerGroupKind::kFull, 12, 8, 128)};
  m.moe_layers = 48;
  m.experts = 16;
  m.active_experts = 1;
  m.shared_experts = 1;
  m.expert_ffn = 8192;
  return m;
}

// Jamba v0.1: one attention layer per 8 (attn_layer_period 8, offset 4: 4 of 32), the other
// 28 Mamba layers; MoE every other layer (expert_layer_period 2: 16 of 32), 16 experts, 2 per
// token. Mamba with d_inner = expand 2 · hidden 4096 = 8192, d_state 16, d_conv 4, dt_rank
// 256 keeps per layer and sequence a conv state of d_inner · (d_conv − 1) = 24576 and an SSM
// state of d_inner · d_state = 131072 elements: 155648, 311,296 bytes in bf16 (vLLM keeps
// both in the model dtype by default). Its mixer: in_proj 4096·16384 + conv 8192·4 + 8192 +
// x_proj 8192·288 + dt_proj 256·8192 + 8192 + A_log 8192·16 + D 8192 + out_proj 8192·4096 +
// inner norms 288 = 105,308,448 parameters.
// https://huggingface.co/ai21labs/Jamba-v0.1/blob/main/config.json : 32 layers, hidden 4096,
// 32 heads, 8 KV heads, intermediate 14336, num_experts 16, num_experts_per_tok 2, vocab
// 65536, max_position_embeddings 262144, mamba_d_state 16, mamba_d_conv 4, mamba_expand 2,
// mamba_dt_rank 256, untied.
ModelSpec jamba_v0_1() {
  ModelSpec m = llama_flavour("jamba-v0.1", 32, 4096, 32, 8, 128, 14336, 65536, 262144, false);
  ModelLayerGroup mamba;
  mamba.kind = LayerGroupKind::kRecurrent;
  mamba.layers = 28;
  mamba.state_elements = 8192 * (4 - 1) + 8192 * 16;
  mamba.mixer_params = 105'308'448;
  m.groups = {mamba, attention_group(LayerGroupKind::kFull, 4, 8, 128)};
  m.moe_layers = 16;
  m.experts = 16;
  m.active_experts = 2;
  m.expert_ffn = 14336;
  return m;
}

// Mixtral: every layer's MLP is a mixture of 8 experts, 2 per token, all layers full attention
// (sliding_window null: Mistral removed the window from the configs, "Doesn't use sliding window
// attention", mistralai/Mixtral-8x7B-v0.1 discussion #19). ffn is the expert width: no layer
// has a dense MLP, and the roofline sizes the MLP activations by it.
// https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json (as its
// Instruct-v0.1's at eba9230): 32 layers, hidden 4096, 32 heads, 8 KV heads (head_dim 128),
// intermediate 14336, num_local_experts 8, num_experts_per_tok 2, vocab 32000, 32768
// positions, untied.
ModelSpec mixtral(std::string_view name, std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                  std::int64_t expert_ffn, std::int64_t max_seq_len) {
  ModelSpec m = llama_flavour(name, layers, hidden, heads, 8, 128, expert_ffn, 32000, max_seq_len, false);
  m.moe_layers = layers;
  m.experts = 8;
  m.active_experts = 2;
  m.expert_ffn = expert_ffn;
  return m;
}
ModelSpec mixtral_8x7b() { return mixtral("mixtral-8x7b", 32, 4096, 32, 14336, 32768); }

// https://huggingface.co/mistral-community/Mixtral-8x22B-v0.1/blob/main/config.json (the
// released weights converted to Transformers; mistralai/Mixtral-8x22B-v0.1 ships the same
// model): 56 layers, hidden 6144, 48 heads, 8 KV heads (head_dim 128), intermediate 16384,
// num_local_experts 8, num_experts_per_tok 2, vocab 32000, 65536 positions, sliding_window null.
ModelSpec mixtral_8x22b() { return mixtral("mixtral-8x22b", 56, 6144, 48, 16384, 65536); }

// Llama 4 Scout with FP8 weights, as RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic
// (llm-compressor FP8_DYNAMIC: fp8 weights, activations quantised per token inside each GEMM;
// its model card lists no KV-cache quantisation) serves it. The architecture is
// llama-4-scout's. Experts (16 routed + the shared one, 95% of the weights) take 1 byte each;
// dtype_bytes stays 2 because it is also the activations' and, at kv_dtype auto, the KV
// cache's element size, and both stay bf16 (kv_dtype: fp8 halves the KV as for any model).
// The embedding, LM head, router and attention projections are counted at bf16, as the
// llm-compressor Llama 4 Scout example leaves them (ignore lm_head, self_attn, router, vision;
// vkuzo/pytorch_scripts#80); a checkpoint that quantises attention too holds 48 · 62.9M =
// 3.0 GB less. Compute stays at the GPU's bf16 peak: the roofline does not model fp8 GEMMs.
ModelSpec llama_4_scout_fp8() {
  ModelSpec m = llama_4_scout();
  m.name = "llama-4-scout-fp8";
  m.expert_weight_bytes = 1;
  return m;
}

// DeepSeek's MLA + MoE family (DeepseekV3ForCausalLM and its kin). Every layer is MLA; the
// first first_k_dense_replace layers have a dense MLP of intermediate_size, the others a MoE of
// n_routed_experts routed experts of moe_intermediate_size (num_experts_per_tok per token) plus
// n_shared_experts always-on ones (one expert of n_shared_experts · moe_intermediate_size in the
// code: the same weights). num_key_value_heads equals num_attention_heads in these configs: MLA
// has no KV heads; the cache is the latent (latent_attention.h). Untied LM heads.
struct MlaRow {
  std::int64_t layers, hidden, heads, ffn, vocab, max_seq_len;
  LatentAttention mla;
  std::int64_t first_dense, experts, active, shared, expert_ffn;
  double block_weight_bytes;  // checkpoint dtype of the blocks and experts: 1 (fp8) or 0 (bf16)
};

ModelSpec mla_model(std::string_view name, const MlaRow& r) {
  ModelSpec m = llama_flavour(name, r.layers, r.hidden, r.heads, r.heads,
                              r.mla.qk_nope_head_dim + r.mla.qk_rope_head_dim, r.ffn, r.vocab, r.max_seq_len, false);
  m.mla = r.mla;
  m.moe_layers = r.layers - r.first_dense;
  m.experts = r.experts;
  m.active_experts = r.active;
  m.shared_experts = r.shared;
  m.expert_ffn = r.expert_ffn;
  m.block_weight_bytes = r.block_weight_bytes;
  m.expert_weight_bytes = r.block_weight_bytes;
  return m;
}

// DeepSeek-V3 (and R1, the same architecture): 61 layers, hidden 7168, 128 heads, q_lora_rank
// 1536, kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
// intermediate_size 18432, first_k_dense_replace 3, n_routed_experts 256, num_experts_per_tok
// 8, n_shared_experts 1, moe_intermediate_size 2048, vocab 129280, max_position_embeddings
// 163840, tie_word_embeddings false; quantization_config fp8 e4m3 with 128×128 weight blocks
// (the blocks' linear weights in fp8; their fp32 block scales, 1/4096 of a byte per weight,
// are left out). 671B parameters without the MTP module, which is not served here.
// https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json
// https://huggingface.co/deepseek-ai/DeepSeek-R1/blob/main/config.json
constexpr MlaRow kDeepSeekV3{61, 7168, 128, 18432, 129280, 163840,
                             {1536, 512, 128, 64, 128, 0, 0, 0}, 3, 256, 8, 1, 2048, 1.0};
ModelSpec deepseek_v3() { return mla_model("deepseek-v3", kDeepSeekV3); }
ModelSpec deepseek_r1() { return mla_model("deepseek-r1", kDeepSeekV3); }

// DeepSeek-V3.2-Exp: DeepSeek-V3.1-Terminus's architecture plus the lightning indexer of
// DeepSeek Sparse Attention: index_n_heads 64, index_head_dim 128, index_topk 2048.
// https://huggingface.co/deepseek-ai/DeepSeek-V3.2-Exp/blob/main/config.json
constexpr MlaRow kDeepSeekV32{61, 7168, 128, 18432, 129280, 163840,
                              {1536, 512, 128, 64, 128, 64, 128, 2048}, 3, 256, 8, 1, 2048, 1.0};
ModelSpec deepseek_v3_2_exp() { return mla_model("deepseek-v3.2-exp", kDeepSeekV32); }

// DeepSeek-V2-Lite: 27 layers, hidden 2048, 16 heads, q_lora_rank null (no query
// compression), kv_lora_rank 512, qk_nope_head_dim 128, qk_rope_head_dim 64, v_head_dim 128,
// intermediate_size 10944, first_k_dense_replace 1, n_routed_experts 64, num_experts_per_tok 6,
// n_shared_experts 2, moe_intermediate_size 1408, vocab 102400, max_position_embeddings
// 163840, bf16 weights.
// https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite/blob/main/config.json
constexpr MlaRow kDeepSeekV2Lite{27, 2048, 16, 10944, 102400, 163840,
                                 {0, 512, 128, 64, 128, 0, 0, 0}, 1, 64, 6, 2, 1408, 0.0};
ModelSpec deepseek_v2_lite() { return mla_model("deepseek-v2-lite", kDeepSeekV2Lite); }

// Kimi-K2-Instruct (DeepSeek-V3's architecture, model_type kimi_k2): 61 layers, hidden 7168,
// 64 heads, q_lora_rank 1536, kv_lora_rank 512, qk_nope 128, qk_rope 64, v 128,
// intermediate_size 18432, first_k_dense_replace 1, n_routed_experts 384, num_experts_per_tok
// 8, n_shared_experts 1, moe_intermediate_size 2048, vocab 163840, max_position_embeddings
// 131072, fp8 block-quantised weights as DeepSeek-V3. vLLM serves it as DeepSeek-V3 (kimi_k2
// is in its MLA model types).
// https://huggingface.co/moonshotai/Kimi-K2-Instruct/blob/main/config.json
constexpr MlaRow kKimiK2{61, 7168, 64, 18432, 163840, 131072,
                         {1536, 512, 128, 64, 128, 0, 0, 0}, 1, 384, 8, 1, 2048, 1.0};
ModelSpec kimi_k2() { return mla_model("kimi-k2", kKimiK2); }

// Small draft models for speculative decoding (speculative.draft_model), tied embeddings.
// https://huggingface.co/meta-llama/Llama-3.2-1B/blob/main/config.json : 16 layers, hidden
// 2048, 32 heads, 8 KV heads, head_dim 64, intermediate 8192, vocab 128256, 131072 positions,
// tie_word_embeddings true. The draft vLLM's examples pair with Llama-3.1/3.3 targets.
ModelSpec llama_3_2_1b() { return llama_flavour("llama-3.2-1b", 16, 2048, 32, 8, 64, 8192, 128256, 131072, true); }

// https://huggingface.co/Qwen/Qwen2.5-0.5B/blob/main/config.json : 24 layers, hidden 896, 14
// heads, 2 KV heads (head_dim 64), intermediate 4864, vocab 151936, 32768 positions,
// tie_word_embeddings true. Its q, k and v biases (24 · (896 + 2 · 128) = 27,648 parameters)
// are left out, as for qwen2.5-7b.
ModelSpec qwen2_5_0_5b() { return llama_flavour("qwen2.5-0.5b", 24, 896, 14, 2, 64, 4864, 151936, 32768, true); }

struct HeteroPreset {
  std::string_view name;
  ModelSpec (*make)();
};

constexpr std::array kHeteroPresets{
    HeteroPreset{"gemma-2-9b", gemma_2_9b},
    HeteroPreset{"gemma-2-27b", gemma_2_27b},
    HeteroPreset{"gemma-3-27b", gemma_3_27b},
    HeteroPreset{"ministral-8b", ministral_8b},
    HeteroPreset{"llama-3.2-11b-vision", llama_3_2_11b_vision},
    HeteroPreset{"gpt-oss-120b", gpt_oss_120b},
    HeteroPreset{"llama-4-scout", llama_4_scout},
    HeteroPreset{"jamba-v0.1", jamba_v0_1},
    HeteroPreset{"mixtral-8x7b", mixtral_8x7b},
    HeteroPreset{"mixtral-8x22b", mixtral_8x22b},
    HeteroPreset{"llama-4-scout-fp8", llama_4_scout_fp8},
    HeteroPreset{"deepseek-v3", deepseek_v3},
    HeteroPreset{"deepseek-r1", deepseek_r1},
    HeteroPreset{"deepseek-v3.2-exp", deepseek_v3_2_exp},
    HeteroPreset{"deepseek-v2-lite", deepseek_v2_lite},
    HeteroPreset{"kimi-k2", kimi_k2},
    HeteroPreset{"llama-3.2-1b", llama_3_2_1b},
    HeteroPreset{"qwen2.5-0.5b", qwen2_5_0_5b},
};

constexpr auto kModelNames = [] {
  std::array<std::string_view, kModelRows.size() + kHeteroPresets.size()> out{};
  std::size_t i = 0;
  for (const ModelRow& r : kModelRows) out[i++] = r.name;
  for (const HeteroPreset& p : kHeteroPresets) out[i++] = p.name;
  return out;
}();

// A short list is given in full; a long one (35 models) is named by `pagesim presets`, with
// the close names of a misspelling: "did you mean llama-3-8b?".
[[noreturn]] void throw_unknown(std::string_view what, std::string_view name,
                                std::span<const std::string_view> valid) {
  constexpr std::size_t kListedInFull = 8;
  const std::string mean = did_you_mean(name, valid);
  if (valid.size() <= kListedInFull)
    throw CostModelError(fmt::format("unknown {} preset '{}', expected one of: {}{}", what, name,
                                     fmt::join(valid, ", "), mean.empty() ? "" : "; " + mean));
  throw CostModelError(fmt::format("unknown {} preset '{}', expected one of the {} {} presets{} (`pagesim presets` "
                                   "lists them)",
                                   what, name, valid.size(), what, mean.empty() ? "" : ": " + mean));
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
  for (const HeteroPreset& p : kHeteroPresets)
    if (p.name == name) return p.make();
  throw_unknown("model", name, kModelNames);
}

GpuSpec gpu_preset(std::string_view name) {
  for (const GpuRow& r : kGpuRows) {
    if (r.name != name) continue;
    GpuSpec g;
    g.name = std::string(r.name);
    g.hbm_bytes = r.hbm_bytes;
    g.cuda_total_bytes = r.cuda_total_bytes;
    g.peak_flops = r.peak_flops;
    g.hbm_bytes_per_s = r.hbm_bytes_per_s;
    g.pcie_bytes_per_s = r.pcie_bytes_per_s;
    g.nvlink_bytes_per_s = r.nvlink_bytes_per_s;
    g.compute_capability = r.compute_capability;
    return g;
  }
  throw_unknown("gpu", name, kGpuNames);
}

std::span<const std::string_view> model_preset_names() { return kModelNames; }
std::span<const std::string_view> gpu_preset_names() { return kGpuNames; }

}  // namespace pagesim::sim
