// Test support for the randomized prefix-cache tests: documents as token streams, so that
// requests of one document share a prefix. Token i of document `doc` is doc * 1,000,000 + i
// (documents in (-2,000, 2,000) stay inside int32 token ids). Stateless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "allocator/pool/block_hash.h"

namespace pagesim::alloc::test_support {

// The chained hashes (block_hash.h) of the full blocks of `block_size` tokens among the first
// `prompt` tokens of document `doc`. REQUIRES: block_size >= 1, -2000 < doc < 2000.
inline std::vector<BlockHash> document_block_hashes(std::int64_t doc, std::int64_t prompt, std::int64_t block_size) {
  std::vector<std::int32_t> tokens;
  for (std::int64_t i = 0; i < prompt; ++i) tokens.push_back(static_cast<std::int32_t>(doc * 1'000'000 + i));
  std::vector<BlockHash> hashes;
  BlockHash h = kRootBlockHash;
  for (std::int64_t i = 0; i + block_size <= prompt; i += block_size)
    hashes.push_back(h = chain_block_hash(h, std::span(tokens).subspan(static_cast<std::size_t>(i),
                                                                       static_cast<std::size_t>(block_size))));
  return hashes;
}

}  // namespace pagesim::alloc::test_support
