#include "sim/analysis/cache_curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/analysis/lru_stack_distance.h"
#include "sim/config/enum_names.h"
#include "sim/output/atomic_file.h"

namespace pagesim::sim {
namespace {

// Every request's blocks, flattened: request i is blocks[starts[i], starts[i+1]).
struct TraceBlocks {
  std::vector<PromptBlock> blocks;
  std::vector<std::size_t> starts = {0};
  std::span<const PromptBlock> request(std::size_t i) const {
    return std::span(blocks).subspan(starts[i], starts[i + 1] - starts[i]);
  }
  std::size_t requests() const { return starts.size() - 1; }
};

CachePoint make_point(const CacheCurve& c, IdealPolicy policy, CurveMethod method, std::int64_t capacity_blocks,
                      std::int64_t hit_tokens, std::int64_t hit_blocks) {
  CachePoint p;
  p.policy = policy;
  p.method = method;
  p.capacity_blocks = capacity_blocks;
  p.capacity_tokens = capacity_blocks * c.block_size;
  p.hit_tokens = hit_tokens;
  p.hit_blocks = hit_blocks;
  if (c.prompt_tokens > 0) p.hit_rate = static_cast<double>(hit_tokens) / static_cast<double>(c.prompt_tokens);
  if (c.prompt_blocks > 0) p.block_hit_rate = static_cast<double>(hit_blocks) / static_cast<double>(c.prompt_blocks);
  return p;
}

// Capacities of the LRU curve: the geometric grid, the asked capacities and `all` (blocks).
std::vector<std::int64_t> stack_capacities(std::int64_t all, int per_decade, const std::vector<std::int64_t>& asked) {
  std::vector<std::int64_t> caps(asked);
  for (int k = 0;; ++k) {
    const auto c = static_cast<std::int64_t>(std::llround(std::pow(10.0, static_cast<double>(k) / per_decade)));
    if (c >= all) break;
    caps.push_back(c);
  }
  caps.push_back(all);
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  return caps;
}

void check(const CacheCurveOptions& o) {
  if (o.block_size < 0)
    throw std::invalid_argument(fmt::format("--block-size: expected a number of tokens >= 1 (or 0 for the trace's "
                                            "hash block), found {}",
                                            o.block_size));
  for (const std::int64_t c : o.capacities_tokens)
    if (c < 0) throw std::invalid_argument(fmt::format("--capacity: expected tokens >= 0, found {}", c));
  if (o.points_per_decade < 1)
    throw std::invalid_argument(fmt::format("--points-per-decade: expected >= 1, found {}", o.points_per_decade));
}

}  // namespace

std::string_view to_string(IdealPolicy policy) { return enum_name(kIdealPolicyNames, policy); }

CacheCurve compute_cache_curve(traces::RequestSource& source, const CacheCurveOptions& options) {
  check(options);
  CacheCurve c;
  c.source = source.describe();
  c.hash_block_tokens = source.hash_block_tokens();
  if (c.hash_block_tokens <= 0)
    throw std::invalid_argument(c.source + ": the tokens per hash id are unknown (a native CSV does not record "
                                           "them): give --hash-block-tokens");
  c.block_size = options.block_size > 0 ? options.block_size : c.hash_block_tokens;

  // One pass: read, key, and take every block's LRU hit capacity.
  TraceBlocks trace;
  LruStackDistance lru;
  std::vector<std::int64_t> hit_capacity;
  std::vector<std::int64_t> tokens_at;  // [k]: tokens of blocks whose hit capacity is k
  std::vector<std::int64_t> blocks_at;
  bool any_ids = false;
  while (auto r = source.next()) {
    ++c.requests;
    c.prompt_tokens += r->prompt_tokens;
    any_ids |= !r->hash_ids.empty();
    const std::vector<PromptBlock> blocks = prompt_blocks(*r, c.hash_block_tokens, c.block_size, options.partial_tail);
    lru.lookup_then_use(blocks, &hit_capacity);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const std::int64_t k = hit_capacity[i];
      if (k == LruStackDistance::kNever) break;  // non-decreasing: the rest miss too
      if (static_cast<std::size_t>(k) >= tokens_at.size()) {
        tokens_at.resize(static_cast<std::size_t>(k) + 1, 0);
        blocks_at.resize(static_cast<std::size_t>(k) + 1, 0);
      }
      tokens_at[static_cast<std::size_t>(k)] += blocks[i].tokens;
      ++blocks_at[static_cast<std::size_t>(k)];
    }
    c.prompt_blocks += static_cast<std::int64_t>(blocks.size());
    trace.blocks.insert(trace.blocks.end(), blocks.begin(), blocks.end());
    trace.starts.push_back(trace.blocks.size());
  }
  // Said apart from "no hash ids": a header-only file is not a trace without identities.
  if (c.requests == 0)
    throw std::invalid_argument(c.source + ": the trace holds no request: expected at least one, with hash ids");
  if (!any_ids)
    throw std::invalid_argument(c.source + ": no request carries hash ids, so no block has an identity a cache "
                                           "could match (cache-curve needs a trace with hash_ids)");
  c.distinct_blocks = lru.distinct_blocks();

