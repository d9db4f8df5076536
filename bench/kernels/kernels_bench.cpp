// pagesim_kernels_bench: speed of the paged-attention kernels on the GPU it runs on.
//
// Decode: achieved bandwidth = (bytes of K and V read for every context token + Q read +
// output written) / time. Prefill: TFLOP/s = 4 * head_dim * (visible (query, key) pairs,
// causal) * query heads / time. Every case runs on a random block table (paged) and on the
// identity table (each sequence's blocks contiguous: the "contiguous KV" baseline of the same
// kernel).
//
// Timing: device work only. Each timed run is enqueued behind a StreamGate (stream_gate.h):
// the stream waits while the host checks arguments and launches, so the CUDA events around
// the launch see no host time. 3 warm-ups, median of --repeats (>= 20) runs; when a case's
// working set is below 256 MB the L2 is flushed (a memset of twice its size) before every
// timed run, outside the events. Inputs are random, never zeros.
//
// Targets are relative to the device: decode against the device-to-device copy bandwidth
// measured first in the same run (the spec peak is printed beside it), prefill against 300
// TFLOP/s and the paged/identity ratio, with the dense fp16 tensor-core peak beside it
// (device_peaks.h).
//
// Output: each case is appended to --csv and --md as soon as it is measured (a run cut off by
// a time limit keeps what it measured); the target summary follows the table at the end.
//
// Usage: pagesim_kernels_bench [--csv FILE] [--md FILE] [--repeats N] [--only decode|prefill|latent]
//        [--quick]
// Exits non-zero, with a message, on a bad flag or a CUDA error; when no GPU is present it
// prints a message and exits 0, or 1 under PAGESIM_REQUIRE_GPU=1 (as the GPU tests).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench/kernels/device_peaks.h"
#include "bench/kernels/stream_gate.h"
#include "kernels/cuda/cuda_host.h"
#include "kernels/fp8.h"
#include "kernels/half.h"
#include "kernels/kv_layout.h"
#include "kernels/latent_attention.h"
#include "kernels/paged_attention.h"

namespace pk = pagesim::kernels;
namespace pb = pagesim::bench;

namespace {

using Buffer = pk::DeviceBuffer;

void cuda(cudaError_t e, const char* what) { pk::check_cuda(e, "pagesim_kernels_bench", what); }

// Random values in [-1, 1] of `dtype` (fp8: [-16, 16], stored for a cache scale of 1/16) over `bytes` of device memory: one 64 MB random tile
// uploaded repeatedly (fast for multi-GB caches; the repetition does not matter for speed).
void fill_random(void* dst, std::size_t bytes, pk::DType dtype, std::uint64_t seed) {
  const std::size_t tile = std::min<std::size_t>(bytes, 64u << 20);
  std::vector<std::uint8_t> host(tile);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  if (dtype == pk::DType::kFloat8E4M3) {
    for (std::size_t i = 0; i < tile; ++i) host[i] = pk::float_to_fp8_e4m3_bits(16.f * dist(rng));
  } else if (dtype == pk::DType::kFloat32) {
    for (std::size_t i = 0; i + 4 <= tile; i += 4) {
      const float f = dist(rng);
      std::memcpy(&host[i], &f, 4);
    }
  } else {
    for (std::size_t i = 0; i + 2 <= tile; i += 2) {
      const float f = dist(rng);
      const std::uint16_t b = dtype == pk::DType::kFloat16 ? pk::float_to_half_bits(f) : pk::float_to_bf16_bits(f);
      std::memcpy(&host[i], &b, 2);
    }
  }
  for (std::size_t off = 0; off < bytes; off += tile) {
    cuda(cudaMemcpy(static_cast<char*>(dst) + off, host.data(), std::min(tile, bytes - off), cudaMemcpyHostToDevice),
         "upload");
  }
}

struct Timing {
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
};

// Times `run` (which enqueues work on the default stream): device time only, see the header.
template <class F>
Timing time_it(F&& run, int repeats, bool flush, void* flush_buf, std::size_t flush_bytes, pb::StreamGate& gate) {
  cudaEvent_t a, b;
  cuda(cudaEventCreate(&a), "cudaEventCreate");
  cuda(cudaEventCreate(&b), "cudaEventCreate");
  // Warm-up also loads every kernel the timed loop uses (the gate's, the flush memset's):
  // with lazy module loading, loading one while the gate spins could wait on the gate.
  for (int i = 0; i < 3; ++i) run();
  if (flush) cuda(cudaMemsetAsync(flush_buf, 0, flush_bytes), "L2 flush");
  gate.hold(nullptr);
  gate.release();
  cuda(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    gate.hold(nullptr);
    if (flush) cuda(cudaMemsetAsync(flush_buf, i & 0xff, flush_bytes), "L2 flush");
    cuda(cudaEventRecord(a), "cudaEventRecord");
    run();
    cuda(cudaEventRecord(b), "cudaEventRecord");
    gate.release();
    cuda(cudaEventSynchronize(b), "cudaEventSynchronize");
    if (gate.timed_out()) throw std::runtime_error("the stream gate timed out before the host released it");
    float t = 0;
    cuda(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  return {n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2, ms.front(), ms.back()};
}

struct Row {
  std::string kernel, name, dtype, table, algo;
  int head_dim = 0, block_size = 0, batch = 0, q_heads = 0, kv_heads = 0;
  std::int64_t context = 0, query_len = 0;
  Timing t;
  double bytes = 0, flops = 0;
  double value = 0;  // TB/s (decode, copy) or TFLOP/s (prefill)
  std::string unit;
  double of_copy = 0;             // decode: value / measured copy bandwidth
  double of_peak = 0;             // value / the device's spec peak (bandwidth or fp16 tensor); 0 = unknown
  double target = 0;              // same unit as value; 0 = none
  std::string target_text;        // how the target was derived
  double vs_identity = 0;         // paged / identity speed, for paged rows
  double target_vs_identity = 0;  // paged rows: required vs_identity; 0 = none
};

struct Env {
  Env(int r, pb::StreamGate& g) : repeats(r), gate(g) {}
  int repeats = 30;
  pb::StreamGate& gate;
  std::size_t l2_bytes = 0;
  void* flush_buf = nullptr;
  std::size_t flush_bytes = 0;
  double copy_tbps = 0;  // measured device-to-device copy bandwidth (read + write)
  pb::DevicePeaks peaks;
  static constexpr double kFlushBelow = 256.0 * 1024 * 1024;
};

std::string fmt(double x, int prec) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(prec);
  os << x;
  return os.str();
}

std::size_t elem(pk::DType t) { return pk::dtype_size(t); }

// Paged block table: a seeded permutation of the blocks; identity: sequence s owns blocks
// s * blocks_per_seq + i.
std::vector<std::int32_t> make_table(int batch, std::int64_t blocks_per_seq, bool paged, std::uint64_t seed) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(batch * blocks_per_seq));
  std::iota(t.begin(), t.end(), 0);
  if (paged) std::shuffle(t.begin(), t.end(), std::mt19937_64(seed));
  return t;
}

