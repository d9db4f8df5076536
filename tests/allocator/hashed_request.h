// Test support for the hand-computed prefix-cache cases: the AdmitRequest of a prompt given
// by the chained hashes of its full blocks, every other field at its default. Stateless.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "allocator/kv_allocator.h"

namespace pagesim::alloc::test_support {

// Sequence `seq` with a prompt of `prompt` tokens whose full blocks hash to `hashes` (empty:
// no prefix caching), `output` tokens to generate, and at most `max_new_tokens` of the prompt
// held at admission (chunked prefill). REQUIRES: what `hashes` views outlives the request's
// use (prompt_block_hashes is that view).
inline AdmitRequest hashed_request(SeqId seq, std::int64_t prompt, std::span<const BlockHash> hashes,
                                   std::int64_t output,
                                   std::int64_t max_new_tokens = std::numeric_limits<std::int64_t>::max()) {
  AdmitRequest r;
  r.seq = seq;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.prompt_block_hashes = hashes;
  r.max_new_tokens = max_new_tokens;
  return r;
}

}  // namespace pagesim::alloc::test_support
