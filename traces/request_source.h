// RequestSource: a pull-based stream of TraceRequests in non-decreasing arrival order.
//
// Readers stream their file line by line and generators draw lazily, so a source never holds
// a whole trace (exceptions say so in their own header). A source owns whatever it reads
// from; decorators (max_total_filter.h, request_limit.h, ...) own the source they wrap.
// Not thread-safe: one consumer pulls from one source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "traces/trace_request.h"

namespace pagesim::traces {

class RequestSource {
 public:
  RequestSource() = default;
  virtual ~RequestSource() = default;
  RequestSource(const RequestSource&) = delete;
  RequestSource& operator=(const RequestSource&) = delete;

  // Returns the next request, or nullopt at the end of the stream (and forever after).
  // Arrival times never decrease from one call to the next. Throws TraceError on bad input.
  virtual std::optional<TraceRequest> next() = 0;

  // One line for logs, e.g. "azure csv 'traces/data/azure2023_conv.csv'".
  virtual std::string describe() const = 0;

  // Tokens covered by one entry of TraceRequest::hash_ids; 0 when requests carry none.
  virtual std::int64_t hash_block_tokens() const { return 0; }
};

}  // namespace pagesim::traces
