// Synthetic attention content of `pagesim validate`: the K, V and query values a sampled
// batch is filled with, as pure functions of identities, so that no content is ever stored.
//
// K and V of a token depend only on its identity (origin, offset) (sampled_batch.h), the KV
// head, the dimension and the seed: two tokens with equal identities get bit-identical K/V
// in every batch and on every machine, and two different identities get independent values.
// Queries depend on (request, seq, position, query head, dimension, seed). Every value is
// uniform in [-1, 1) on a grid of 2^-23 (exact in f32; f16/bf16 storage rounds it).
//
// Hashing: FNV-1a (64-bit) of the origin string, then splitmix64 finalisers chained over the
// other fields. One token's fields are folded into a token seed once; each (head, dim)
// element then costs one finaliser. constexpr, no state, thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace pagesim::sim {

enum class KvPart : std::uint8_t { kKey = 1, kValue = 2 };

// The splitmix64 finaliser: a bijection of 64-bit words with full avalanche.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// FNV-1a of an origin string ("p12", "h-4711", "b3").
constexpr std::uint64_t hash_origin(std::string_view origin) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : origin) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// Seed of the K (or V) row of the token with identity (origin, offset);
// origin_hash = hash_origin(origin).
constexpr std::uint64_t kv_token_seed(std::uint64_t seed, KvPart part, std::uint64_t origin_hash,
                                      std::int64_t offset) {
  std::uint64_t h = mix64(seed ^ (0x6b76ull << 48) ^ static_cast<std::uint64_t>(part));
  h = mix64(h ^ origin_hash);
  return mix64(h ^ static_cast<std::uint64_t>(offset));
}

// Seed of the query row at logical `position` of sequence `seq` of request `request`.
constexpr std::uint64_t query_token_seed(std::uint64_t seed, std::uint64_t request, std::uint64_t seq,
                                         std::int64_t position) {
  std::uint64_t h = mix64(seed ^ (0x71ull << 56));
  h = mix64(h ^ request);
  h = mix64(h ^ seq);
  return mix64(h ^ static_cast<std::uint64_t>(position));
}

// Element (head, dim) of the row whose token seed is `token_seed`: uniform in [-1, 1),
// a multiple of 2^-23.
constexpr float content_value(std::uint64_t token_seed, std::int32_t head, std::int32_t dim) {
  const std::uint64_t h = mix64(token_seed ^ (static_cast<std::uint64_t>(static_cast<std::uint32_t>(head)) << 32) ^
                                static_cast<std::uint32_t>(dim));
  const auto k = static_cast<std::int32_t>(h >> 40);  // 24 random bits
  return static_cast<float>(k - (1 << 23)) * 0x1.0p-23f;
}

// Convenience forms (one element).
constexpr float kv_value(std::uint64_t seed, KvPart part, std::string_view origin, std::int64_t offset,
                         std::int32_t kv_head, std::int32_t dim) {
  return content_value(kv_token_seed(seed, part, hash_origin(origin), offset), kv_head, dim);
}
constexpr float query_value(std::uint64_t seed, std::uint64_t request, std::uint64_t seq, std::int64_t position,
                            std::int32_t q_head, std::int32_t dim) {
  return content_value(query_token_seed(seed, request, seq, position), q_head, dim);
}

}  // namespace pagesim::sim
