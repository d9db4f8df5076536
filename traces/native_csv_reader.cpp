#include "traces/native_csv_reader.h"

#include <fmt/format.h>

#include <cassert>
#include <limits>
#include <utility>

#include "traces/field_parse.h"
#include "traces/trace_error.h"

namespace pagesim::traces {

std::string_view parse_hash_ids(std::string_view text, std::vector<std::uint64_t>* out) {
  out->clear();
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ') {
      ++pos;
      continue;
    }
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    const Parsed<std::uint64_t> p = parse_uint64(item);
    if (!p.ok()) return item;
    out->push_back(p.value);
    pos = end;
  }
  return {};
}

NativeCsvReader::NativeCsvReader(std::string path, NativeCsvOptions options, std::string name)
    : csv_(std::move(path), std::move(name)), options_(options) {
  assert(options_.hash_block_tokens >= 0);
  csv_.allow_only(kNativeCsvColumns);
  arrival_col_ = csv_.require("arrival_s");
  prompt_col_ = csv_.require("prompt_tokens");
  output_col_ = csv_.require("output_tokens");
  n_col_ = csv_.find("n");
  beam_col_ = csv_.find("beam_width");
  hash_col_ = csv_.find("hash_ids");
  adapter_col_ = csv_.find("adapter");
}

std::optional<TraceRequest> NativeCsvReader::next() {
  if (!csv_.next_row()) return std::nullopt;
  constexpr std::int64_t kMaxInt32 = std::numeric_limits<std::int32_t>::max();
  TraceRequest r;
  r.id = next_id_;
  r.arrival_s = csv_.arrival_time(arrival_col_, last_arrival_s_);
  r.prompt_tokens = csv_.integer(prompt_col_, 1, kMaxTokens);
  r.output_tokens = csv_.integer(output_col_, 0, kMaxTokens);
  if (n_col_) r.n = static_cast<std::int32_t>(csv_.integer(*n_col_, 1, kMaxInt32));
  if (beam_col_) r.beam_width = static_cast<std::int32_t>(csv_.integer(*beam_col_, 1, kMaxInt32));
  // The engine forks either n samples or beam_width beams per request, never both (the
  // experiment config refuses the same pair in workload.sampling).
  if (r.n > 1 && r.beam_width > 1) {
    throw TraceError(csv_.path(), csv_.line_number(), "columns 'n' and 'beam_width'",
                     "n = 1 or beam_width = 1 (a request is either parallel sampling (n) or beam search "
                     "(beam_width))",
                     fmt::format("n = {} and beam_width = {}", r.n, r.beam_width));
  }
  if (hash_col_) {
    const std::string_view text = csv_.field(*hash_col_);
    const std::string_view bad = parse_hash_ids(text, &r.hash_ids);
    if (!bad.empty()) {
      csv_.fail(*hash_col_, "space-separated non-negative 64-bit integers",
                fmt::format("{} in {}", quote_found(bad), quote_found(text)));
    }
    const std::int64_t block = options_.hash_block_tokens;
    if (block > 0 && !r.hash_ids.empty()) {
      const std::int64_t want = hash_blocks_for(r.prompt_tokens, block);
      if (static_cast<std::int64_t>(r.hash_ids.size()) != want) {
        csv_.fail(*hash_col_,
                  fmt::format("{} ids for {} prompt tokens at {} tokens per hash block", want,
                              r.prompt_tokens, block),
                  fmt::format("{}", r.hash_ids.size()));
      }
    }
  }
  // An empty adapter field is a request to the base model.
  if (adapter_col_ && !csv_.field(*adapter_col_).empty())
    r.adapter = static_cast<std::int32_t>(csv_.integer(*adapter_col_, 0, kMaxInt32 - 1));
  last_arrival_s_ = r.arrival_s;
  ++next_id_;
  return r;
}

std::string NativeCsvReader::describe() const {
  return fmt::format("native csv '{}'", csv_.path());
}

}  // namespace pagesim::traces
