// MaxTotalFilter: a decorator that drops the requests of another source whose
// prompt + output is not below a limit (kept: prompt_tokens + output_tokens < max_total,
// strict, as the vLLM artifact filters at 2048). Dropping thins the arrival stream; kept
// requests keep their ids and times. Owns the wrapped source. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "traces/request_source.h"

namespace pagesim::traces {

class MaxTotalFilter final : public RequestSource {
 public:
  // REQUIRES: inner non-null, max_total_tokens >= 1.
  MaxTotalFilter(std::unique_ptr<RequestSource> inner, std::int64_t max_total_tokens);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return inner_->hash_block_tokens(); }

  std::uint64_t dropped() const { return dropped_; }

 private:
  std::unique_ptr<RequestSource> inner_;
  std::int64_t max_total_tokens_;
  std::uint64_t dropped_ = 0;
};

}  // namespace pagesim::traces
