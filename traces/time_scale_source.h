// TimeScaleSource: a decorator that multiplies every arrival time of another source by a
// factor: 0.5 replays a trace at twice its rate, 2 at half. Lengths, ids and order are
// unchanged. Owns the wrapped source. Not thread-safe.
#pragma once

#include <memory>

#include "traces/request_source.h"

namespace pagesim::traces {

class TimeScaleSource final : public RequestSource {
 public:
  // REQUIRES: inner non-null; factor finite and > 0.
  TimeScaleSource(std::unique_ptr<RequestSource> inner, double factor);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return inner_->hash_block_tokens(); }

 private:
  std::unique_ptr<RequestSource> inner_;
  double factor_;
};

}  // namespace pagesim::traces
