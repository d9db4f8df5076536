#include "traces/azure_csv_reader.h"

#include <fmt/format.h>

#include <utility>

#include "traces/azure_timestamp.h"
#include "traces/trace_error.h"

namespace pagesim::traces {

AzureCsvReader::AzureCsvReader(std::string path, std::string name) : csv_(std::move(path), std::move(name)) {
  time_col_ = csv_.require("TIMESTAMP");
  prompt_col_ = csv_.require("ContextTokens");
  output_col_ = csv_.require("GeneratedTokens");
}

std::optional<TraceRequest> AzureCsvReader::next() {
  if (!csv_.next_row()) return std::nullopt;
  const std::string_view stamp = csv_.field(time_col_);
  const TimestampParse t = parse_timestamp(stamp);
  if (!t.ok()) csv_.fail(time_col_, t.error, quote_found(stamp));
  if (next_id_ == 0) {
    first_ns_ = t.ns_since_epoch;
    last_ns_ = t.ns_since_epoch;
  }
  if (t.ns_since_epoch < last_ns_) {
    csv_.fail(time_col_,
              fmt::format("a time no earlier than the previous row's, {} s after the first row "
                          "(rows must be in arrival order)",
                          seconds_between(first_ns_, last_ns_)),
              quote_found(stamp));
  }
  TraceRequest r;
  r.id = next_id_;
  r.arrival_s = seconds_between(first_ns_, t.ns_since_epoch);
  r.prompt_tokens = csv_.integer(prompt_col_, 1, kMaxTokens);
  r.output_tokens = csv_.integer(output_col_, 0, kMaxTokens);
  last_ns_ = t.ns_since_epoch;
  ++next_id_;
  return r;
}

std::string AzureCsvReader::describe() const {
  return fmt::format("azure csv '{}'", csv_.path());
}

}  // namespace pagesim::traces
