// Forwards to allocator/pool/block_hash.h, where chained block hashes live now (the block
// hash is a piece of the one paged-pool mechanism, allocator/pool/). Kept only for
// sim/engine/prefix_keys.cpp, which another change owns; remove this file once it includes
// allocator/pool/block_hash.h.
#pragma once

#include "allocator/pool/block_hash.h"
