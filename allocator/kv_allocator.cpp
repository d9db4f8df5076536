// KvAllocator's own part: the request checks every kind's admission operations share.
#include "allocator/kv_allocator.h"

#include <algorithm>
#include <limits>

namespace pagesim::alloc {

void KvAllocator::check_request(const AdmitRequest& req, std::string_view op) const {
  const auto refuse = [&](const std::string& what) {
    throw AllocatorError(misuse_prefix(op) + ": " + seq_name(req.seq) + ": " + what);
  };
  if (req.prompt_tokens < 1) refuse("prompt_tokens must be >= 1, got " + std::to_string(req.prompt_tokens));
  if (req.output_tokens < 0) refuse("output_tokens must be >= 0, got " + std::to_string(req.output_tokens));
  if (req.generated_tokens < 0) refuse("generated_tokens must be >= 0, got " + std::to_string(req.generated_tokens));
  if (req.encoder_tokens < 0) refuse("encoder_tokens must be >= 0, got " + std::to_string(req.encoder_tokens));
  if (req.max_new_tokens < 1) refuse("max_new_tokens must be >= 1, got " + std::to_string(req.max_new_tokens));
  if (req.prompt_tokens > std::numeric_limits<std::int64_t>::max() - std::max(req.output_tokens, req.generated_tokens))
    refuse("prompt + output/generated tokens overflow a 64-bit count");
  // The hashes key blocks of block_size() tokens only where they are looked up.
  if (!req.prompt_block_hashes.empty() && caches_prefixes() &&
      static_cast<std::int64_t>(req.prompt_block_hashes.size()) > req.tokens_at_admission() / block_size())
    refuse(std::to_string(req.prompt_block_hashes.size()) + " prompt block hashes for only " +
           std::to_string(req.tokens_at_admission() / block_size()) + " full blocks of prompt and generated tokens");
}

void KvAllocator::check_admission(const AdmitRequest& req, std::string_view op) const {
  check_request(req, op);
  if (contains(req.seq)) throw AllocatorError(misuse_prefix(op) + ": " + seq_name(req.seq) + " is already live");
}

}  // namespace pagesim::alloc
