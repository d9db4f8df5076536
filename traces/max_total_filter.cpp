#include "traces/max_total_filter.h"

#include <fmt/format.h>

#include <cassert>
#include <utility>

namespace pagesim::traces {

MaxTotalFilter::MaxTotalFilter(std::unique_ptr<RequestSource> inner, std::int64_t max_total_tokens)
    : inner_(std::move(inner)), max_total_tokens_(max_total_tokens) {
  assert(inner_ && max_total_tokens_ >= 1);
}

std::optional<TraceRequest> MaxTotalFilter::next() {
  while (auto r = inner_->next()) {
    if (r->total_tokens() < max_total_tokens_) return r;
    ++dropped_;
  }
  return std::nullopt;
}

std::string MaxTotalFilter::describe() const {
  return fmt::format("{}; keeping prompt + output < {}", inner_->describe(), max_total_tokens_);
}

}  // namespace pagesim::traces