struct DecodeCase {
  std::string name;
  pk::DType dtype;
  int head_dim, block_size, batch, context, q_heads, kv_heads;
  double target_of_copy;  // paged row must reach this fraction of the measured copy bandwidth; 0 = none
  std::string force;      // "", "v1", "v2" (partitions of 512)
  std::string kernel = "";  // "": decode_kernel_for the shapes; "simt" or "mma": forced (needs force)
};

std::vector<Row> run_decode(const DecodeCase& c, const Env& env) {
  const std::int64_t blocks_per_seq = (c.context + c.block_size - 1) / c.block_size;
  const auto num_blocks = static_cast<std::int32_t>(c.batch * blocks_per_seq);
  const std::size_t cache_bytes =
      static_cast<std::size_t>(pk::kv_cache_elements(num_blocks, c.kv_heads, c.block_size, c.head_dim)) * elem(c.dtype);
  Buffer k(cache_bytes), v(cache_bytes);
  fill_random(k.get(), cache_bytes, c.dtype, 1);
  fill_random(v.get(), cache_bytes, c.dtype, 2);
  const std::size_t q_bytes = static_cast<std::size_t>(c.batch) * c.q_heads * c.head_dim * elem(c.dtype);
  Buffer q(q_bytes), out(q_bytes);
  fill_random(q.get(), q_bytes, c.dtype, 3);
  std::vector<std::int32_t> lens(static_cast<std::size_t>(c.batch), c.context);
  Buffer dlens(lens.size() * 4);
  cuda(cudaMemcpy(dlens.get(), lens.data(), lens.size() * 4, cudaMemcpyHostToDevice), "upload lens");
  pk::PagedAttentionArgs a;
  a.query = pk::TensorView::contiguous(q.get(), c.dtype, {c.batch, c.q_heads, c.head_dim});
  a.out = pk::TensorView::contiguous(out.get(), c.dtype, {c.batch, c.q_heads, c.head_dim});
  a.k_cache = pk::kv_cache_view(k.get(), c.dtype, pk::KvLayout::kHND, num_blocks, c.kv_heads, c.block_size, c.head_dim);
  a.v_cache = pk::kv_cache_view(v.get(), c.dtype, pk::KvLayout::kHND, num_blocks, c.kv_heads, c.block_size, c.head_dim);
  a.kv_lens = pk::TensorView::contiguous(dlens.get(), pk::DType::kInt32, {c.batch});
  a.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  const double bytes = 2.0 * static_cast<double>(cache_bytes) / static_cast<double>(num_blocks * c.block_size) *
                           static_cast<double>(c.batch) * c.context +
                       2.0 * static_cast<double>(q_bytes);
  const bool flush = bytes < Env::kFlushBelow;
  std::vector<Row> rows;
  for (bool paged : {false, true}) {
    const std::vector<std::int32_t> table = make_table(c.batch, blocks_per_seq, paged, 7);
    Buffer dtable(table.size() * 4);
    cuda(cudaMemcpy(dtable.get(), table.data(), table.size() * 4, cudaMemcpyHostToDevice), "upload table");
    a.block_table = pk::TensorView::contiguous(dtable.get(), pk::DType::kInt32, {c.batch, blocks_per_seq});
    // The plan reads the arguments' shapes (the table's included), not the table's contents:
    // both tables get the same plan.
    const pk::DecodeProblem problem = pk::decode_problem(a, lens);
    std::optional<pk::DecodeKernel> kernel;
    if (!c.kernel.empty()) kernel = c.kernel == "mma" ? pk::DecodeKernel::kTensorCores : pk::DecodeKernel::kCudaCores;
    const pk::DecodePlan plan =
        c.force.empty()
            ? pk::plan_decode(problem, pk::decode_device_caps(problem))
            : pk::make_decode_plan(problem, c.force == "v1" ? pk::DecodeAlgo::kV1 : pk::DecodeAlgo::kV2, 512, kernel);
    Buffer ws(plan.workspace_bytes);
    Row r;
    r.kernel = "decode";
    r.name = c.name;
    r.dtype = pk::dtype_name(c.dtype);
    r.table = paged ? "paged" : "identity";
    r.algo = std::string(pk::decode_kernel_name(plan.kernel)) + " " + pk::decode_algo_name(plan.algo) +
             (plan.algo == pk::DecodeAlgo::kV2 ? "/" + std::to_string(plan.partition_size) : "");
    r.head_dim = c.head_dim;
    r.block_size = c.block_size;
    r.batch = c.batch;
    r.q_heads = c.q_heads;
    r.kv_heads = c.kv_heads;
    r.context = c.context;
    r.query_len = 1;
    r.t = time_it([&] { pk::paged_decode(a, plan, ws.get(), ws.bytes(), nullptr); }, env.repeats, flush,
                  env.flush_buf, env.flush_bytes, env.gate);
    r.bytes = bytes;
    r.value = bytes / (r.t.median_ms * 1e-3) / 1e12;
    r.unit = "TB/s";
    r.of_copy = r.value / env.copy_tbps;
    r.of_peak = env.peaks.hbm_tbps > 0 ? r.value / env.peaks.hbm_tbps : 0;
    if (paged && c.target_of_copy > 0) {
      r.target = c.target_of_copy * env.copy_tbps;
      r.target_text = fmt(100 * c.target_of_copy, 0) + "% of copy = " + fmt(r.target, 2) + " TB/s";
    }
    rows.push_back(r);
  }
  rows[1].vs_identity = rows[1].value / rows[0].value;
  return rows;
}

