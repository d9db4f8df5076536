// IterationSample: the state of one iteration, taken at scheduling time after admission
// (the vLLM paper's method): the batch, the queues and where every KV slot is. One row of
// iterations.csv; its columns come from RecordFields<IterationSample> below.
#pragma once

#include <cstdint>
#include <tuple>

#include "allocator/memory_breakdown.h"
#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct IterationSample {
  std::int64_t index = 0;          // iteration number, from 0
  double start_s = 0;              // virtual time the iteration starts
  double duration_s = 0;           // compute + swap time
  std::int64_t batch_requests = 0; // requests (sequence groups) in the batch
  std::int64_t batch_seqs = 0;     // sequences in the batch (decoding + prefilling)
  std::int64_t prefill_tokens = 0; // tokens whose KV the prefill chunks compute
  std::int64_t decode_tokens = 0;  // one per decoding sequence
  std::int64_t waiting = 0;        // queue lengths after scheduling
  std::int64_t running = 0;
  std::int64_t swapped = 0;
  alloc::MemoryBreakdown memory;   // slots by class
  std::int64_t unusable_free = 0;  // free slots the waiting head could not use
  std::int64_t logical_blocks = 0; // paged: Σ block-table lengths (0 for contiguous)
  std::int64_t physical_blocks = 0;// paged: distinct blocks in use
  std::int64_t swap_out_blocks = 0;
  std::int64_t swap_in_blocks = 0;
  std::int32_t preemptions = 0;
};

// The allocator's breakdown as a nested record: its columns are the breakdown's own names.
template <>
struct RecordFields<alloc::MemoryBreakdown> {
  static constexpr const auto& fields = alloc::kMemoryBreakdownFields;
};

// iterations.csv's columns, in order.
template <>
struct RecordFields<IterationSample> {
  using S = IterationSample;
  static constexpr auto fields = std::tuple{
      Field{"index", &S::index},
      Field{"start_s", &S::start_s},
      Field{"duration_s", &S::duration_s},
      Field{"batch_requests", &S::batch_requests},
      Field{"batch_seqs", &S::batch_seqs},
      Field{"prefill_tokens", &S::prefill_tokens},
      Field{"decode_tokens", &S::decode_tokens},
      Field{"waiting", &S::waiting},
      Field{"running", &S::running},
      Field{"swapped", &S::swapped},
      Field{"memory", &S::memory},  // token_states, ..., cached_free
      Field{"unusable_free", &S::unusable_free},
      Field{"logical_blocks", &S::logical_blocks},
      Field{"physical_blocks", &S::physical_blocks},
      Field{"swap_out_blocks", &S::swap_out_blocks},
      Field{"swap_in_blocks", &S::swap_in_blocks},
      Field{"preemptions", &S::preemptions},
  };
};
static_assert(lists_every_member<IterationSample>());

}  // namespace pagesim::sim
