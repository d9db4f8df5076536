// BatchSampler: writes every Nth iteration's batch, with the identity of every token, to a
// batches.jsonl file for `pagesim validate` (format: sampled_batch.h).
//
// An IterationObserver of the simulation (it samples at scheduling time) and the
// scheduler's SequenceObserver: as the latter it follows each allocator sequence's lineage: a sequence starts
// with its request's prompt and one branch for the tokens it generates; a fork gives parent
// and child each a new branch from the fork point on, so tokens before the fork share their
// identity and tokens after it do not. Prompt tokens are "p<request>" — or "h<hash>" inside
// full blocks that carry a prefix-cache key, so a cached block means the same tokens to
// every request that hits it. Block tables come from the allocator in its own block size
// (paged: its blocks; contiguous: the range, in blocks of the buddy unit or of 1 slot;
// vattention: its contiguous virtual view, 1 token per id). A layer-group pool (hybrid,
// jenga) with a sliding-window or chunked table is sampled in that table — the one whose
// freed blocks a kernel must not read — and the header carries its mask; otherwise in the
// allocator's block_table() (its first full-attention table): KvAllocator::kernel_table()
// and kernel_block_table() say which, so the sampler needs no knowledge of the policy.
// Borrowed allocator; owns its output file (committed by finish()). Not thread-safe.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <unordered_map>
#include <vector>

#include "allocator/kv_allocator.h"
#include "sim/core/iteration_observer.h"
#include "sim/core/iteration_plan.h"
#include "sim/core/sequence_observer.h"
#include "sim/output/atomic_file.h"
#include "sim/validate/sampled_batch.h"

namespace pagesim::sim {

struct BatchSamplerSettings {
  std::int64_t every_n_iterations = 0;  // sample iterations 0, N, 2N, ...; 0 = never
  std::int64_t max_batches = 32;        // stop after this many batches
  // An MLA model's latent row (kernels/latent_args.h; 0: standard attention), written to the
  // header so that `pagesim validate` runs the latent kernel on the batches.
  std::int32_t latent_dim = 0;
  std::int32_t value_dim = 0;
};

class BatchSampler final : public SequenceObserver, public IterationObserver {
 public:
  // Creates `path` (atomically, on finish()). `experiment` names the run in the header.
  BatchSampler(const BatchSamplerSettings& settings, const alloc::KvAllocator& allocator,
               const std::filesystem::path& path, const std::string& experiment);

  void on_admitted(const Request& r, alloc::SeqId seq) override;
  void on_forked(const Request& r, alloc::SeqId parent, alloc::SeqId child) override;
  void on_freed(alloc::SeqId seq) override;

  // Samples iteration s.index if it is due.
  void on_iteration(const IterationSample& s, const IterationPlan& plan) override;
  // A sampled iteration reads the allocator's block tables and the requests' tokens: a decode
  // run stops before it.
  std::int64_t decode_run_limit(std::int32_t replica, std::int64_t index) const override;
  // The batch `plan` describes, as sampled (also used by tests).
  SampledBatch sample(std::int64_t iteration, double time_s, const IterationPlan& plan) const;
  std::int64_t batches_written() const { return written_; }
  std::int32_t block_size() const { return alloc_.block_size(); }
  // Flushes and renames the file into place.
  void finish();

 private:
  struct Branch {
    std::int64_t start;  // first position this branch names
    std::uint64_t id;
  };
  SampledSequence describe(const Request& r, alloc::SeqId seq, std::int64_t query_len) const;

  BatchSamplerSettings settings_;
  const alloc::KvAllocator& alloc_;
  std::unordered_map<alloc::SeqId, std::vector<Branch>> lineage_;
  std::uint64_t next_branch_ = 0;
  std::unique_ptr<AtomicFile> file_;
  std::int64_t written_ = 0;
};

}  // namespace pagesim::sim