struct PrefillCase {
  std::string name;
  pk::DType dtype;
  int head_dim, block_size, batch, query_len, history, q_heads, kv_heads;
  double target_tflops;        // paged row: absolute TFLOP/s; 0 = none
  double target_vs_identity;  // paged row: fraction of the identity-table speed; 0 = none
  std::string kernel = "";     // "" = plan_prefill's choice, or "mma" forced
};

std::vector<Row> run_prefill(const PrefillCase& c, const Env& env) {
  const int context = c.history + c.query_len;
  const std::int64_t blocks_per_seq = (context + c.block_size - 1) / c.block_size;
  const auto num_blocks = static_cast<std::int32_t>(c.batch * blocks_per_seq);
  const std::size_t cache_bytes =
      static_cast<std::size_t>(pk::kv_cache_elements(num_blocks, c.kv_heads, c.block_size, c.head_dim)) * elem(c.dtype);
  Buffer k(cache_bytes), v(cache_bytes);
  fill_random(k.get(), cache_bytes, c.dtype, 1);
  fill_random(v.get(), cache_bytes, c.dtype, 2);
  const std::int64_t tokens = static_cast<std::int64_t>(c.batch) * c.query_len;
  const std::size_t q_bytes = static_cast<std::size_t>(tokens) * c.q_heads * c.head_dim * elem(c.dtype);
  Buffer q(q_bytes), out(q_bytes);
  fill_random(q.get(), q_bytes, c.dtype, 3);
  std::vector<std::int32_t> lens(static_cast<std::size_t>(c.batch), context), starts(static_cast<std::size_t>(c.batch) + 1);
  for (int s = 0; s <= c.batch; ++s) starts[static_cast<std::size_t>(s)] = s * c.query_len;
  Buffer dlens(lens.size() * 4), dstarts(starts.size() * 4);
  cuda(cudaMemcpy(dlens.get(), lens.data(), lens.size() * 4, cudaMemcpyHostToDevice), "upload lens");
  cuda(cudaMemcpy(dstarts.get(), starts.data(), starts.size() * 4, cudaMemcpyHostToDevice), "upload starts");
  pk::PagedAttentionArgs a;
  a.query = pk::TensorView::contiguous(q.get(), c.dtype, {tokens, c.q_heads, c.head_dim});
  a.out = pk::TensorView::contiguous(out.get(), c.dtype, {tokens, c.q_heads, c.head_dim});
  a.k_cache = pk::kv_cache_view(k.get(), c.dtype, pk::KvLayout::kHND, num_blocks, c.kv_heads, c.block_size, c.head_dim);
  a.v_cache = pk::kv_cache_view(v.get(), c.dtype, pk::KvLayout::kHND, num_blocks, c.kv_heads, c.block_size, c.head_dim);
  a.kv_lens = pk::TensorView::contiguous(dlens.get(), pk::DType::kInt32, {c.batch});
  a.query_starts = pk::TensorView::contiguous(dstarts.get(), pk::DType::kInt32, {c.batch + 1});
  a.scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  // Visible (query, key) pairs per sequence and head: q * h + q (q + 1) / 2.
  const double pairs = static_cast<double>(c.query_len) * c.history +
                       static_cast<double>(c.query_len) * (c.query_len + 1) / 2.0;
  const double flops = 4.0 * c.head_dim * pairs * c.q_heads * c.batch;
  const double working_set = 2.0 * static_cast<double>(cache_bytes) + 2.0 * static_cast<double>(q_bytes);
  const bool flush = working_set < Env::kFlushBelow;
  std::vector<Row> rows;
  for (bool paged : {false, true}) {
    const std::vector<std::int32_t> table = make_table(c.batch, blocks_per_seq, paged, 11);
    Buffer dtable(table.size() * 4);
    cuda(cudaMemcpy(dtable.get(), table.data(), table.size() * 4, cudaMemcpyHostToDevice), "upload table");
    a.block_table = pk::TensorView::contiguous(dtable.get(), pk::DType::kInt32, {c.batch, blocks_per_seq});
    const pk::PrefillProblem problem = pk::prefill_problem(a, c.query_len);
    const pk::PrefillPlan plan = c.kernel == "mma" ? pk::make_prefill_plan(problem, pk::PrefillKernel::kMma)
                                                   : pk::plan_prefill(problem);
    Row r;
    r.kernel = "prefill";
    r.name = c.name;
    r.dtype = pk::dtype_name(c.dtype);
    r.table = paged ? "paged" : "identity";
    r.algo = plan.kernel == pk::PrefillKernel::kCudaCores ? "simt" : pk::prefill_kernel_name(plan.kernel);
    r.head_dim = c.head_dim;
    r.block_size = c.block_size;
    r.batch = c.batch;
    r.q_heads = c.q_heads;
    r.kv_heads = c.kv_heads;
    r.context = context;
    r.query_len = c.query_len;
    r.t = time_it([&] { pk::paged_prefill(a, plan, nullptr); }, env.repeats, flush, env.flush_buf, env.flush_bytes,
                  env.gate);
    r.flops = flops;
    r.value = flops / (r.t.median_ms * 1e-3) / 1e12;
    r.unit = "TFLOP/s";
    const bool tensor_cores = c.dtype != pk::DType::kFloat32;
    r.of_peak = env.peaks.fp16_dense_tflops > 0 && tensor_cores ? r.value / env.peaks.fp16_dense_tflops : 0;
    if (paged && c.target_tflops > 0) {
      r.target = c.target_tflops;
      r.target_text = fmt(c.target_tflops, 0) + " TFLOP/s";
    }
    rows.push_back(r);
  }
  rows[1].vs_identity = rows[1].value / rows[0].value;
  rows[1].target_vs_identity = c.target_vs_identity;
  return rows;
}

