#include "sim/profile/profile_measure.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/cuda/cuda_host.h"
#include "kernels/half.h"
#include "kernels/kv_layout.h"
#include "kernels/paged_attention.h"
#include "sim/profile/moe_kernels.h"

namespace pagesim::sim::detail {

namespace {

namespace pk = pagesim::kernels;

void cuda_check(cudaError_t e, const std::string& what) { pk::check_cuda(e, "profile", what); }

void cublas_check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(fmt::format("profile: {} failed: {}", what, cublasGetStatusString(s)));
  }
}

// kernels/cuda/cuda_host.h owns device and pinned memory everywhere.
using DeviceMemory = pk::DeviceBuffer;
using PinnedMemory = pk::PinnedBuffer;

class CublasHandle {
 public:
  CublasHandle() { cublas_check(cublasCreate(&h_), "cublasCreate"); }
  ~CublasHandle() { cublasDestroy(h_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// Random values in [-1, 1) of a 2-byte `dtype` (fp16 or bf16) over `bytes` of device memory:
// one random tile uploaded, then doubled on the device.
void fill_random(void* dst, std::size_t bytes, std::uint64_t seed, pk::DType dtype = pk::DType::kFloat16) {
  if (bytes < 2) return;
  const std::size_t tile = std::min<std::size_t>(bytes, std::size_t{16} << 20) & ~std::size_t{1};
  std::vector<std::uint16_t> host(tile / 2);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (std::uint16_t& h : host) {
    const float f = dist(rng);
    h = dtype == pk::DType::kBFloat16 ? pk::float_to_bf16_bits(f) : pk::float_to_half_bits(f);
  }
  char* d = static_cast<char*>(dst);
  cuda_check(cudaMemcpy(d, host.data(), tile, cudaMemcpyHostToDevice), "cudaMemcpy (fill)");
  for (std::size_t done = tile; done < bytes;) {
    const std::size_t n = std::min(done, bytes - done);
    cuda_check(cudaMemcpy(d + done, d, n, cudaMemcpyDeviceToDevice), "cudaMemcpy (fill)");
    done += n;
  }
}

// CUDA-event timing: warm-up runs, then the median of timed runs, each after an L2 flush.
class Timer {
 public:
  Timer(int warmup, int repeats, std::size_t flush_bytes)
      : warmup_(warmup), repeats_(repeats), flush_(flush_bytes) {
    cuda_check(cudaEventCreate(&start_), "cudaEventCreate");
    cuda_check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Median seconds of `enqueue` (which issues work on the default stream).
  template <class F>
  double median_seconds(F&& enqueue) {
    for (int i = 0; i < warmup_; ++i) enqueue();
    cuda_check(cudaDeviceSynchronize(), "warm-up");
    std::vector<double> seconds;
    for (int i = 0; i < repeats_; ++i) {
      cuda_check(cudaMemsetAsync(flush_.get(), i & 0xff, flush_.bytes()), "cudaMemsetAsync (L2 flush)");
      cuda_check(cudaEventRecord(start_), "cudaEventRecord");
      enqueue();
      cuda_check(cudaEventRecord(stop_), "cudaEventRecord");
      cuda_check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      cuda_check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      seconds.push_back(static_cast<double>(ms) * 1e-3);
    }
    std::sort(seconds.begin(), seconds.end());
    const std::size_t n = seconds.size();
    return n % 2 == 1 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  }

 private:
  int warmup_;
  int repeats_;
  DeviceMemory flush_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

std::int32_t to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) {
    throw std::runtime_error(fmt::format("profile: {} = {} exceeds int32", what, v));
  }
  return static_cast<std::int32_t>(v);
}

// out[rows, n] = in[rows, k] · W^T, W [n, k] row-major (column-major: C = W^T-op · X), in
// `type` (CUDA_R_16F or CUDA_R_16BF) with fp32 compute.
void gemm(cublasHandle_t h, const GemmShape& g, std::int64_t rows, const void* w, const void* in, void* out,
          cudaDataType_t type = CUDA_R_16F) {
  const float alpha = 1.f;
  const float beta = 0.f;
  const int n = to_int(g.n, "GEMM n");
  const int k = to_int(g.k, "GEMM k");
  cublas_check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, to_int(rows, "GEMM rows"), k, &alpha, w, type, k, in, type,
                            k, &beta, out, type, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

class PartClock {
 public:
  PartClock(std::ostream& progress, const char* part, std::size_t points) : progress_(progress) {
    progress_ << fmt::format("  {:<12} {:>4} points ... ", part, points) << std::flush;
  }
  void done() {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    progress_ << fmt::format("{:.1f} s\n", s) << std::flush;
  }

 private:
  std::ostream& progress_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void measure_linear(const ModelSpec& m, const ProfileGrid& g, Timer& timer, ProfileTimings& t,
                    std::ostream& progress) {
  // Dense layers run layer_gemms; MoE layers attention_gemms, its first two (their MLP is the
  // moe part). Only the weights some layer runs are allocated.
  const bool dense = m.layers > m.moe_layers;
  std::vector<GemmShape> layer = layer_gemms(m);
  if (!dense) layer = attention_gemms(m);
  const GemmShape lm = lm_head_gemm(m);
  std::int64_t in_elems = g.lm_head_seqs.back() * lm.k;
  std::int64_t out_elems = g.lm_head_seqs.back() * lm.n;
  for (const GemmShape& s : layer) {
    in_elems = std::max(in_elems, g.linear_tokens.back() * s.k);
    out_elems = std::max(out_elems, g.linear_tokens.back() * s.n);
  }
  DeviceMemory in(static_cast<std::size_t>(in_elems * 2));
  DeviceMemory out(static_cast<std::size_t>(out_elems * 2));
  fill_random(in.get(), in.bytes(), 11);
  std::vector<DeviceMemory> weights;
  weights.reserve(layer.size());
  for (std::size_t i = 0; i < layer.size(); ++i) {
    weights.emplace_back(static_cast<std::size_t>(layer[i].k * layer[i].n * 2));
    fill_random(weights.back().get(), weights.back().bytes(), 20 + i);
  }
  CublasHandle handle;
  auto time_gemms = [&](std::size_t count, std::vector<double>& into) {
    for (const std::int64_t rows : g.linear_tokens) {
      into.push_back(timer.median_seconds([&] {
        for (std::size_t i = 0; i < count; ++i) gemm(handle.get(), layer[i], rows, weights[i].get(), in.get(), out.get());
      }));
    }
  };
  const std::size_t layer_kinds = (dense ? 1u : 0u) + (m.moe_layers > 0 ? 1u : 0u);
  PartClock linear_clock(progress, "linear", layer_kinds * g.linear_tokens.size());
  if (dense) time_gemms(layer.size(), t.layer_linear);
  if (m.moe_layers > 0) time_gemms(2, t.moe_layer_linear);  // qkv, o_proj
  linear_clock.done();
  weights.clear();
  DeviceMemory lm_weight(static_cast<std::size_t>(lm.k * lm.n * 2));
  fill_random(lm_weight.get(), lm_weight.bytes(), 30);
  PartClock lm_clock(progress, "lm_head", g.lm_head_seqs.size());
  for (const std::int64_t rows : g.lm_head_seqs) {
    t.lm_head.push_back(timer.median_seconds([&] { gemm(handle.get(), lm, rows, lm_weight.get(), in.get(), out.get()); }));
  }
  lm_clock.done();
}

// One MoE block (profile_grid.h moe_layer_shape) on up to `max_tokens` tokens, in fp16 or
// bf16, as vLLM's fused MoE runs it (vllm/model_executor/layers/fused_moe/fused_moe.py
// fused_experts_impl: moe_align_block_size, the w1 grouped GEMM into intermediate_cache1,
// silu_and_mul, the w2 grouped GEMM with the routed weights, ops.moe_sum): the router GEMM,
// top-k softmax, the rows gathered in expert order, per expert with tokens cuBLAS gate_up,
// the activation over all rows, per expert cuBLAS down, the weighted combine. Routing is the
// even spread of moe_expert_tokens (the top-k kernel runs and its weights are used; its
// expert ids are not, so every run routes the same way). Shared experts: one dense MLP on
// every token, added in the combine (vllm/model_executor/models/llama4.py Llama4MoE.forward
// adds the shared expert's output to the routed one).
class MoeBench {
 public:
  MoeBench(const ModelSpec& m, std::int64_t max_tokens, pk::DType dtype, Timer& timer)
      : timer_(timer),
        s_(moe_layer_shape(m)),
        bf16_(dtype == pk::DType::kBFloat16),
        type_(bf16_ ? CUDA_R_16BF : CUDA_R_16F),
        hidden_(m.hidden),
        inter_(m.expert_ffn) {
    const std::int64_t rows = max_tokens * s_.top_k;  // expert rows at most
    const std::int64_t shared_width = s_.shared.empty() ? 0 : s_.shared[1].k;
    auto alloc = [&](DeviceMemory& d, std::int64_t elems, std::uint64_t seed) {
      d = DeviceMemory(static_cast<std::size_t>(std::max<std::int64_t>(elems, 1) * 2));
      fill_random(d.get(), d.bytes(), seed, dtype);
    };
    alloc(router_w_, s_.router.k * s_.router.n, 60);
    alloc(gate_up_w_, s_.experts * s_.expert_gate_up.k * s_.expert_gate_up.n, 61);
    alloc(down_w_, s_.experts * s_.expert_down.k * s_.expert_down.n, 62);
    if (!s_.shared.empty()) {
      alloc(shared_gate_up_w_, s_.shared[0].k * s_.shared[0].n, 63);
      alloc(shared_down_w_, s_.shared[1].k * s_.shared[1].n, 64);
    }
    alloc(x_, max_tokens * hidden_, 65);
    alloc(logits_, max_tokens * s_.experts, 66);
    alloc(gathered_, rows * hidden_, 67);
    alloc(gate_up_, rows * s_.expert_gate_up.n, 68);
    alloc(act_, rows * inter_, 69);
    alloc(down_, rows * hidden_, 70);
    alloc(out_, max_tokens * hidden_, 71);
    if (!s_.shared.empty()) {
      alloc(shared_gate_up_, max_tokens * s_.shared[0].n, 72);
      alloc(shared_act_, max_tokens * shared_width, 73);
      alloc(shared_out_, max_tokens * hidden_, 74);
    }
    ids_ = DeviceMemory(static_cast<std::size_t>(rows) * sizeof(std::int32_t));
    weights_ = DeviceMemory(static_cast<std::size_t>(rows) * sizeof(float));
    rows_ = DeviceMemory(static_cast<std::size_t>(rows) * sizeof(std::int32_t));
    slot_ = DeviceMemory(static_cast<std::size_t>(rows) * sizeof(std::int32_t));
  }

  // Median seconds of the block on `tokens` tokens: everything (`whole`), or only what
  // vLLM's FusedMoE layer runs given router logits (top-k, experts, combine), as
  // aiconfigurator's collector times it (collector/vllm/collect_moe.py: moe_module(
  // hidden_states, router_logits)); the router GEMM and shared experts are then left out.
  double seconds(std::int64_t tokens64, bool whole) {
    const std::int32_t tokens = to_int(tokens64, "MoE tokens");
    const std::int64_t k = s_.top_k, e_count = s_.experts;
    const std::vector<std::int64_t> per_expert = moe_expert_tokens(tokens64, k, e_count);
    std::vector<std::int64_t> offset(per_expert.size() + 1, 0);
    for (std::size_t e = 0; e < per_expert.size(); ++e) offset[e + 1] = offset[e] + per_expert[e];
    // Assignment a (token a / k) goes to expert a mod E, as its (a / E)-th row there.
    const std::int64_t assignments = tokens64 * k;
    std::vector<std::int32_t> rows(static_cast<std::size_t>(assignments)), slot(rows.size());
    for (std::int64_t a = 0; a < assignments; ++a) {
      const std::int64_t e = a % e_count;
      const std::int64_t at = offset[static_cast<std::size_t>(e)] + a / e_count;
      slot[static_cast<std::size_t>(a)] = static_cast<std::int32_t>(at);
      rows[static_cast<std::size_t>(at)] = static_cast<std::int32_t>(a / k);
    }
    if (!rows.empty()) {
      cuda_check(cudaMemcpy(rows_.get(), rows.data(), rows.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy (MoE rows)");
      cuda_check(cudaMemcpy(slot_.get(), slot.data(), slot.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy (MoE slots)");
    }
    const auto n_rows = static_cast<std::int32_t>(assignments);
    const auto at = [](const DeviceMemory& d, std::int64_t elems) { return d.get() + elems * 2; };
    const std::int64_t gu_n = s_.expert_gate_up.n;
    const std::int64_t gu_w = s_.expert_gate_up.k * gu_n, down_w = s_.expert_down.k * s_.expert_down.n;
    auto* ids = reinterpret_cast<std::int32_t*>(ids_.get());
    auto* weights = reinterpret_cast<float*>(weights_.get());
    const auto* rows_d = reinterpret_cast<const std::int32_t*>(rows_.get());
    const auto* slot_d = reinterpret_cast<const std::int32_t*>(slot_.get());
    const bool shared = whole && !s_.shared.empty();
    return timer_.median_seconds([&] {
      cublasHandle_t h = handle_.get();
      if (whole) gemm(h, s_.router, tokens, router_w_.get(), x_.get(), logits_.get(), type_);
      moe_topk_softmax(logits_.get(), tokens, to_int(e_count, "experts"), to_int(k, "top_k"), ids, weights, bf16_,
                       nullptr);
      moe_gather_rows(x_.get(), rows_d, n_rows, to_int(hidden_, "hidden"), gathered_.get(), nullptr);
      for (std::size_t e = 0; e < per_expert.size(); ++e) {
        if (per_expert[e] == 0) continue;
        const auto ei = static_cast<std::int64_t>(e);
        gemm(h, s_.expert_gate_up, per_expert[e], at(gate_up_w_, ei * gu_w), at(gathered_, offset[e] * hidden_),
             at(gate_up_, offset[e] * gu_n), type_);
      }
      moe_silu_and_mul(gate_up_.get(), n_rows, to_int(inter_, "expert_ffn"), s_.gated, act_.get(), bf16_, nullptr);
      for (std::size_t e = 0; e < per_expert.size(); ++e) {
        if (per_expert[e] == 0) continue;
        const auto ei = static_cast<std::int64_t>(e);
        gemm(h, s_.expert_down, per_expert[e], at(down_w_, ei * down_w), at(act_, offset[e] * inter_),
             at(down_, offset[e] * hidden_), type_);
      }
      if (shared) {
        gemm(h, s_.shared[0], tokens, shared_gate_up_w_.get(), x_.get(), shared_gate_up_.get(), type_);
        moe_silu_and_mul(shared_gate_up_.get(), tokens, to_int(s_.shared[1].k, "shared width"), s_.gated,
                         shared_act_.get(), bf16_, nullptr);
        gemm(h, s_.shared[1], tokens, shared_down_w_.get(), shared_act_.get(), shared_out_.get(), type_);
      }
      moe_combine(down_.get(), slot_d, weights, tokens, to_int(k, "top_k"), to_int(hidden_, "hidden"),
                  shared ? shared_out_.get() : nullptr, out_.get(), bf16_, nullptr);
    });
  }

 private:
  Timer& timer_;
  MoeLayerShape s_;
  bool bf16_;
  cudaDataType_t type_;
  std::int64_t hidden_, inter_;
  CublasHandle handle_;
  DeviceMemory router_w_, gate_up_w_, down_w_, shared_gate_up_w_, shared_down_w_;
  DeviceMemory x_, logits_, gathered_, gate_up_, act_, down_, out_, shared_gate_up_, shared_act_, shared_out_;
  DeviceMemory ids_, weights_, rows_, slot_;
};

void measure_moe(const ModelSpec& m, const ProfileGrid& g, Timer& timer, ProfileTimings& t, std::ostream& progress) {
  if (g.moe_tokens.empty()) return;
  MoeBench bench(m, g.moe_tokens.back(), pk::DType::kFloat16, timer);
  PartClock clock(progress, "moe", g.moe_tokens.size());
  for (const std::int64_t tokens : g.moe_tokens) t.moe_layer.push_back(bench.seconds(tokens, true));
  clock.done();
}

// A device copy of a small host vector.
template <class T>
DeviceMemory upload(const std::vector<T>& v) {
  DeviceMemory d(v.size() * sizeof(T));
  if (!v.empty()) cuda_check(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy (table)");
  return d;
}

// One layer's attention at the model's head counts over one KV pool of `dtype` (fp16 or
// bf16), for paged_prefill and paged_decode timings: K, V and the query random; sequence s of a
// batch owns pool blocks perm[s · per_seq ...], distinct and scattered.
class AttentionBench {
 public:
  // REQUIRES: pool_blocks covers every batch timed (seqs · ceil(length / block_size)),
  // query_rows every batch's query tokens.
  AttentionBench(const ModelSpec& m, pk::DType dtype, std::int32_t block_size, std::int64_t pool_blocks,
                 std::int64_t query_rows, Timer& timer)
      : timer_(timer),
        dtype_(dtype),
        qh_(to_int(m.heads_per_gpu(1), "query heads")),
        kvh_(to_int(m.kv_heads_per_gpu(1), "KV heads")),
        hd_(to_int(m.head_dim, "head_dim")),
        bs_(block_size),
        num_blocks_(to_int(pool_blocks, "KV pool blocks")) {
    const auto cache_bytes =
        static_cast<std::size_t>(pk::kv_cache_elements(num_blocks_, kvh_, block_size, hd_)) * pk::dtype_size(dtype);
    std::size_t free_bytes = 0, total_bytes = 0;
    cuda_check(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (2 * cache_bytes > free_bytes) {
      throw std::runtime_error(fmt::format(
          "profile: the KV pool of {} blocks of {} tokens needs {:.1f} GiB, {:.1f} GiB are free; lower "
          "--max-decode-seqs or --max-context",
          num_blocks_, block_size, 2.0 * static_cast<double>(cache_bytes) / (1 << 30),
          static_cast<double>(free_bytes) / (1 << 30)));
    }
    k_cache_ = DeviceMemory(cache_bytes);
    v_cache_ = DeviceMemory(cache_bytes);
    fill_random(k_cache_.get(), cache_bytes, 40, dtype);
    fill_random(v_cache_.get(), cache_bytes, 41, dtype);
    const std::size_t q_bytes = static_cast<std::size_t>(query_rows) * static_cast<std::size_t>(qh_ * hd_) * 2;
    query_ = DeviceMemory(q_bytes);
    out_ = DeviceMemory(q_bytes);
    fill_random(query_.get(), q_bytes, 42, dtype);
    perm_.resize(static_cast<std::size_t>(num_blocks_));
    std::iota(perm_.begin(), perm_.end(), 0);
    std::shuffle(perm_.begin(), perm_.end(), std::mt19937_64(43));
    base_.k_cache = pk::kv_cache_view(k_cache_.get(), dtype, pk::KvLayout::kHND, num_blocks_, kvh_, block_size, hd_);
    base_.v_cache = pk::kv_cache_view(v_cache_.get(), dtype, pk::KvLayout::kHND, num_blocks_, kvh_, block_size, hd_);
    base_.scale = 1.0f / std::sqrt(static_cast<float>(hd_));
  }

  std::int64_t blocks_for(std::int64_t tokens) const { return (tokens + bs_ - 1) / bs_; }

  // Median seconds of paged_prefill over `seqs` fresh prompts of `len` tokens.
  double prefill_seconds(std::int64_t seqs64, std::int64_t len64) {
    const std::int64_t per_seq = blocks_for(len64);
    const auto seqs = to_int(seqs64, "prefill sequences");
    const auto len = to_int(len64, "prefill length");
    const std::vector<std::int32_t> lens(static_cast<std::size_t>(seqs), len);
    std::vector<std::int32_t> starts(static_cast<std::size_t>(seqs) + 1);
    for (std::size_t s = 0; s < starts.size(); ++s) starts[s] = static_cast<std::int32_t>(s) * len;
    const DeviceMemory table = upload(table_for(seqs, per_seq));
    const DeviceMemory dlens = upload(lens);
    const DeviceMemory dstarts = upload(starts);
    pk::PagedAttentionArgs a = base_;
    const std::int64_t tokens = seqs64 * len64;
    a.query = pk::TensorView::contiguous(query_.get(), dtype_, {tokens, qh_, hd_});
    a.out = pk::TensorView::contiguous(out_.get(), dtype_, {tokens, qh_, hd_});
    a.block_table = pk::TensorView::contiguous(table.get(), pk::DType::kInt32, {seqs, per_seq});
    a.kv_lens = pk::TensorView::contiguous(dlens.get(), pk::DType::kInt32, {seqs});
    a.query_starts = pk::TensorView::contiguous(dstarts.get(), pk::DType::kInt32, {seqs + 1});
    const pk::PrefillPlan plan = pk::plan_prefill(pk::prefill_problem(a, len));
    return timer_.median_seconds([&] { pk::paged_prefill(a, plan, nullptr); });
  }

  // Median seconds of paged_decode (the planner's v1/v2) over `seqs` sequences of `context`
  // tokens, one query each.
  double decode_seconds(std::int64_t seqs64, std::int64_t context) {
    const auto seqs = to_int(seqs64, "decode sequences");
    const std::int64_t per_seq = blocks_for(context);
    const std::vector<std::int32_t> lens(static_cast<std::size_t>(seqs), to_int(context, "decode context"));
    const DeviceMemory table = upload(table_for(seqs, per_seq));
    const DeviceMemory dlens = upload(lens);
    pk::PagedAttentionArgs a = base_;
    a.query = pk::TensorView::contiguous(query_.get(), dtype_, {seqs, qh_, hd_});
    a.out = pk::TensorView::contiguous(out_.get(), dtype_, {seqs, qh_, hd_});
    a.block_table = pk::TensorView::contiguous(table.get(), pk::DType::kInt32, {seqs, per_seq});
    a.kv_lens = pk::TensorView::contiguous(dlens.get(), pk::DType::kInt32, {seqs});
    const pk::DecodeProblem problem = pk::decode_problem(a, lens);
    const pk::DecodePlan plan = pk::plan_decode(problem, pk::decode_device_caps(problem));
    const DeviceMemory workspace(plan.workspace_bytes);
    return timer_.median_seconds([&] { pk::paged_decode(a, plan, workspace.get(), workspace.bytes(), nullptr); });
  }

 private:
  std::vector<std::int32_t> table_for(std::int64_t seqs, std::int64_t per_seq) const {
    return std::vector<std::int32_t>(perm_.begin(), perm_.begin() + static_cast<std::ptrdiff_t>(seqs * per_seq));
  }

  Timer& timer_;
  pk::DType dtype_;
  std::int32_t qh_, kvh_, hd_, bs_, num_blocks_;
  DeviceMemory k_cache_, v_cache_, query_, out_;
  std::vector<std::int32_t> perm_;
  pk::PagedAttentionArgs base_;
};

void measure_attention(const ModelSpec& m, const ProfileGrid& g, std::int32_t block_size, Timer& timer,
                       ProfileTimings& t, std::ostream& progress) {
  auto blocks_for = [&](std::int64_t tokens) { return (tokens + block_size - 1) / block_size; };
  // One KV pool, big enough for the largest decode batch and the largest prefill batch.
  std::int64_t pool_blocks = g.decode_seqs.back() * blocks_for(g.decode_contexts.back());
  std::int64_t max_query_rows = g.decode_seqs.back();
  for (const PrefillComposition& c : g.prefill) {
    pool_blocks = std::max(pool_blocks, c.seqs * blocks_for(c.query_len));
    max_query_rows = std::max(max_query_rows, c.tokens());
  }
  AttentionBench bench(m, pk::DType::kFloat16, block_size, pool_blocks, max_query_rows, timer);

  PartClock prefill_clock(progress, "attn_prefill", g.prefill.size());
  for (const PrefillComposition& c : g.prefill) t.layer_prefill.push_back(bench.prefill_seconds(c.seqs, c.query_len));
  prefill_clock.done();

  PartClock decode_clock(progress, "attn_decode", g.decode_seqs.size() * g.decode_contexts.size());
  for (const std::int64_t seqs : g.decode_seqs)
    for (const std::int64_t context : g.decode_contexts) t.layer_decode.push_back(bench.decode_seconds(seqs, context));
  decode_clock.done();
}

void measure_swap(const ModelSpec& m, const ProfileGrid& g, Timer& timer, ProfileTimings& t, std::ostream& progress) {
  const std::size_t nb = g.swap_block_sizes.size();
  t.swap.assign(g.swap_blocks.size() * nb, 0.0);
  const std::int64_t max_blocks = g.swap_blocks.back();
  const auto layers = m.layers;
  PartClock clock(progress, "swap", t.swap.size());
  for (std::size_t j = 0; j < nb; ++j) {
    // One layer's K (or V) of one block; [K blocks | V blocks] on each side.
    const auto block_bytes =
        static_cast<std::size_t>(g.swap_block_sizes[j] * m.kv_heads_per_gpu(1) * m.head_dim * m.dtype_bytes);
    const std::size_t side = static_cast<std::size_t>(max_blocks) * block_bytes;
    DeviceMemory device(2 * side);
    PinnedMemory host(2 * side);
    fill_random(device.get(), 2 * side, 50);
    std::memset(host.get(), 0, 2 * side);
    std::vector<std::size_t> host_slot(static_cast<std::size_t>(max_blocks));
    std::iota(host_slot.begin(), host_slot.end(), std::size_t{0});
    std::shuffle(host_slot.begin(), host_slot.end(), std::mt19937_64(51));
    for (std::size_t i = 0; i < g.swap_blocks.size(); ++i) {
      const auto n = static_cast<std::size_t>(g.swap_blocks[i]);
      auto copies = [&](cudaMemcpyKind kind) {
        for (std::int64_t layer = 0; layer < layers; ++layer) {
          for (std::size_t kv = 0; kv < 2; ++kv) {
            for (std::size_t b = 0; b < n; ++b) {
              char* dev = device.get() + kv * side + b * block_bytes;
              char* hst = host.get() + kv * side + host_slot[b] * block_bytes;
              const bool out = kind == cudaMemcpyDeviceToHost;
              cuda_check(cudaMemcpyAsync(out ? hst : dev, out ? dev : hst, block_bytes, kind, nullptr),
                         "cudaMemcpyAsync (swap)");
            }
          }
        }
      };
      const double d2h = timer.median_seconds([&] { copies(cudaMemcpyDeviceToHost); });
      const double h2d = timer.median_seconds([&] { copies(cudaMemcpyHostToDevice); });
      t.swap[i * nb + j] = std::max(d2h, h2d);
    }
  }
  clock.done();
}

// The GEMM points of an operator check: one layer's GEMMs or the LM head, bf16. In a model
// with MoE layers a gemm_layer point is the mean layer, as the published tables' gemm time
// over the layers: dense layers' layer_gemms and MoE layers' qkv, o_proj, router and shared
// experts (operators_cost_model.h), each timed and weighted by its layer count.
void measure_operator_gemms(const ModelSpec& m, const std::vector<OperatorCheckPoint>& points, Timer& timer,
                            std::vector<double>& seconds, std::ostream& progress) {
  const std::int64_t dense_layers = m.layers - m.moe_layers;
  std::vector<GemmShape> dense = dense_layers > 0 ? layer_gemms(m) : std::vector<GemmShape>{};
  std::vector<GemmShape> moe;
  if (m.moe_layers > 0) {
    const MoeLayerShape s = moe_layer_shape(m);
    moe = attention_gemms(m);
    moe.push_back(s.router);
    moe.insert(moe.end(), s.shared.begin(), s.shared.end());
  }
  const GemmShape lm = lm_head_gemm(m);
  std::int64_t in_elems = 0, out_elems = 0;
  for (const OperatorCheckPoint& p : points) {
    if (p.op == CheckedOperator::kLmHead) {
      in_elems = std::max(in_elems, p.batch * lm.k);
      out_elems = std::max(out_elems, p.batch * lm.n);
    } else if (p.op == CheckedOperator::kGemmLayer) {
      for (const std::vector<GemmShape>* set : {&dense, &moe}) {
        for (const GemmShape& g : *set) {
          in_elems = std::max(in_elems, p.batch * g.k);
          out_elems = std::max(out_elems, p.batch * g.n);
        }
      }
    }
  }
  const auto bf16 = pk::DType::kBFloat16;
  DeviceMemory in(static_cast<std::size_t>(in_elems * 2)), out(static_cast<std::size_t>(out_elems * 2));
  fill_random(in.get(), in.bytes(), 11, bf16);
  auto weights_of = [&](const std::vector<GemmShape>& set, std::uint64_t seed) {
    std::vector<DeviceMemory> w;
    for (std::size_t i = 0; i < set.size(); ++i) {
      w.emplace_back(static_cast<std::size_t>(set[i].k * set[i].n * 2));
      fill_random(w.back().get(), w.back().bytes(), seed + i, bf16);
    }
    return w;
  };
  const std::vector<DeviceMemory> dense_w = weights_of(dense, 20), moe_w = weights_of(moe, 80);
  DeviceMemory lm_weight(static_cast<std::size_t>(lm.k * lm.n * 2));
  fill_random(lm_weight.get(), lm_weight.bytes(), 30, bf16);
  CublasHandle handle;
  auto time_set = [&](const std::vector<GemmShape>& set, const std::vector<DeviceMemory>& w, std::int64_t rows) {
    return timer.median_seconds([&] {
      for (std::size_t j = 0; j < set.size(); ++j)
        gemm(handle.get(), set[j], rows, w[j].get(), in.get(), out.get(), CUDA_R_16BF);
    });
  };
  PartClock clock(progress, "op gemms", points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const OperatorCheckPoint& p = points[i];
    if (p.op == CheckedOperator::kGemmLayer) {
      double total = 0;
      if (dense_layers > 0) total += static_cast<double>(dense_layers) * time_set(dense, dense_w, p.batch);
      if (m.moe_layers > 0) total += static_cast<double>(m.moe_layers) * time_set(moe, moe_w, p.batch);
      seconds[i] = total / static_cast<double>(m.layers);
    } else if (p.op == CheckedOperator::kLmHead) {
      seconds[i] = timer.median_seconds(
          [&] { gemm(handle.get(), lm, p.batch, lm_weight.get(), in.get(), out.get(), CUDA_R_16BF); });
    }
  }
  clock.done();
}

// The moe points of an operator check: one MoE block's fused experts given router logits
// (MoeBench::seconds, not whole), bf16.
void measure_operator_moe(const ModelSpec& m, const std::vector<OperatorCheckPoint>& points, Timer& timer,
                          std::vector<double>& seconds, std::ostream& progress) {
  std::int64_t max_tokens = 0;
  std::size_t count = 0;
  for (const OperatorCheckPoint& p : points) {
    if (p.op != CheckedOperator::kMoe) continue;
    max_tokens = std::max(max_tokens, p.batch);
    ++count;
  }
  if (count == 0) return;
  MoeBench bench(m, max_tokens, pk::DType::kBFloat16, timer);
  PartClock clock(progress, "op moe", count);
  for (std::size_t i = 0; i < points.size(); ++i)
    if (points[i].op == CheckedOperator::kMoe) seconds[i] = bench.seconds(points[i].batch, false);
  clock.done();
}

}  // namespace

std::vector<double> measure_operator_points(const ModelSpec& model, const std::vector<OperatorCheckPoint>& points,
                                            std::int32_t block_size, int warmup, int repeats,
                                            std::ostream& progress) {
  ProfileDevice device;
  std::string why;
  if (!profile_device(&device, &why)) throw std::runtime_error("profile: no usable CUDA device (" + why + ")");
  Timer timer(warmup, repeats, static_cast<std::size_t>(std::max<std::int64_t>(2 * device.l2_bytes, 64 << 20)));
  std::vector<double> seconds(points.size(), 0.0);
  measure_operator_gemms(model, points, timer, seconds, progress);
  measure_operator_moe(model, points, timer, seconds, progress);
  std::int64_t pool_blocks = 1, query_rows = 1;
  for (const OperatorCheckPoint& p : points) {
    if (p.op != CheckedOperator::kContextAttention && p.op != CheckedOperator::kGenerationAttention) continue;
    pool_blocks = std::max(pool_blocks, p.batch * ((p.length + block_size - 1) / block_size));
    query_rows = std::max(query_rows, p.op == CheckedOperator::kContextAttention ? p.batch * p.length : p.batch);
  }
  AttentionBench bench(model, pk::DType::kBFloat16, block_size, pool_blocks, query_rows, timer);
  PartClock clock(progress, "op attention", points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const OperatorCheckPoint& p = points[i];
    if (p.op == CheckedOperator::kContextAttention) seconds[i] = bench.prefill_seconds(p.batch, p.length);
    if (p.op == CheckedOperator::kGenerationAttention) seconds[i] = bench.decode_seconds(p.batch, p.length);
  }
  clock.done();
  return seconds;
}

std::string ProfileDevice::describe() const {
  return fmt::format("{} (sm_{}{}, {} SMs, {:.1f} GiB, L2 {} MiB, driver {}.{}, runtime {}.{})", name, cc_major,
                     cc_minor, sms, static_cast<double>(memory_bytes) / (1 << 30), l2_bytes >> 20,
                     driver_version / 1000, driver_version % 1000 / 10, runtime_version / 1000,
                     runtime_version % 1000 / 10);
}

bool profile_device(ProfileDevice* device, std::string* why) {
  if (!pk::cuda_device_available(why)) return false;
  int id = 0;
  cuda_check(cudaGetDevice(&id), "cudaGetDevice");
  cudaDeviceProp p{};
  cuda_check(cudaGetDeviceProperties(&p, id), "cudaGetDeviceProperties");
  device->name = p.name;
  device->cc_major = p.major;
  device->cc_minor = p.minor;
  device->sms = p.multiProcessorCount;
  device->memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
  device->l2_bytes = p.l2CacheSize;
  cuda_check(cudaDriverGetVersion(&device->driver_version), "cudaDriverGetVersion");
  cuda_check(cudaRuntimeGetVersion(&device->runtime_version), "cudaRuntimeGetVersion");
  return true;
}

ProfileTimings measure_profile(const ModelSpec& model, const ProfileGrid& grid, const ProfileGridOptions& grid_options,
                               int warmup, int repeats, std::ostream& progress) {
  if (model.dtype_bytes != 2) {
    throw std::runtime_error(fmt::format("profile: model {} has {}-byte elements; only fp16 (2) is timed", model.name,
                                         model.dtype_bytes));
  }
  ProfileDevice device;
  std::string why;
  if (!profile_device(&device, &why)) throw std::runtime_error("profile: no usable CUDA device (" + why + ")");
  Timer timer(warmup, repeats, static_cast<std::size_t>(std::max<std::int64_t>(2 * device.l2_bytes, 64 << 20)));
  ProfileTimings t;
  measure_linear(model, grid, timer, t, progress);
  measure_moe(model, grid, timer, t, progress);
  measure_attention(model, grid, grid_options.block_size, timer, t, progress);
  measure_swap(model, grid, timer, t, progress);
  return t;
}

}  // namespace pagesim::sim::detail
