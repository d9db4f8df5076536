// Chained block hashes: the prefix-cache key of a full block of prompt tokens.
//
// The key of block i is hash(key of block i-1, contents of block i), with kRootBlockHash as
// the parent of block 0, so equal keys mean equal prefixes (up to 64-bit collisions). The
// contents are either the block's token ids, or an externally given id when a trace carries
// precomputed block ids (the Mooncake trace gives one id per 512-token block).
// Pure functions; no allocation.
#pragma once

#include <cstdint>
#include <span>

#include "allocator/kv_allocator.h"

namespace pagesim::alloc {

inline constexpr BlockHash kRootBlockHash = 0x9e3779b97f4a7c15ULL;

// Key of a block holding `token_ids`, whose predecessor's key is `parent`.
BlockHash chain_block_hash(BlockHash parent, std::span<const std::int32_t> token_ids);

// Key of a block identified by an external id (and, when one external id spans several
// allocator blocks, the index of the allocator block inside it).
BlockHash chain_block_hash(BlockHash parent, std::uint64_t external_id, std::uint64_t sub_index);

}  // namespace pagesim::alloc