  std::vector<std::int64_t> asked_blocks;
  for (const std::int64_t t : options.capacities_tokens) asked_blocks.push_back(t / c.block_size);
  std::int64_t hit_tokens = 0, hit_blocks = 0;
  std::size_t k = 0;
  for (const std::int64_t cap : stack_capacities(c.distinct_blocks, options.points_per_decade, asked_blocks)) {
    for (; k < tokens_at.size() && static_cast<std::int64_t>(k) <= cap; ++k) {
      hit_tokens += tokens_at[k];
      hit_blocks += blocks_at[k];
    }
    c.points.push_back(make_point(c, IdealPolicy::kLru, CurveMethod::kStack, cap, hit_tokens, hit_blocks));
  }

  for (const IdealPolicy policy : options.policies) {
    std::vector<std::int64_t> caps(asked_blocks);
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
    for (const std::int64_t cap : caps) {
      IdealBlockCache cache(policy, cap);
      std::int64_t tokens = 0, blocks = 0;
      for (std::size_t i = 0; i < trace.requests(); ++i) {
        const std::span<const PromptBlock> req = trace.request(i);
        const std::size_t hits = cache.lookup_then_use(req);
        blocks += static_cast<std::int64_t>(hits);
        for (std::size_t j = 0; j < hits; ++j) tokens += req[j].tokens;
      }
      c.points.push_back(make_point(c, policy, CurveMethod::kDirect, cap, tokens, blocks));
    }
  }
  return c;
}

std::string format_cache_curve_table(const CacheCurve& c) {
  std::string out;
  out += fmt::format("{}\n", c.source);
  out += fmt::format("{} requests, {} prompt tokens, {} blocks of {} tokens ({} distinct; {} tokens per hash id)\n",
                     c.requests, c.prompt_tokens, c.prompt_blocks, c.block_size, c.distinct_blocks,
                     c.hash_block_tokens);
  out += "idealised: no timing, no pinned blocks; hit rate = prompt tokens served from cache / all prompt tokens\n";
  out += fmt::format("{:<8}{:<8}{:>16}{:>14}{:>11}{:>11}\n", "policy", "method", "capacity_tokens", "blocks",
                     "hit_rate", "block_hit");
  auto is_power_of_ten = [](std::int64_t v) {
    while (v >= 10 && v % 10 == 0) v /= 10;
    return v == 1;
  };
  std::vector<std::int64_t> asked;
  for (const CachePoint& p : c.points)
    if (p.method == CurveMethod::kDirect) asked.push_back(p.capacity_blocks);
  for (const CachePoint& p : c.points) {
    if (p.method == CurveMethod::kStack && !is_power_of_ten(p.capacity_blocks) &&
        p.capacity_blocks != c.distinct_blocks &&
        std::find(asked.begin(), asked.end(), p.capacity_blocks) == asked.end())
      continue;
    const std::string cap = p.method == CurveMethod::kStack && p.capacity_blocks == c.distinct_blocks
                                ? fmt::format("{} (inf)", p.capacity_tokens)
                                : fmt::format("{}", p.capacity_tokens);
    out += fmt::format("{:<8}{:<8}{:>16}{:>14}{:>10.2f}%{:>10.2f}%\n", to_string(p.policy),
                       p.method == CurveMethod::kStack ? "stack" : "direct", cap, p.capacity_blocks,
                       100.0 * p.hit_rate, 100.0 * p.block_hit_rate);
  }
  return out;
}

void write_cache_curve_csv(const CacheCurve& c, const std::filesystem::path& path) {
  AtomicFile file(path);
  std::ostream& out = file.stream();
  out << "policy,method,capacity_blocks,capacity_tokens,hit_tokens,prompt_tokens,hit_rate,hit_blocks,block_hit_rate\n";
  for (const CachePoint& p : c.points)
    out << fmt::format("{},{},{},{},{},{},{},{},{}\n", to_string(p.policy),
                       p.method == CurveMethod::kStack ? "stack" : "direct", p.capacity_blocks, p.capacity_tokens,
                       p.hit_tokens, c.prompt_tokens, p.hit_rate, p.hit_blocks, p.block_hit_rate);
  file.commit();
}

}  // namespace pagesim::sim