struct LatentCase {
  std::string name;
  pk::DType dtype;        // query and out
  pk::DType cache_dtype;  // dtype or fp8
  int block_size, batch, context, heads;
  double target_of_copy;  // paged row; 0 = none
};

// Absorbed MLA decode (kernels/latent_attention.h): bandwidth = (latent rows read + Q read +
// output written) / time, as decode's; the algo column also gives the tensor-core rate
// (2 x heads x context x (576 + 512) FLOP per sequence: S and P V).
std::vector<Row> run_latent(const LatentCase& c, const Env& env) {
  constexpr int kDim = pk::latent_limits::kLatentDim, kVDim = pk::latent_limits::kValueDim;
  const std::int64_t blocks_per_seq = (c.context + c.block_size - 1) / c.block_size;
  const auto num_blocks = static_cast<std::int32_t>(c.batch * blocks_per_seq);
  const std::size_t cache_bytes = static_cast<std::size_t>(num_blocks) * c.block_size * kDim * elem(c.cache_dtype);
  Buffer cache(cache_bytes);
  fill_random(cache.get(), cache_bytes, c.cache_dtype, 1);
  const std::size_t q_bytes = static_cast<std::size_t>(c.batch) * c.heads * kDim * elem(c.dtype);
  const std::size_t o_bytes = static_cast<std::size_t>(c.batch) * c.heads * kVDim * elem(c.dtype);
  Buffer q(q_bytes), out(o_bytes);
  fill_random(q.get(), q_bytes, c.dtype, 3);
  std::vector<std::int32_t> lens(static_cast<std::size_t>(c.batch), c.context);
  Buffer dlens(lens.size() * 4);
  cuda(cudaMemcpy(dlens.get(), lens.data(), lens.size() * 4, cudaMemcpyHostToDevice), "upload lens");
  pk::LatentAttentionArgs a;
  a.query = pk::TensorView::contiguous(q.get(), c.dtype, {c.batch, c.heads, kDim});
  a.out = pk::TensorView::contiguous(out.get(), c.dtype, {c.batch, c.heads, kVDim});
  a.latent_cache = pk::TensorView::contiguous(cache.get(), c.cache_dtype, {num_blocks, 1, c.block_size, kDim});
  a.kv_lens = pk::TensorView::contiguous(dlens.get(), pk::DType::kInt32, {c.batch});
  a.scale = 1.0f / std::sqrt(192.0f);
  a.cache_scale = c.cache_dtype == pk::DType::kFloat8E4M3 ? 1.0f / 16 : 1.0f;
  const double bytes = static_cast<double>(c.batch) * c.context * kDim * static_cast<double>(elem(c.cache_dtype)) +
                       static_cast<double>(q_bytes + o_bytes);
  const double flops = 2.0 * c.batch * c.heads * static_cast<double>(c.context) * (kDim + kVDim);
  const bool flush = bytes < Env::kFlushBelow;
  const pk::LatentPlan plan =
      pk::plan_latent_attention({c.batch, c.heads, 1, c.context}, pk::latent_attention_target_ctas());
  Buffer ws(plan.workspace_bytes);
  std::vector<Row> rows;
  for (bool paged : {false, true}) {
    const std::vector<std::int32_t> table = make_table(c.batch, blocks_per_seq, paged, 7);
    Buffer dtable(table.size() * 4);
    cuda(cudaMemcpy(dtable.get(), table.data(), table.size() * 4, cudaMemcpyHostToDevice), "upload table");
    a.block_table = pk::TensorView::contiguous(dtable.get(), pk::DType::kInt32, {c.batch, blocks_per_seq});
    Row r;
    r.kernel = "mla decode";
    r.name = c.name;
    r.dtype = std::string(pk::dtype_name(c.dtype)) + "/" + pk::dtype_name(c.cache_dtype);
    r.table = paged ? "paged" : "identity";
    r.head_dim = kDim;
    r.block_size = c.block_size;
    r.batch = c.batch;
    r.q_heads = c.heads;
    r.kv_heads = 1;
    r.context = c.context;
    r.query_len = 1;
    r.t = time_it([&] { pk::paged_latent_attention(a, plan, ws.get(), ws.bytes(), nullptr); }, env.repeats, flush,
                  env.flush_buf, env.flush_bytes, env.gate);
    r.bytes = bytes;
    r.flops = flops;
    r.value = bytes / (r.t.median_ms * 1e-3) / 1e12;
    r.unit = "TB/s";
    r.algo = "mma.sync x" + std::to_string(plan.partitions) + " part., " +
             fmt(flops / (r.t.median_ms * 1e-3) / 1e12, 1) + " TFLOP/s";
    r.of_copy = r.value / env.copy_tbps;
    r.of_peak = env.peaks.hbm_tbps > 0 ? r.value / env.peaks.hbm_tbps : 0;
    if (paged && c.target_of_copy > 0) {
      r.target = c.target_of_copy * env.copy_tbps;
      r.target_text = fmt(100 * c.target_of_copy, 0) + "% of copy = " + fmt(r.target, 2) + " TB/s";
    }
    rows.push_back(r);
  }
  rows[1].vs_identity = rows[1].value / rows[0].value;
  return rows;
}

