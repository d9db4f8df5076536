#include "allocator/hetero/kv_layout.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

[[noreturn]] void refuse(const std::string& policy, const std::string& what) {
  throw AllocatorError(policy + " allocator: " + what);
}

std::string group_name(const LayerGroups& groups, std::size_t g) {
  return "layer group " + std::to_string(g) + " (" + std::string(to_string(groups[g].kind)) + ")";
}

bool is_attention(LayerGroupKind k) { return k != LayerGroupKind::kRecurrent; }

// The checks every layout needs: sizes that describe a layer group of its kind, and windows
// the block tables can drop pages of (a sliding window of 1 would drop the page the next
// token is written to; a chunk must end on a page boundary for the same reason).
void check_groups(const std::string& policy, const LayerGroups& groups, std::int64_t pool_bytes,
                  std::int32_t block_size) {
  if (groups.empty()) refuse(policy, "layer_groups is empty");
  if (pool_bytes <= 0) refuse(policy, "pool_bytes must be positive, got " + std::to_string(pool_bytes));
  if (block_size <= 0) refuse(policy, "block_size must be positive, got " + std::to_string(block_size));
  bool attention = false;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LayerGroup& lg = groups[g];
    const std::string name = group_name(groups, g);
    if (lg.layers < 1) refuse(policy, name + ": layers must be >= 1, got " + std::to_string(lg.layers));
    if (is_attention(lg.kind)) {
      attention = true;
      if (lg.kv_bytes_per_token <= 0 || lg.kv_bytes_per_token % lg.layers != 0)
        refuse(policy, name + ": kv_bytes_per_token must be a positive multiple of its " +
                           std::to_string(lg.layers) + " layers, got " + std::to_string(lg.kv_bytes_per_token));
    } else if (lg.state_bytes <= 0 || lg.state_bytes % lg.layers != 0 || lg.kv_bytes_per_token != 0) {
      refuse(policy, name + ": needs state_bytes a positive multiple of its " + std::to_string(lg.layers) +
                         " layers and kv_bytes_per_token 0, got " + std::to_string(lg.state_bytes) + " and " +
                         std::to_string(lg.kv_bytes_per_token));
    }
    if (lg.kind == LayerGroupKind::kSlidingWindow && lg.window_tokens < 2)
      refuse(policy, name + ": window_tokens must be >= 2, got " + std::to_string(lg.window_tokens));
    if (lg.kind == LayerGroupKind::kChunkedLocal && lg.window_tokens < 1)
      refuse(policy, name + ": window_tokens must be >= 1, got " + std::to_string(lg.window_tokens));
  }
  if (!attention) refuse(policy, "no layer group stores per-token KV (the capacity unit is a token's KV)");
}

void check_chunks(const std::string& policy, const LayerGroups& groups, std::int32_t tokens_per_page) {
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (groups[g].kind == LayerGroupKind::kChunkedLocal &&
        (groups[g].window_tokens < 1 || groups[g].window_tokens % tokens_per_page != 0))
      refuse(policy, group_name(groups, g) + ": window_tokens must be a positive multiple of the " +
                         std::to_string(tokens_per_page) + "-token page, got " + std::to_string(groups[g].window_tokens));
}

// Largest per-layer KV of one token, times every layer: what a uniform allocator charges.
std::int64_t uniform_token_bytes(const LayerGroups& groups) {
  std::int64_t per_layer = 0, layers = 0;
  for (const LayerGroup& lg : groups) {
    layers += lg.layers;
    if (is_attention(lg.kind)) per_layer = std::max(per_layer, lg.kv_bytes_per_token / lg.layers);
  }
  return per_layer * layers;
}

// True when every group is full attention and two of them differ in per-layer KV size.
bool uniform_type_with_sizes(const LayerGroups& groups) {
  std::int64_t first = 0;
  bool differ = false;
  for (const LayerGroup& lg : groups) {
    if (lg.kind != LayerGroupKind::kFull) return false;
    const std::int64_t a = lg.kv_bytes_per_token / lg.layers;
    if (first == 0) first = a;
    differ = differ || a != first;
  }
  return differ;
}

// a * b, or a refusal naming `what` when it would overflow.
std::int64_t checked_mul(const std::string& policy, std::int64_t a, std::int64_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<std::int64_t>::max() / a) refuse(policy, what + " overflows 64 bits");
  return a * b;
}

