// IterationSample: the state of one iteration, taken at scheduling time after admission
// (the vLLM paper's method): the batch, the queues and where every KV slot is.
#pragma once

#include <cstdint>

#include "allocator/memory_breakdown.h"

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

}  // namespace pagesim::sim
