#include "sim/validate/batch_sampler.h"

#include <algorithm>
#include <limits>


namespace pagesim::sim {

BatchSampler::BatchSampler(const BatchSamplerSettings& settings, const alloc::KvAllocator& allocator,
                           const std::filesystem::path& path, const std::string& experiment)
    : settings_(settings), alloc_(allocator), file_(std::make_unique<AtomicFile>(path)) {
  BatchFileHeader h;
  h.block_size = allocator.block_size();
  h.num_blocks = allocator.block_id_space();
  const alloc::KvAllocator::KernelTable kernel = allocator.kernel_table();
  if (kernel.keep != alloc::LayerGroupKind::kFull) {
    h.mask.kind = kernel.keep == alloc::LayerGroupKind::kSlidingWindow ? kernels::MaskKind::kSlidingWindow
                                                                        : kernels::MaskKind::kChunkedLocal;
    h.mask.window = static_cast<std::int32_t>(kernel.window_tokens);
  }
  h.latent_dim = settings.latent_dim;
  h.value_dim = settings.value_dim;
  h.allocator = allocator.name();
  h.experiment = experiment;
  file_->stream() << to_json_line(h) << '\n';
}

void BatchSampler::on_admitted(const Request& r, alloc::SeqId seq) {
  lineage_[seq] = {Branch{r.prompt_tokens, next_branch_++}};
}

void BatchSampler::on_forked(const Request&, alloc::SeqId parent, alloc::SeqId child) {
  const std::int64_t at = alloc_.sequence_tokens(parent);
  std::vector<Branch> shared = lineage_.at(parent);
  lineage_[parent].push_back(Branch{at, next_branch_++});
  shared.push_back(Branch{at, next_branch_++});
  lineage_[child] = std::move(shared);
}

void BatchSampler::on_freed(alloc::SeqId seq) { lineage_.erase(seq); }

SampledSequence BatchSampler::describe(const Request& r, alloc::SeqId seq, std::int64_t query_len) const {
  SampledSequence s;
  s.request = r.id;
  s.seq = seq;
  s.kv_len = alloc_.sequence_tokens(seq);
  s.query_len = query_len;
  const std::vector<alloc::BlockId> table = alloc_.kernel_block_table(seq);
  s.block_table.assign(table.begin(), table.end());
  const std::int64_t block_size = alloc_.block_size();
  const std::string prompt = "p" + std::to_string(r.id);
  const std::int64_t prompt_end = std::min(r.prompt_tokens, s.kv_len);
  std::int64_t pos = 0;
  // Full blocks with a prefix-cache key: named by the key (the paged block size is B).
  for (std::size_t i = 0; i < r.block_hashes.size(); ++i) {
    const std::int64_t len = std::min<std::int64_t>(block_size, prompt_end - pos);
    if (len <= 0) break;
    s.tokens.push_back({pos, len, "h" + std::to_string(r.block_hashes[i]), 0});
    pos += len;
  }
  if (pos < prompt_end) {
    s.tokens.push_back({pos, prompt_end - pos, prompt, pos});
    pos = prompt_end;
  }
  const std::vector<Branch>& branches = lineage_.at(seq);
  for (std::size_t i = 0; i < branches.size() && pos < s.kv_len; ++i) {
    const std::int64_t end = i + 1 < branches.size() ? branches[i + 1].start : s.kv_len;
    const std::int64_t stop = std::min(end, s.kv_len);
    if (stop > pos) {
      s.tokens.push_back({pos, stop - pos, "b" + std::to_string(branches[i].id), pos});
      pos = stop;
    }
  }
  return s;
}

SampledBatch BatchSampler::sample(std::int64_t iteration, double time_s, const IterationPlan& plan) const {
  SampledBatch b;
  b.iteration = iteration;
  b.time_s = time_s;
  for (const PrefillWork& p : plan.prefills) b.sequences.push_back(describe(*p.request, p.request->seqs.front().id, p.new_tokens));
  for (const Request* r : plan.decodes)
    for (const alloc::SeqHandle& s : r->seqs) b.sequences.push_back(describe(*r, s.id, 1));
  return b;
}

void BatchSampler::on_iteration(const IterationSample& s, const IterationPlan& plan) {
  if (settings_.every_n_iterations <= 0 || written_ >= settings_.max_batches) return;
  if (s.index % settings_.every_n_iterations != 0) return;
  file_->stream() << to_json_line(sample(s.index, s.start_s, plan)) << '\n';
  ++written_;
}

std::int64_t BatchSampler::decode_run_limit(std::int32_t, std::int64_t index) const {
  const std::int64_t n = settings_.every_n_iterations;
  if (n <= 0 || written_ >= settings_.max_batches) return std::numeric_limits<std::int64_t>::max();
  return (n - index % n) % n;  // iterations before the next multiple of n (0: index itself)
}

void BatchSampler::finish() { file_->commit(); }

}  // namespace pagesim::sim