void finish(KvLayout& l, std::int64_t pool_bytes) {
  if (l.large_page_bytes > pool_bytes)
    refuse(l.policy, "a page of " + std::to_string(l.large_page_bytes) + " bytes is larger than pool_bytes " +
                         std::to_string(pool_bytes));
  l.num_large_pages = pool_bytes / l.large_page_bytes;
}

}  // namespace

std::int64_t first_kept_token(LayerGroupKind keep, std::int64_t window_tokens, std::int64_t n) {
  switch (keep) {
    case LayerGroupKind::kSlidingWindow: return std::max<std::int64_t>(0, n + 1 - window_tokens);
    case LayerGroupKind::kChunkedLocal: return n / window_tokens * window_tokens;
    default: return 0;
  }
}

KvLayout uniform_layout(const LayerGroups& groups, std::int64_t pool_bytes, std::int32_t block_size) {
  KvLayout l;
  l.policy = "uniform";
  check_groups(l.policy, groups, pool_bytes, block_size);
  l.tokens_per_page = block_size;
  l.token_bytes = uniform_token_bytes(groups);
  std::int64_t per_layer = l.token_bytes;
  std::int64_t layers = 0;
  for (const LayerGroup& lg : groups) layers += lg.layers;
  per_layer /= layers;

  TableGroup decoder;
  decoder.kind = TableKind::kTokens;
  decoder.caches_prefixes = true;
  std::int64_t state = 0;
  bool cross = false;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LayerGroup& lg = groups[g];
    decoder.parts.push_back({static_cast<std::int32_t>(g), per_layer * lg.layers, lg.kv_bytes_per_token});
    cross = cross || lg.kind == LayerGroupKind::kCrossAttention;
    if (lg.kind == LayerGroupKind::kRecurrent) state += lg.state_bytes;
  }
  decoder.page_bytes = checked_mul(l.policy, block_size, l.token_bytes, "a page");
  l.tables.push_back(decoder);
  if (cross) {
    TableGroup enc = decoder;
    enc.kind = TableKind::kEncoder;
    enc.caches_prefixes = false;
    l.tables.push_back(enc);
  }
  if (state > 0) {
    TableGroup st;
    st.kind = TableKind::kState;
    st.page_bytes = decoder.page_bytes;
    st.state_bytes = state;
    l.tables.push_back(st);
  }
  l.large_page_bytes = decoder.page_bytes;
  finish(l, pool_bytes);
  return l;
}

