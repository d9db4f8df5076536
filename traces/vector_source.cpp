#include "traces/vector_source.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "traces/trace_error.h"

namespace pagesim::traces {

VectorSource::VectorSource(std::vector<TraceRequest> requests, std::int64_t hash_block_tokens)
    : requests_(std::move(requests)), hash_block_tokens_(hash_block_tokens) {
  double last = 0.0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    const TraceRequest& r = requests_[i];
    const auto field = [i](const char* member) { return fmt::format("requests[{}].{}", i, member); };
    if (!std::isfinite(r.arrival_s) || r.arrival_s < last) {
      throw SpecError(field("arrival_s"), fmt::format("a finite time >= {} s", last),
                      fmt::format("{}", r.arrival_s));
    }
    if (r.prompt_tokens < 1 || r.prompt_tokens > kMaxTokens) {
      throw SpecError(field("prompt_tokens"), fmt::format("a length in [1, {}]", kMaxTokens),
                      fmt::format("{}", r.prompt_tokens));
    }
    if (r.output_tokens < 0 || r.output_tokens > kMaxTokens) {
      throw SpecError(field("output_tokens"), fmt::format("a length in [0, {}]", kMaxTokens),
                      fmt::format("{}", r.output_tokens));
    }
    if (r.n < 1) throw SpecError(field("n"), "a positive number of samples", fmt::format("{}", r.n));
    if (r.beam_width < 1) {
      throw SpecError(field("beam_width"), "a positive beam width", fmt::format("{}", r.beam_width));
    }
    if (r.n > 1 && r.beam_width > 1) {  // as NativeCsvReader refuses such a row
      throw SpecError(field("beam_width"),
                      "1 when n > 1 (a request is either parallel sampling (n) or beam search (beam_width))",
                      fmt::format("{} with n = {}", r.beam_width, r.n));
    }
    last = r.arrival_s;
  }
}

std::optional<TraceRequest> VectorSource::next() {
  if (next_ == requests_.size()) return std::nullopt;
  return requests_[next_++];
}

std::string VectorSource::describe() const {
  return fmt::format("{} requests in memory", requests_.size());
}

}  // namespace pagesim::traces
