// Small traces for the cache analysis tests: single-block requests named by letters, and
// multi-block prompts from hash ids.
#pragma once

#include <string_view>
#include <vector>

#include "sim/analysis/prompt_blocks.h"
#include "traces/trace_request.h"

namespace pagesim::sim::testing {

// A request whose prompt is `ids.size()` hash blocks of `hash_block` tokens each.
inline traces::TraceRequest request_of(std::vector<std::uint64_t> ids, std::int64_t hash_block = 4) {
  traces::TraceRequest r;
  r.prompt_tokens = static_cast<std::int64_t>(ids.size()) * hash_block;
  r.hash_ids = std::move(ids);
  return r;
}

// "ABAC": one single-block request per letter (block = hash block = 4 tokens).
inline std::vector<std::vector<PromptBlock>> letters(std::string_view sequence) {
  std::vector<std::vector<PromptBlock>> out;
  for (const char c : sequence) out.push_back(prompt_blocks(request_of({static_cast<std::uint64_t>(c)}), 4, 4, true));
  return out;
}

}  // namespace pagesim::sim::testing
