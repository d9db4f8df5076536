// LimitSource: a decorator that ends another source's stream at a duration or a request
// count, whichever comes first. It stops pulling from the inner source at the first request
// it refuses, so it can end an endless generator. Owns the wrapped source. Not thread-safe.
#pragma once

#include <cstdint>
#include <memory>

#include "traces/request_source.h"

namespace pagesim::traces {

class LimitSource final : public RequestSource {
 public:
  // duration_s: pass only requests with arrival_s < duration_s (0 = no limit).
  // max_requests: pass at most this many (0 = no limit).
  // REQUIRES: inner non-null, duration_s >= 0.
  LimitSource(std::unique_ptr<RequestSource> inner, double duration_s, std::uint64_t max_requests);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return inner_->hash_block_tokens(); }

 private:
  std::unique_ptr<RequestSource> inner_;
  double duration_s_;
  std::uint64_t max_requests_;
  std::uint64_t passed_ = 0;
  bool done_ = false;
};

}  // namespace pagesim::traces