// Device-to-device copy: the practical bandwidth ceiling (bytes read + written).
Row copy_ceiling(const Env& env) {
  const std::size_t bytes = std::size_t{2} << 30;
  Buffer a(bytes), b(bytes);
  fill_random(a.get(), bytes, pk::DType::kFloat16, 5);
  Row r;
  r.kernel = "copy";
  r.name = "cudaMemcpy D2D 2 GiB";
  r.table = "-";
  r.algo = "-";
  r.dtype = "-";
  r.t = time_it([&] { cuda(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "copy"); },
                env.repeats, false, nullptr, 0, env.gate);
  r.bytes = 2.0 * static_cast<double>(bytes);
  r.value = r.bytes / (r.t.median_ms * 1e-3) / 1e12;
  r.unit = "TB/s";
  r.of_peak = env.peaks.hbm_tbps > 0 ? r.value / env.peaks.hbm_tbps : 0;
  return r;
}

std::string pct(double fraction) { return fraction > 0 ? fmt(100 * fraction, 1) + "%" : ""; }

// The CSV and Markdown outputs, written row by row as cases finish (flushed each time).
class Report {
 public:
  Report(const std::string& csv, const std::string& md, const std::string& header) {
    if (!csv.empty()) {
      csv_.open(csv);
      if (!csv_) throw std::runtime_error("cannot write " + csv);
      csv_ << "kernel,case,dtype,head_dim,block_size,batch,context,query_len,q_heads,kv_heads,table,algo,median_ms,"
              "min_ms,max_ms,bytes,flops,value,unit,of_copy,of_spec_peak,target,met,vs_identity,target_vs_identity\n"
           << std::flush;
    }
    if (!md.empty()) {
      md_.open(md);
      if (!md_) throw std::runtime_error("cannot write " + md);
    }
    emit(header + "\n\n| kernel | case | dtype | d | block | batch | context | q/kv heads | table | algo | median ms | "
                  "result | % of copy | % of spec peak | target | paged/identity |\n"
                  "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  }

  void add(const Row& r) {
    if (csv_.is_open()) {
      csv_ << r.kernel << ',' << '"' << r.name << '"' << ',' << r.dtype << ',' << r.head_dim << ',' << r.block_size
           << ',' << r.batch << ',' << r.context << ',' << r.query_len << ',' << r.q_heads << ',' << r.kv_heads << ','
           << r.table << ',' << r.algo << ',' << fmt(r.t.median_ms, 4) << ',' << fmt(r.t.min_ms, 4) << ','
           << fmt(r.t.max_ms, 4) << ',' << fmt(r.bytes, 0) << ',' << fmt(r.flops, 0) << ',' << fmt(r.value, 3) << ','
           << r.unit << ',' << fmt(r.of_copy, 4) << ',' << fmt(r.of_peak, 4) << ',' << fmt(r.target, 3) << ','
           << (r.target > 0 ? (r.value >= r.target ? "yes" : "no") : "") << ',' << fmt(r.vs_identity, 4) << ','
           << fmt(r.target_vs_identity, 2) << '\n'
           << std::flush;
    }
    std::string target;
    if (r.target > 0) target = r.target_text + (r.value >= r.target ? " (met)" : " (MISSED)");
    std::string vs = r.vs_identity > 0 ? pct(r.vs_identity) : "";
    if (r.target_vs_identity > 0) {
      vs += " (target " + pct(r.target_vs_identity) + (r.vs_identity >= r.target_vs_identity ? ", met)" : ", MISSED)");
    }
    emit("| " + r.kernel + " | " + r.name + " | " + r.dtype + " | " + std::to_string(r.head_dim) + " | " +
         std::to_string(r.block_size) + " | " + std::to_string(r.batch) + " | " + std::to_string(r.context) + " | " +
         std::to_string(r.q_heads) + "/" + std::to_string(r.kv_heads) + " | " + r.table + " | " + r.algo + " | " +
         fmt(r.t.median_ms, 4) + " | " + fmt(r.value, 3) + " " + r.unit + " | " + pct(r.of_copy) + " | " +
         pct(r.of_peak) + " | " + target + " | " + vs + " |\n");
    if (r.target > 0) {
      targets_.push_back({r.kernel + " " + r.name + ": " + r.target_text, fmt(r.value, 3) + " " + r.unit,
                          r.value >= r.target});
    }
    if (r.target_vs_identity > 0) {
      targets_.push_back({r.kernel + " " + r.name + ": paged >= " + pct(r.target_vs_identity) + " of identity",
                          pct(r.vs_identity), r.vs_identity >= r.target_vs_identity});
    }
  }

  // The target summary; returns how many targets were missed.
  int finish() {
    int missed = 0;
    std::string t = "\n### Targets\n\n| target | measured | result |\n|---|---|---|\n";
    for (const Target& x : targets_) {
      t += "| " + x.what + " | " + x.measured + " | " + (x.met ? "pass" : "MISS") + " |\n";
      missed += x.met ? 0 : 1;
    }
    emit(t);
    return missed;
  }

 private:
  struct Target {
    std::string what, measured;
    bool met = false;
  };

  void emit(const std::string& text) {
    std::cout << text << std::flush;
    if (md_.is_open()) md_ << text << std::flush;
  }

  std::ofstream csv_, md_;
  std::vector<Target> targets_;
};

bool gpu_required() {
  const char* v = std::getenv("PAGESIM_REQUIRE_GPU");
  return v != nullptr && *v != '\0' && std::string(v) != "0";
}

}  // namespace

int main(int argc, char** argv) {
  std::string csv, md, only;
  int repeats = 30;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "pagesim_kernels_bench: " << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--csv") csv = value();
    else if (arg == "--md") md = value();
    else if (arg == "--repeats") repeats = std::atoi(value().c_str());
    else if (arg == "--only") only = value();
    else if (arg == "--quick") quick = true;
    else {
      std::cerr << "pagesim_kernels_bench: unknown flag " << arg
                << " (expected --csv FILE, --md FILE, --repeats N, --only decode|prefill|latent, --quick)\n";
      return 2;
    }
  }
  if (repeats < 20) {
    std::cerr << "pagesim_kernels_bench: --repeats must be >= 20 (median of at least 20 runs)\n";
    return 2;
  }
  if (!only.empty() && only != "decode" && only != "prefill" && only != "latent") {
    std::cerr << "pagesim_kernels_bench: --only takes decode, prefill or latent, got " << only << "\n";
    return 2;
  }
  std::string why;
  if (!pk::cuda_device_available(&why)) {
    std::cout << "pagesim_kernels_bench: no CUDA device (" << why << "); nothing measured\n";
    return gpu_required() ? 1 : 0;
  }
  try {
    cudaDeviceProp prop{};
    cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    pb::StreamGate gate;
    Env env(repeats, gate);
    env.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
    env.flush_bytes = 2 * env.l2_bytes;
    Buffer flush(env.flush_bytes);
    env.flush_buf = flush.get();
    env.peaks = pb::spec_peaks(prop.name);
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    std::ostringstream header;
    header << "device: " << prop.name << ", " << prop.multiProcessorCount << " SMs, L2 " << (env.l2_bytes >> 20)
           << " MiB, " << (prop.totalGlobalMem >> 30) << " GiB; driver " << driver << ", runtime " << runtime
           << "; median of " << env.repeats << " runs, CUDA events behind a stream gate (device time only)";
    if (env.peaks.hbm_tbps > 0) {
      header << "; spec peaks (" << env.peaks.label << "): " << fmt(env.peaks.hbm_tbps, 2) << " TB/s, "
             << fmt(env.peaks.fp16_dense_tflops, 0) << " TFLOP/s dense fp16";
    }

    using pk::DType;
    const DType f16 = DType::kFloat16, bf16 = DType::kBFloat16;
    // Targets (issue #10): decode >= 90% of the measured copy bandwidth at b64 x 4k x 32
    // heads, >= 85% with GQA 32/8 and at b1 x 64k; prefill >= 300 TFLOP/s causal at 4k and
    // paged >= 95% of the identity table.
    std::vector<DecodeCase> decode = {
        {"b64 x 4k, MHA 32/32", f16, 128, 16, 64, 4096, 32, 32, 0.90, ""},
        {"b64 x 4k, GQA 32/8", f16, 128, 16, 64, 4096, 32, 8, 0.85, ""},
        {"b1 x 64k, MHA 32/32", f16, 128, 16, 1, 65536, 32, 32, 0.85, ""},
        // Tensor cores vs CUDA cores on the same shapes (--quick runs these too: tuning).
        {"b64 x 4k, GQA 32/8 (mma forced)", f16, 128, 16, 64, 4096, 32, 8, 0, "v2", "mma"},
        {"b64 x 4k, GQA 32/8 (simt forced)", f16, 128, 16, 64, 4096, 32, 8, 0, "v2", "simt"},
        {"b64 x 4k, GQA 32/16", f16, 128, 16, 64, 4096, 32, 16, 0, ""},
        {"b64 x 4k, GQA 32/16 (simt forced)", f16, 128, 16, 64, 4096, 32, 16, 0, "v2", "simt"},
        {"b64 x 4k, MHA (mma forced)", f16, 128, 16, 64, 4096, 32, 32, 0, "v2", "mma"},
        {"b1 x 64k, MHA (mma forced)", f16, 128, 16, 1, 65536, 32, 32, 0, "v2", "mma"},
        {"b1 x 64k, MHA 32/32 (v1 forced)", f16, 128, 16, 1, 65536, 32, 32, 0, "v1"},
        {"b64 x 4k, MHA (v1 forced)", f16, 128, 16, 64, 4096, 32, 32, 0, "v1"},
        {"b64 x 4k, MHA (v2 forced)", f16, 128, 16, 64, 4096, 32, 32, 0, "v2"},
        {"b1 x 64k, GQA 32/8", f16, 128, 16, 1, 65536, 32, 8, 0, ""},
        {"b256 x 1k, MHA", f16, 128, 16, 256, 1024, 32, 32, 0, ""},
        {"b8 x 16k, GQA 32/8", f16, 128, 16, 8, 16384, 32, 8, 0, ""},
        {"b64 x 4k, MHA, bf16", bf16, 128, 16, 64, 4096, 32, 32, 0, ""},
        {"b64 x 4k, MHA, block 8", f16, 128, 8, 64, 4096, 32, 32, 0, ""},
        {"b64 x 4k, MHA, block 32", f16, 128, 32, 64, 4096, 32, 32, 0, ""},
        {"b64 x 4k, MHA, d 64", f16, 64, 16, 64, 4096, 32, 32, 0, ""},
        {"b64 x 4k, MHA, d 256", f16, 256, 16, 64, 4096, 16, 16, 0, ""},
    };
    std::vector<PrefillCase> prefill = {
        {"1 x 4k causal, MHA 32/32", f16, 128, 16, 1, 4096, 0, 32, 32, 300, 0.95},
        // The mma.sync kernel on the same shapes, where the Hopper (wgmma) kernel runs.
        {"1 x 4k causal, MHA (mma forced)", f16, 128, 16, 1, 4096, 0, 32, 32, 0, 0, "mma"},
        {"1 x 8k causal", f16, 128, 16, 1, 8192, 0, 32, 32, 0, 0},
        {"1 x 8k causal (mma forced)", f16, 128, 16, 1, 8192, 0, 32, 32, 0, 0, "mma"},
        {"1 x 4k causal, GQA 32/8", f16, 128, 16, 1, 4096, 0, 32, 8, 0, 0},
        {"1 x 4k causal, bf16", bf16, 128, 16, 1, 4096, 0, 32, 32, 0, 0},
        {"4 x 2k causal", f16, 128, 16, 4, 2048, 0, 32, 32, 0, 0},
        {"16 x 512 causal", f16, 128, 16, 16, 512, 0, 32, 32, 0, 0},
        {"1 x 512 over 8k history", f16, 128, 16, 1, 512, 8192, 32, 8, 0, 0},
        {"1 x 4k causal, block 64", f16, 128, 64, 1, 4096, 0, 32, 32, 0, 0},
        {"1 x 4k causal, d 64", f16, 64, 16, 1, 4096, 0, 32, 32, 0, 0},
        {"1 x 4k causal, d 256", f16, 256, 16, 1, 4096, 0, 16, 16, 0, 0},
    };
    // Absorbed MLA decode (issue #43): >= 80% of copy at b64 x 4k with 128 heads (DeepSeek-V3
    // on one GPU; 16 heads is its share at TP 8), FlashMLA's 64-token pages.
    const DType fp8 = DType::kFloat8E4M3;
    std::vector<LatentCase> latent = {
        {"b64 x 4k, 128 heads", bf16, bf16, 64, 64, 4096, 128, 0.80},
        {"b64 x 4k, 128 heads, fp8", bf16, fp8, 64, 64, 4096, 128, 0.80},
        {"b1 x 64k, 128 heads", bf16, bf16, 64, 1, 65536, 128, 0},
        {"b64 x 4k, 16 heads (TP 8)", bf16, bf16, 64, 64, 4096, 16, 0},
        {"b128 x 2k, 128 heads, fp8", bf16, fp8, 64, 128, 2048, 128, 0},
        {"b64 x 4k, 128 heads, f16", f16, f16, 64, 64, 4096, 128, 0},
    };
    // The headline cases (the targets') come first, so a run cut off by a time limit has them:
    // the first three decode cases, then the first prefill case, then the rest. --quick keeps
    // the headline cases and the kernel comparisons after them.
    constexpr std::size_t kHeadlineDecode = 3, kHeadlinePrefill = 1, kQuickDecode = 9, kQuickPrefill = 4;
    if (quick) {
      decode.resize(kQuickDecode);
      prefill.resize(kQuickPrefill);
    }
    Report report(csv, md, header.str());
    const Row copy = copy_ceiling(env);
    env.copy_tbps = copy.value;
    report.add(copy);
    auto run_decodes = [&](std::size_t from, std::size_t to) {
      if (only == "prefill" || only == "latent") return;
      for (std::size_t i = from; i < std::min(to, decode.size()); ++i) {
        for (const Row& r : run_decode(decode[i], env)) report.add(r);
        std::cerr << "done: decode " << decode[i].name << "\n";
      }
    };
    auto run_latents = [&](std::size_t from, std::size_t to) {
      if (!only.empty() && only != "latent") return;
      for (std::size_t i = from; i < std::min(to, latent.size()); ++i) {
        for (const Row& r : run_latent(latent[i], env)) report.add(r);
        std::cerr << "done: mla decode " << latent[i].name << "\n";
      }
    };
    auto run_prefills = [&](std::size_t from, std::size_t to) {
      if (only == "decode" || only == "latent") return;
      for (std::size_t i = from; i < std::min(to, prefill.size()); ++i) {
        for (const Row& r : run_prefill(prefill[i], env)) report.add(r);
        std::cerr << "done: prefill " << prefill[i].name << "\n";
      }
    };
    run_decodes(0, kHeadlineDecode);
    run_prefills(0, kHeadlinePrefill);
    run_latents(0, 2);
    run_decodes(kHeadlineDecode, decode.size());
    run_prefills(kHeadlinePrefill, prefill.size());
    run_latents(2, quick ? 2 : latent.size());
    const int missed = report.finish();
    std::cerr << "targets missed: " << missed << "\n";
  } catch (const std::exception& e) {
    std::cerr << "pagesim_kernels_bench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
