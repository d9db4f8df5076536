// LatentAttention: multi-head latent attention (MLA: DeepSeek-V2, arXiv 2405.04434 §2.1) and
// DeepSeek-V3.2's sparse-attention indexer (DSA), as a model's configuration describes them,
// and what one token of each costs in the KV cache the way vLLM stores it.
//
// MLA caches, per layer and token, one latent vector c_KV (kv_lora_rank elements) and one rope
// key k_R (qk_rope_head_dim elements), shared by every head: keys and values are up-projected
// from c_KV (prefill) or the up-projections are absorbed into the query and the output (decode,
// where MLA becomes multi-query attention over a head of kv_lora_rank + qk_rope_head_dim).
// vLLM keeps it as that one head (MLAAttentionSpec, num_kv_heads 1) whatever the tensor-
// parallel degree: vllm/config/model.py ModelConfig.get_num_kv_heads returns 1 for MLA ("When
// using MLA during decode it becomes MQA") instead of dividing by tensor_parallel_size, so
// every rank holds the whole latent cache. pagesim models that: tensor parallelism splits the
// heads and the weights, never the latent cache.
//
// Bytes of the latent cache per layer and token (latent_bytes_per_token_per_layer):
//   auto, bf16, fp16   (rank + rope) · 2: 1152 for DeepSeek-V3's 512 + 64
//   fp8, dense MLA     rank + rope = 576: FlashMLA's fp8 cache with one per-tensor scale per
//                      layer, as vLLM's kv_cache_dtype fp8 stores every model (kv_dtype.h)
//   fp8, sparse MLA    656 for 512 + 64: vLLM turns fp8 into "fp8_ds_mla" for DeepSeek-V3.2
//                      (vllm/model_executor/models/config.py, DeepseekV32ForCausalLM.
//                      verify_and_update_config), whose record is 512 fp8 values, 4 fp32
//                      scales (one per 128 values, 16 B) and the 64 rope values in bf16 (128 B)
//                      (vllm/v1/attention/backends/mla/flashmla_sparse.py, the FlashMLA note and
//                      get_kv_cache_shape "custom storage format is 656 bytes")
//   int4               no engine stores MLA so: refused (ModelSpec::validate names kv_dtype)
// Indexer keys (index_head_dim > 0, DeepSeek-V3.2): a second per-token cache beside the latent
// one, per layer one key of index_head_dim fp8 values and one fp32 scale per 128 of them, in
// every kv_dtype: vLLM's Indexer in vllm/model_executor/models/deepseek_v2.py ("we use fp8
// naive cache ... scale in fp32 per self.quant_block_size element"; DeepseekV32IndexerCache of
// head_dim + head_dim // 128 * 4 = 132 uint8). Its key projection is replicated on every rank,
// so it is not split by tensor parallelism either.
//
// Pages: FlashMLA's kernels read 64-token pages (vLLM's FlashMLA and FlashMLASparse backends:
// get_supported_kernel_block_sizes() returns [64]; vllm/platforms/cuda.py: "Forcing kv cache
// block size to 64 for FlashMLA backend"), kFlashMlaPageTokens.
// Plain values and pure functions.
#pragma once

#include <cstdint>

#include "sim/cost/kv_dtype.h"

namespace pagesim::sim {

// Tokens per page of FlashMLA's paged KV cache (dense and sparse kernels).
inline constexpr std::int64_t kFlashMlaPageTokens = 64;
// Elements sharing one fp32 scale in fp8_ds_mla's latent and in the indexer's key cache.
inline constexpr std::int64_t kMlaFp8ScaleGroup = 128;
inline constexpr std::int64_t kFp32Bytes = 4;

// A model's MLA and indexer dimensions (config.json names); kv_lora_rank 0 = not MLA.
struct LatentAttention {
  std::int64_t q_lora_rank = 0;       // query compression (0: q projected from hidden directly,
                                      // DeepSeek-V2-Lite)
  std::int64_t kv_lora_rank = 0;      // latent c_KV width (elements)
  std::int64_t qk_nope_head_dim = 0;  // per-head query/key part without rope (elements)
  std::int64_t qk_rope_head_dim = 0;  // rope key width, shared by all heads (elements)
  std::int64_t v_head_dim = 0;        // per-head value width (elements)
  // DeepSeek-V3.2's lightning indexer (all 0 without one).
  std::int64_t index_n_heads = 0;     // indexer query heads
  std::int64_t index_head_dim = 0;    // indexer key width (elements)
  std::int64_t index_topk = 0;        // keys each query's sparse attention reads at most

  constexpr bool enabled() const { return kv_lora_rank > 0; }
  constexpr bool sparse() const { return index_head_dim > 0; }
  // Width of the cached record in elements: what one MQA head of absorbed decode reads.
  constexpr std::int64_t cached_dim() const { return kv_lora_rank + qk_rope_head_dim; }
  constexpr bool operator==(const LatentAttention&) const = default;
};

// The latent cache of one token in one layer (bytes, scales included); 0 for int4 (refused).
// `auto_element_bytes` is the model's dtype_bytes, used by kAuto. REQUIRES: mla.enabled().
constexpr std::int64_t latent_bytes_per_token_per_layer(const LatentAttention& mla, KvDtype dtype,
                                                        std::int64_t auto_element_bytes) {
  const std::int64_t elems = mla.cached_dim();
  switch (dtype) {
    case KvDtype::kAuto: return elems * auto_element_bytes;
    case KvDtype::kFp16:
    case KvDtype::kBf16: return elems * 2;
    case KvDtype::kFp8:
      if (!mla.sparse()) return elems;
      // fp8_ds_mla: fp8 latent, fp32 scale per 128 of it, bf16 rope.
      return mla.kv_lora_rank +
             (mla.kv_lora_rank + kMlaFp8ScaleGroup - 1) / kMlaFp8ScaleGroup * kFp32Bytes +
             mla.qk_rope_head_dim * 2;
    case KvDtype::kInt4: return 0;
  }
  return 0;
}

// The indexer's key of one token in one layer (bytes): fp8 values and an fp32 scale per 128;
// 0 without an indexer.
constexpr std::int64_t index_key_bytes_per_token_per_layer(const LatentAttention& mla) {
  if (!mla.sparse()) return 0;
  return mla.index_head_dim + (mla.index_head_dim + kMlaFp8ScaleGroup - 1) / kMlaFp8ScaleGroup * kFp32Bytes;
}

}  // namespace pagesim::sim
