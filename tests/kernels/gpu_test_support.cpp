#include "gpu_test_support.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/kv_layout.h"
#include "kernels/reference_attention.h"

namespace pagesim::kernels::testing {

namespace {
std::size_t out_bytes(const AttentionProblem& p) {
  return dtype_size(p.spec().dtype) * static_cast<std::size_t>(p.num_query_tokens()) *
         static_cast<std::size_t>(p.spec().num_q_heads) * static_cast<std::size_t>(p.spec().head_dim);
}
}  // namespace

DeviceProblem::DeviceProblem(const AttentionProblem& p)
    : p_(p),
      query_(device_copy(p.query_bytes())),
      k_cache_(device_copy(p.k_cache_bytes())),
      v_cache_(device_copy(p.v_cache_bytes())),
      table_(device_copy(p.batch().block_table)),
      kv_lens_(device_copy(p.batch().kv_lens)),
      query_starts_(device_copy(p.batch().query_starts)),
      alibi_(device_copy(p.alibi_slopes())),
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

void DeviceProblem::upload_block_table(const std::vector<std::int32_t>& table) {
  if (table.size() != p_.batch().block_table.size())
    throw std::invalid_argument("upload_block_table: " + std::to_string(table.size()) + " entries, the problem has " +
                                std::to_string(p_.batch().block_table.size()));
  table_.upload(table.data(), table.size() * sizeof(std::int32_t));
}

std::vector<std::int32_t> freed_block_table(const AttentionProblem& p) {
  const PackedBatch& b = p.batch();
  std::vector<std::int32_t> table = b.block_table;
  for (std::int32_t s = 0; s < b.num_seqs; ++s) {
    const auto i = static_cast<std::size_t>(s);
    const std::int64_t q = p.decode() ? 1 : b.query_starts[i + 1] - b.query_starts[i];
    const BlockRange r = attended_blocks(p.spec().mask, b.kv_lens[i], q, p.spec().block_size);
    for (std::int64_t blk = 0; blk < r.first; ++blk)
      table[static_cast<std::size_t>(s * b.max_blocks_per_seq + blk)] = -1;
  }
  return table;
}

TensorView DeviceProblem::download_output(std::vector<std::byte>& storage) const {
  storage.resize(std::max<std::size_t>(out_bytes(p_), 16));
  check_cuda(cudaDeviceSynchronize(), "test", "kernel execution");
  out_.download(storage.data(), out_bytes(p_));
  return TensorView::contiguous(storage.data(), p_.spec().dtype,
                                {p_.num_query_tokens(), p_.spec().num_q_heads, p_.spec().head_dim});
}

LargeCaches large_caches(const AttentionProblem& p, std::int32_t total_blocks) {
  const ProblemSpec& s = p.spec();
  LargeCaches c;
  c.base = total_blocks - p.num_blocks();
  const std::size_t block_bytes = p.k_cache_bytes().size() / static_cast<std::size_t>(p.num_blocks());
  const std::size_t bytes = block_bytes * static_cast<std::size_t>(total_blocks);
  c.k = DeviceBuffer(bytes);
  c.v = DeviceBuffer(bytes);
  const std::size_t small = p.k_cache_bytes().size();
  check_cuda(cudaMemcpy(c.k.get() + (bytes - small), p.k_cache_bytes().data(), small, cudaMemcpyHostToDevice), "test",
             "upload K to the top of the large cache");
  check_cuda(cudaMemcpy(c.v.get() + (bytes - small), p.v_cache_bytes().data(), small, cudaMemcpyHostToDevice), "test",
             "upload V to the top of the large cache");
  c.k_view = kv_cache_view(c.k.get(), s.dtype, s.layout, total_blocks, s.num_kv_heads, s.block_size, s.head_dim);
  c.v_view = kv_cache_view(c.v.get(), s.dtype, s.layout, total_blocks, s.num_kv_heads, s.block_size, s.head_dim);
  return c;
}

std::vector<std::int32_t> shifted_block_table(const AttentionProblem& p, std::int32_t base) {
  std::vector<std::int32_t> table = p.batch().block_table;
  for (std::int32_t& b : table) b = b < 0 ? b : b + base;
  return table;
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

std::string mask_param_name(const ::testing::TestParamInfo<MaskParam>& info) {
  const auto [dtype, kind, window] = info.param;
  return std::string(dtype_name(dtype)) + (kind == MaskKind::kSlidingWindow ? "_window" : "_chunk") +
         std::to_string(window);
}

ProblemSpec mask_spec(const MaskParam& point) {
  const auto [dtype, kind, window] = point;
  ProblemSpec spec;
  spec.dtype = dtype;
  spec.head_dim = 128;
  spec.block_size = 16;
  spec.num_q_heads = 8;
  spec.num_kv_heads = 2;
  spec.mask = {kind, window};
  return spec;
}

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
