#include "sim/analysis/prompt_blocks.h"

#include <algorithm>
#include <cassert>

#include "allocator/pool/block_hash.h"
#include "sim/engine/prefix_keys.h"

namespace pagesim::sim {

std::vector<PromptBlock> prompt_blocks(const traces::TraceRequest& request, std::int64_t hash_block_tokens,
                                       std::int64_t block_size, bool partial_tail) {
  assert(hash_block_tokens >= 1 && block_size >= 1);
  const std::vector<alloc::BlockHash> keys =
      prompt_block_keys(request.hash_ids, hash_block_tokens, request.prompt_tokens, block_size);
  std::vector<PromptBlock> blocks;
  blocks.reserve(keys.size() + 1);
  for (const alloc::BlockHash k : keys) blocks.push_back({k, block_size});
  const std::int64_t covered = std::min(request.prompt_tokens,
                                        static_cast<std::int64_t>(request.hash_ids.size()) * hash_block_tokens);
  const std::int64_t tail = covered - static_cast<std::int64_t>(keys.size()) * block_size;
  if (!partial_tail || tail == 0) return blocks;
  // The partial block chains on like a full one (prefix_keys.cpp), over the ids it overlaps.
  const std::int64_t j = static_cast<std::int64_t>(keys.size());
  alloc::BlockHash h = keys.empty() ? alloc::kRootBlockHash : keys.back();
  for (std::int64_t i = j * block_size / hash_block_tokens; i <= (covered - 1) / hash_block_tokens; ++i)
    h = alloc::chain_block_hash(h, request.hash_ids[static_cast<std::size_t>(i)], static_cast<std::uint64_t>(j));
  blocks.push_back({h, tail});
  return blocks;
}

}  // namespace pagesim::sim
