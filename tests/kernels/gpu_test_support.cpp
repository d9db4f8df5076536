#include "gpu_test_support.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/reference_attention.h"

namespace pagesim::kernels::testing {

bool cuda_device_available(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why != nullptr) *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e);
    cudaGetLastError();
    return false;
  }
  if (n == 0) {
    if (why != nullptr) *why = "cudaGetDeviceCount reported 0 devices";
    return false;
  }
  return true;
}

void cuda_ok(int status, const char* what) {
  const auto e = static_cast<cudaError_t>(status);
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  cuda_ok(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}
void DeviceBuffer::upload(const void* src, std::size_t n) {
  cuda_ok(cudaMemcpy(ptr_, src, n, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
void DeviceBuffer::download(void* dst, std::size_t n) const {
  cuda_ok(cudaMemcpy(dst, ptr_, n, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}
void DeviceBuffer::fill_bytes(int value) { cuda_ok(cudaMemset(ptr_, value, bytes_), "cudaMemset"); }

namespace {
std::size_t out_bytes(const AttentionProblem& p) {
  return dtype_size(p.spec().dtype) * static_cast<std::size_t>(p.num_query_tokens()) *
         static_cast<std::size_t>(p.spec().num_q_heads) * static_cast<std::size_t>(p.spec().head_dim);
}
}  // namespace

DeviceProblem::DeviceProblem(const AttentionProblem& p)
    : p_(p),
      query_(DeviceBuffer::from(p.query_bytes())),
      k_cache_(DeviceBuffer::from(p.k_cache_bytes())),
      v_cache_(DeviceBuffer::from(p.v_cache_bytes())),
      table_(DeviceBuffer::from(p.batch().block_table)),
      kv_lens_(DeviceBuffer::from(p.batch().kv_lens)),
      query_starts_(DeviceBuffer::from(p.batch().query_starts)),
      alibi_(DeviceBuffer::from(p.alibi_slopes())),
      out_(std::max<std::size_t>(out_bytes(p), 16)) {
  poison_output();
}

void DeviceProblem::poison_output() { out_.fill_bytes(0xFF); }

PagedAttentionArgs DeviceProblem::args() const {
  // Host views re-pointed at the device copies.
  PagedAttentionArgs a = p_.paged_args(TensorView::contiguous(
      out_.get(), p_.spec().dtype, {p_.num_query_tokens(), p_.spec().num_q_heads, p_.spec().head_dim}));
  a.query.data = query_.get();
  a.k_cache.data = k_cache_.get();
  a.v_cache.data = v_cache_.get();
  a.block_table.data = table_.get();
  a.kv_lens.data = kv_lens_.get();
  if (!a.query_starts.empty()) a.query_starts.data = query_starts_.get();
  if (!a.alibi_slopes.empty()) a.alibi_slopes.data = alibi_.get();
  return a;
}

TensorView DeviceProblem::download_output(std::vector<std::byte>& storage) const {
  storage.resize(std::max<std::size_t>(out_bytes(p_), 16));
  cuda_ok(cudaDeviceSynchronize(), "kernel execution");
  out_.download(storage.data(), out_bytes(p_));
  return TensorView::contiguous(storage.data(), p_.spec().dtype,
                                {p_.num_query_tokens(), p_.spec().num_q_heads, p_.spec().head_dim});
}

std::vector<float> dense_reference(const AttentionProblem& p) {
  std::vector<float> ref(std::max<std::size_t>(
      static_cast<std::size_t>(p.num_query_tokens() * p.spec().num_q_heads * p.spec().head_dim), 1));
  reference_dense_attention(p.dense_args(reference_view(p, ref)));
  return ref;
}

TensorView reference_view(const AttentionProblem& p, std::vector<float>& ref) {
  return TensorView::contiguous(ref.data(), DType::kFloat32,
                                {p.num_query_tokens(), p.spec().num_q_heads, p.spec().head_dim});
}

std::string kernel_grid_name(const ::testing::TestParamInfo<KernelGridParam>& info) {
  const auto [t, d, b, g] = info.param;
  return std::string(dtype_name(t)) + "_d" + std::to_string(d) + "_b" + std::to_string(b) + "_g" + std::to_string(g);
}

std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info) { return dtype_name(info.param); }

ProblemSpec grid_spec(const KernelGridParam& point) {
  const auto [dtype, d, bs, group] = point;
  ProblemSpec spec;
  spec.dtype = dtype;
  spec.head_dim = d;
  spec.block_size = bs;
  spec.num_kv_heads = 2;
  spec.num_q_heads = 2 * group;
  spec.query_magnitude = 2;
  spec.seed = static_cast<std::uint64_t>(d * 1000 + bs * 10 + group);
  return spec;
}

void expect_matches_reference(const TensorView& out, const TensorView& ref, DType dtype, const std::string& label) {
  Comparison c;
  const bool ok = within(out, ref, tolerance_for(dtype), &c);
  EXPECT_TRUE(ok) << label << ": max |err| " << c.max_abs_error << " (max |ref| " << c.max_ref << "), rel L2 "
                  << c.rel_l2_error << ", non-finite " << c.nonfinite << ", worst element " << c.worst_index;
}

}  // namespace pagesim::kernels::testing
