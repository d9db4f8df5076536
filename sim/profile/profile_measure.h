// The GPU side of `pagesim profile`: times every point of a ProfileGrid on the current CUDA
// device. Built only with CUDA (profile_measure_cuda.cpp); profile_command.cpp calls it under
// PAGESIM_HAVE_CUDA.
//
// Method, for every point: CUDA events around the work on the default stream, `warmup`
// untimed runs, then the median of `repeats` timed runs; before each timed run the L2 cache
// is flushed (a memset of twice its size, outside the events), so weights and KV are read
// from HBM as in a forward pass that touches every layer. Inputs are random fp16 in [-1, 1).
//   linear       cuBLAS cublasGemmEx, fp16 in/out, fp32 compute: one layer's qkv, o_proj,
//                mlp_up, mlp_down back to back (profile_grid.h layer_gemms), and in a model
//                with MoE layers, apart, an MoE layer's qkv and o_proj (attention_gemms).
//                Norms, activations and the attention's own projections beyond these are
//                not run.
//   moe          one MoE block (moe_layer_shape) as vLLM's fused MoE runs it: router GEMM,
//                top-k softmax, rows gathered in expert order, per expert with tokens a
//                cuBLAS gate_up GEMM, SiLU-and-mul over all rows, per expert a cuBLAS down
//                GEMM, the combine weighted by the router (moe_kernels.h), shared experts'
//                MLP. Tokens spread evenly over the experts (moe_expert_tokens). One layer's
//                weights only (Mixtral-8x7B: 2.8 GB).
//   lm_head      the LM-head GEMM alone.
//   attention    kernels::paged_prefill / paged_decode (the planner's v1/v2 choice) over a
//                random block table into one KV pool, one layer at the model's head counts.
//   swap         one cudaMemcpyAsync per block, layer and K/V (vLLM's swap loop) between a
//                device buffer and pinned host memory, to a shuffled host block order so no
//                two copies merge; the same one-layer buffers serve every layer (a copy's
//                speed does not depend on which bytes it moves). Device->host and
//                host->device are timed apart; the slower is recorded.
// Uses the current device; not thread-safe (one profile at a time per process).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "sim/cost/model_spec.h"
#include "sim/profile/operator_check.h"
#include "sim/profile/profile_grid.h"
#include "sim/profile/profile_table.h"

namespace pagesim::sim::detail {

struct ProfileDevice {
  std::string name;             // e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  int driver_version = 0;       // CUDA driver API version, e.g. 12040
  int runtime_version = 0;

  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.2 GiB, L2 50 MiB, driver 12.4, runtime 13.0)"
  std::string describe() const;
};

// True if a CUDA device is usable; fills `device` with the current one. Otherwise `why`
// says what the runtime reported.
bool profile_device(ProfileDevice* device, std::string* why);

// Times every grid point. `progress` gets one line per part. Throws std::runtime_error
// naming the CUDA or cuBLAS call on an error (out of memory included, with the bytes asked).
// REQUIRES: model.dtype_bytes == 2 (fp16); grid from make_profile_grid(model, grid_options).
ProfileTimings measure_profile(const ModelSpec& model, const ProfileGrid& grid,
                               const ProfileGridOptions& grid_options, int warmup, int repeats,
                               std::ostream& progress);

// Times every point of an operator check (operator_check.h), bf16, with the same method
// (moe points: the block without its router GEMM and shared experts, as the tables' moe):
// median seconds, in the points' order. Attention on a KV pool of `block_size`-token blocks.
std::vector<double> measure_operator_points(const ModelSpec& model, const std::vector<OperatorCheckPoint>& points,
                                            std::int32_t block_size, int warmup, int repeats,
                                            std::ostream& progress);

}  // namespace pagesim::sim::detail
