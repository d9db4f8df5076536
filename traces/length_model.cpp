#include "traces/length_model.h"

#include <fmt/format.h>

#include <boost/random/uniform_int_distribution.hpp>
#include <cassert>
#include <utility>

#include "traces/trace_error.h"

namespace pagesim::traces {

IndependentLengths::IndependentLengths(std::unique_ptr<LengthDistribution> prompt,
                                       std::unique_ptr<LengthDistribution> output,
                                       std::int64_t max_total_tokens)
    : prompt_(std::move(prompt)), output_(std::move(output)), max_total_tokens_(max_total_tokens) {
  assert(prompt_ && output_ && max_total_tokens_ >= 0);
}

LengthRow IndependentLengths::next() {
  for (int attempt = 0; attempt < kMaxRedraws; ++attempt) {
    const LengthRow row{prompt_->next(), output_->next()};
    if (max_total_tokens_ == 0 || row.total_tokens() < max_total_tokens_) return row;
  }
  throw SpecError("max_total_tokens",
                  fmt::format("a limit the length distributions can meet ({} and {})",
                              prompt_->describe(), output_->describe()),
                  fmt::format("{} pairs in a row with prompt + output >= {}", kMaxRedraws,
                              max_total_tokens_));
}

std::string IndependentLengths::describe() const {
  std::string out = fmt::format("prompt {}, output {}", prompt_->describe(), output_->describe());
  if (max_total_tokens_ > 0) out += fmt::format(", prompt + output < {}", max_total_tokens_);
  return out;
}

EmpiricalLengths::EmpiricalLengths(LengthTable table, std::uint64_t seed)
    : table_(std::move(table)), engine_(seed) {
  if (table_.rows.empty()) {
    throw SpecError("lengths.path", "a lengths file with at least one row kept",
                    fmt::format("no rows in '{}' ({} read)", table_.path, table_.rows_read));
  }
}

LengthRow EmpiricalLengths::next() {
  boost::random::uniform_int_distribution<std::size_t> pick(0, table_.rows.size() - 1);
  return table_.rows[pick(engine_)];
}

std::string EmpiricalLengths::describe() const {
  return fmt::format("empirical rows of '{}' ({} of {} rows kept)", table_.path,
                     table_.rows.size(), table_.rows_read);
}

}  // namespace pagesim::traces
