// KV capacity: how many token slots of KV cache fit on each GPU after the weights and the
// activation workspace, the way a serving engine sizes its cache at start-up:
//
//   kv_bytes = hbm_bytes · gpu_memory_utilization − weight_bytes / tp − activation_reserve
//   blocks   = floor(kv_bytes / (block_size · KV bytes per token per GPU)),  slots = blocks ·
//   block_size
//
// Weights split evenly over the tp GPUs (norms, replicated in practice, are negligible).
// With the vLLM paper's settings (OPT-13B fp16, 25.7 GB of weights, on an A100-40GB whose
// driver reports 40,536 MiB; utilization 0.9) this gives 15,312 slots with no reserve and
// 14,992 with the estimate_activation_bytes reserve for 2,560 tokens and 256 sequences
// (261 MB): 2.6% and 4.7% below the paper's 15,728 (983 blocks of 16, 12 GiB). The paper's
// figure matches 0.9 × the nominal 40 GiB minus the weights minus a reserve of 50-63 MB.
// See tests/sim/cost/kv_capacity_test.cpp. Experiments that reproduce the paper state
// kv_slots explicitly. Pure functions.
#pragma once

#include <cstdint>

#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"

namespace pagesim::sim {

struct KvCapacitySettings {
  double gpu_memory_utilization = 0.9;      // fraction of hbm_bytes the engine may use (0, 1]
  std::int64_t activation_reserve_bytes = 0;  // per GPU, workspace of the largest forward pass
                                              // (bytes); see estimate_activation_bytes
  std::int64_t block_size = 16;             // slots round down to whole blocks (tokens)
  std::int64_t draft_weight_bytes = 0;      // a speculative drafter's weights on this GPU
                                            // (bytes, >= 0), counted with the model's
};

// The derivation, term by term; all sizes per GPU.
struct KvCapacity {
  std::int64_t usable_bytes = 0;              // hbm_bytes · utilization (bytes)
  std::int64_t weight_bytes = 0;              // model weights / tp + the drafter's (bytes)
  std::int64_t activation_reserve_bytes = 0;  // from the settings (bytes)
  std::int64_t kv_bytes = 0;                  // usable − weights − reserve (bytes)
  std::int64_t kv_bytes_per_token = 0;        // ModelSpec::kv_bytes_per_token_per_gpu (bytes)
  std::int64_t blocks = 0;                    // whole blocks that fit (blocks)
  std::int64_t slots = 0;                     // blocks · block_size (tokens)
};

// Throws CostModelError when a spec is invalid, tp does not fit the model, a setting is out of
// range, or the weights and the reserve leave no room for a single block.
KvCapacity kv_capacity(const ModelSpec& model, const GpuSpec& gpu, int tp,
                       const KvCapacitySettings& settings = {});

// A rough per-GPU activation workspace for a forward pass over `max_batched_tokens` tokens
// with `max_seqs` sampled sequences: the largest simultaneous transient tensors of one block
// (residual, qkv, the MLP intermediate, gate and up for gated MLPs) for every token, plus fp32
// logits for every sampled sequence. An estimate for sizing, not a measured peak (bytes).
std::int64_t estimate_activation_bytes(const ModelSpec& model, std::int64_t max_batched_tokens,
                                       std::int64_t max_seqs, int tp);

}  // namespace pagesim::sim
