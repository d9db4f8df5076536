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
  const std::vector<GemmShape> layer = layer_gemms(m);
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
  PartClock linear_clock(progress, "linear", g.linear_tokens.size());
  for (const std::int64_t rows : g.linear_tokens) {
    t.layer_linear.push_back(timer.median_seconds([&] {
      for (std::size_t i = 0; i < layer.size(); ++i) gemm(handle.get(), layer[i], rows, weights[i].get(), in.get(), out.get());
    }));
  }
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

// The GEMM points of an operator check: one layer's GEMMs or the LM head, bf16.
void measure_operator_gemms(const ModelSpec& m, const std::vector<OperatorCheckPoint>& points, Timer& timer,
                            std::vector<double>& seconds, std::ostream& progress) {
  const std::vector<GemmShape> layer = layer_gemms(m);
  const GemmShape lm = lm_head_gemm(m);
  std::int64_t in_elems = 0, out_elems = 0;
  for (const OperatorCheckPoint& p : points) {
    if (p.op == CheckedOperator::kLmHead) {
      in_elems = std::max(in_elems, p.batch * lm.k);
      out_elems = std::max(out_elems, p.batch * lm.n);
    } else if (p.op == CheckedOperator::kGemmLayer) {
      for (const GemmShape& g : layer) {
        in_elems = std::max(in_elems, p.batch * g.k);
        out_elems = std::max(out_elems, p.batch * g.n);
      }
    }
  }
  const auto bf16 = pk::DType::kBFloat16;
  DeviceMemory in(static_cast<std::size_t>(in_elems * 2)), out(static_cast<std::size_t>(out_elems * 2));
  fill_random(in.get(), in.bytes(), 11, bf16);
  std::vector<DeviceMemory> weights;
  for (std::size_t i = 0; i < layer.size(); ++i) {
    weights.emplace_back(static_cast<std::size_t>(layer[i].k * layer[i].n * 2));
    fill_random(weights.back().get(), weights.back().bytes(), 20 + i, bf16);
  }
  DeviceMemory lm_weight(static_cast<std::size_t>(lm.k * lm.n * 2));
  fill_random(lm_weight.get(), lm_weight.bytes(), 30, bf16);
  CublasHandle handle;
  PartClock clock(progress, "op gemms", points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    const OperatorCheckPoint& p = points[i];
    if (p.op == CheckedOperator::kGemmLayer) {
      seconds[i] = timer.median_seconds([&] {
        for (std::size_t j = 0; j < layer.size(); ++j)
          gemm(handle.get(), layer[j], p.batch, weights[j].get(), in.get(), out.get(), CUDA_R_16BF);
      });
    } else if (p.op == CheckedOperator::kLmHead) {
      seconds[i] = timer.median_seconds(
          [&] { gemm(handle.get(), lm, p.batch, lm_weight.get(), in.get(), out.get(), CUDA_R_16BF); });
    }
  }
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
  measure_attention(model, grid, grid_options.block_size, timer, t, progress);
  measure_swap(model, grid, timer, t, progress);
  return t;
}

}  // namespace pagesim::sim::detail
