// VectorSource: a RequestSource over requests held in memory, for tests and for callers
// that build a small workload by hand. Returns them in the given order. Owns the vector.
#pragma once

#include <cstddef>
#include <vector>

#include "traces/request_source.h"

namespace pagesim::traces {

class VectorSource final : public RequestSource {
 public:
  // Throws SpecError naming the first request whose arrival_s is not finite, negative or
  // earlier than its predecessor's, or whose lengths, n or beam_width are out of range (or n
  // and beam_width both > 1).
  explicit VectorSource(std::vector<TraceRequest> requests, std::int64_t hash_block_tokens = 0);

  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return hash_block_tokens_; }

 private:
  std::vector<TraceRequest> requests_;
  std::int64_t hash_block_tokens_;
  std::size_t next_ = 0;
};

}  // namespace pagesim::traces
