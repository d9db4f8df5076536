#include "allocator/pool/block_hash.h"

namespace pagesim::alloc {
namespace {

// splitmix64's finaliser: a bijective avalanche of 64 bits.
constexpr std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

constexpr std::uint64_t combine(std::uint64_t h, std::uint64_t v) {
  return mix(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

}  // namespace

BlockHash chain_block_hash(BlockHash parent, std::span<const std::int32_t> token_ids) {
  std::uint64_t h = combine(parent, token_ids.size());
  for (std::int32_t t : token_ids) h = combine(h, static_cast<std::uint32_t>(t));
  return h;
}

BlockHash chain_block_hash(BlockHash parent, std::uint64_t external_id, std::uint64_t sub_index) {
  return combine(combine(combine(parent, 0xe7e7e7e7ULL), external_id), sub_index);
}

}  // namespace pagesim::alloc
