#include "sim/engine/prefix_keys.h"

#include <algorithm>

#include "allocator/pool/block_hash.h"

namespace pagesim::sim {

std::vector<alloc::BlockHash> prompt_block_keys(std::span<const std::uint64_t> hash_ids,
                                                std::int64_t hash_block_tokens, std::int64_t prompt_tokens,
                                                std::int64_t block_size) {
  std::vector<alloc::BlockHash> keys;
  const std::int64_t covered = std::min(prompt_tokens, static_cast<std::int64_t>(hash_ids.size()) * hash_block_tokens);
  const std::int64_t full_blocks = covered / block_size;
  keys.reserve(static_cast<std::size_t>(full_blocks));
  alloc::BlockHash h = alloc::kRootBlockHash;
  for (std::int64_t j = 0; j < full_blocks; ++j) {
    const std::int64_t first = j * block_size / hash_block_tokens;
    const std::int64_t last = ((j + 1) * block_size - 1) / hash_block_tokens;
    for (std::int64_t i = first; i <= last; ++i)
      h = alloc::chain_block_hash(h, hash_ids[static_cast<std::size_t>(i)], static_cast<std::uint64_t>(j));
    keys.push_back(h);
  }
  return keys;
}

}  // namespace pagesim::sim