KvLayout hybrid_layout(const LayerGroups& groups, std::int64_t pool_bytes, std::int32_t block_size) {
  KvLayout l;
  l.policy = "hybrid";
  check_groups(l.policy, groups, pool_bytes, block_size);
  l.token_bytes = uniform_token_bytes(groups);
  // Every group full attention but of several per-layer sizes (DeepSeek-V3.2: the latent
  // cache and the indexer's keys): vLLM's UniformTypeKVCacheSpecs, one KV cache group of all
  // layers (kv_cache_utils.py, _get_kv_cache_groups_uniform_type), so one block table whose
  // page holds every layer's own bytes, unpadded.
  if (uniform_type_with_sizes(groups)) {
    l.tokens_per_page = block_size;
    l.vllm_group_size = 0;
    TableGroup t;
    t.kind = TableKind::kTokens;
    t.caches_prefixes = true;
    std::int64_t token = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      t.parts.push_back({static_cast<std::int32_t>(g), groups[g].kv_bytes_per_token, groups[g].kv_bytes_per_token});
      token += groups[g].kv_bytes_per_token;
    }
    t.page_bytes = checked_mul(l.policy, block_size, token, "a page");
    l.tables.push_back(t);
    l.large_page_bytes = t.page_bytes;
    finish(l, pool_bytes);
    return l;
  }
  // One per-layer KV size for every attention group; the largest per-layer state.
  std::int64_t attn = 0, state = 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LayerGroup& lg = groups[g];
    if (!is_attention(lg.kind)) {
      state = std::max(state, lg.state_bytes / lg.layers);
      continue;
    }
    const std::int64_t a = lg.kv_bytes_per_token / lg.layers;
    if (attn != 0 && a != attn)
      refuse(l.policy, group_name(groups, g) + ": per-layer KV of " + std::to_string(a) +
                           " bytes per token differs from " + std::to_string(attn) +
                           " (vLLM's page-size unification by block-size scaling is not modelled)");
    attn = a;
  }
  // vLLM grows the attention block until its page holds one layer's state.
  const std::int64_t unit = checked_mul(l.policy, block_size, attn, "a page");
  const std::int64_t scale = state > unit ? (state + unit - 1) / unit : 1;
  if (checked_mul(l.policy, block_size, scale, "the block size") > std::numeric_limits<std::int32_t>::max())
    refuse(l.policy, "the block grown to hold a layer's state exceeds 32 bits");
  l.tokens_per_page = static_cast<std::int32_t>(block_size * scale);
  check_chunks(l.policy, groups, l.tokens_per_page);
  const std::int64_t layer_page = l.tokens_per_page * attn;  // >= state

  std::int64_t fewest = std::numeric_limits<std::int64_t>::max(), most = 0;
  for (const LayerGroup& lg : groups) {
    fewest = std::min<std::int64_t>(fewest, lg.layers);
    most = std::max<std::int64_t>(most, lg.layers);
  }
  // vLLM: `if max_num_layers < min_num_layers * 1.25: group_size = max_num_layers`.
  const std::int64_t group_size = 4 * most < 5 * fewest ? most : fewest;
  l.vllm_group_size = static_cast<std::int32_t>(group_size);
  l.large_page_bytes = checked_mul(l.policy, layer_page, group_size, "a page");

  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LayerGroup& lg = groups[g];
    for (std::int64_t first = 0; first < lg.layers; first += group_size) {
      const std::int64_t layers = std::min(group_size, lg.layers - first);
      TableGroup t;
      t.page_bytes = l.large_page_bytes;
      if (lg.kind == LayerGroupKind::kRecurrent) {
        t.kind = TableKind::kState;
        t.state_bytes = layers * (lg.state_bytes / lg.layers);
      } else {
        t.kind = lg.kind == LayerGroupKind::kCrossAttention ? TableKind::kEncoder : TableKind::kTokens;
        t.keep = t.kind == TableKind::kTokens ? lg.kind : LayerGroupKind::kFull;
        t.window_tokens = lg.window_tokens;
        t.caches_prefixes = t.kind == TableKind::kTokens;
        t.parts.push_back({static_cast<std::int32_t>(g), group_size * attn, layers * attn});
      }
      l.tables.push_back(t);
    }
  }
  finish(l, pool_bytes);
  return l;
}

KvLayout jenga_layout(const LayerGroups& groups, std::int64_t pool_bytes, std::int32_t block_size) {
  KvLayout l;
  l.policy = "jenga";
  check_groups(l.policy, groups, pool_bytes, block_size);
  check_chunks(l.policy, groups, block_size);
  l.tokens_per_page = block_size;
  l.token_bytes = uniform_token_bytes(groups);
  std::int64_t lcm = 1;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const LayerGroup& lg = groups[g];
    TableGroup t;
    if (lg.kind == LayerGroupKind::kRecurrent) {
      t.kind = TableKind::kState;
      t.page_bytes = lg.state_bytes;
      t.state_bytes = lg.state_bytes;
    } else {
      t.kind = lg.kind == LayerGroupKind::kCrossAttention ? TableKind::kEncoder : TableKind::kTokens;
      t.keep = t.kind == TableKind::kTokens ? lg.kind : LayerGroupKind::kFull;
      t.window_tokens = lg.window_tokens;
      t.caches_prefixes = t.kind == TableKind::kTokens;
      t.parts.push_back({static_cast<std::int32_t>(g), lg.kv_bytes_per_token, lg.kv_bytes_per_token});
      t.page_bytes = checked_mul(l.policy, block_size, lg.kv_bytes_per_token, group_name(groups, g) + "'s page");
    }
    lcm = checked_mul(l.policy, lcm / std::gcd(lcm, t.page_bytes), t.page_bytes, "the LCM of the page sizes");
    l.tables.push_back(t);
  }
  l.large_page_bytes = lcm;
  finish(l, pool_bytes);
  return l;
}

}  // namespace pagesim::alloc
