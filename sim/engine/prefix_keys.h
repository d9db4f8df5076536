// Prefix keys: turns a trace's hash ids (one per hash block of H tokens, e.g. Mooncake's
// 512) into the allocator's chained keys of full blocks of B tokens.
//
// Allocator block j covers prompt tokens [jB, (j+1)B); its key chains the previous key with
// every hash id overlapping those tokens and with j, so two prompts share block j's key iff
// their hash ids agree up to the hash block holding token (j+1)B - 1. Only blocks fully
// inside the prompt and covered by the given ids get a key. Pure function.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "allocator/kv_allocator.h"

namespace pagesim::sim {

// REQUIRES: hash_block_tokens >= 1, block_size >= 1, prompt_tokens >= 0.
std::vector<alloc::BlockHash> prompt_block_keys(std::span<const std::uint64_t> hash_ids,
                                                std::int64_t hash_block_tokens, std::int64_t prompt_tokens,
                                                std::int64_t block_size);

}  // namespace pagesim::sim
