#include "traces/mooncake_reader.h"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "traces/csv_file.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

using nlohmann::json;

// Reads the values of one JSON line, throwing TraceError that names file, line and key.
class LineFields {
 public:
  LineFields(const LineReader& lines, const json& object) : lines_(lines), object_(object) {}

  const json& get(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) {
      std::string keys;
      for (const auto& item : object_.items()) keys += (keys.empty() ? "" : ", ") + item.key();
      throw TraceError(lines_.path(), lines_.line_number(), "", fmt::format("a key '{}'", key),
                       keys.empty() ? std::string("an empty object")
                                    : fmt::format("only the keys {}", keys));
    }
    return *it;
  }

  [[noreturn]] void fail(const char* key, std::string expected, const json& found) const {
    throw TraceError(lines_.path(), lines_.line_number(), subject(key), std::move(expected),
                     quote_found(found.dump()));
  }

  // The value of `key` as an integer in [min_value, kMaxTokens].
  std::int64_t length(const char* key, std::int64_t min_value) const {
    const json& v = get(key);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTokens)) {
      fail(key, fmt::format("{} no larger than {}", integer_expectation(min_value), kMaxTokens), v);
    }
    if (!v.is_number_integer() || v.get<std::int64_t>() < min_value) {
      fail(key, integer_expectation(min_value), v);
    }
    return v.get<std::int64_t>();
  }

 private:
  static std::string subject(const char* key) { return fmt::format("key '{}'", key); }

  const LineReader& lines_;
  const json& object_;
};

// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string parse_error_text(const json::exception& e) {
  std::string_view what = e.what();
  if (const auto close = what.find("] "); what.starts_with("[json.") && close != what.npos) {
    what.remove_prefix(close + 2);
  }
  return std::string(what);
}

}  // namespace

MooncakeReader::MooncakeReader(std::string path, MooncakeOptions options, std::string name)
    : lines_(std::move(path), std::move(name)), options_(options) {
  assert(options_.hash_block_tokens >= 1);
}

std::optional<TraceRequest> MooncakeReader::next() {
  std::string_view line;
  if (!lines_.next(&line)) {
    if (next_id_ == 0 && lines_.line_number() == 0) {
      throw TraceError(lines_.path(), 0, "", "one JSON object per line", "an empty file");
    }
    return std::nullopt;
  }
  json object;
  try {
    object = json::parse(line.begin(), line.end());
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    throw TraceError(lines_.path(), lines_.line_number(), "", "one JSON object per line",
                     fmt::format("malformed JSON ({})", parse_error_text(e)));
  }
  if (!object.is_object()) {
    throw TraceError(lines_.path(), lines_.line_number(), "", "one JSON object per line",
                     fmt::format("a JSON {} {}", object.type_name(), quote_found(object.dump())));
  }
  const LineFields f(lines_, object);

  TraceRequest r;
  r.id = next_id_;
  const json& ts = f.get("timestamp");
  if (!ts.is_number() || !std::isfinite(ts.get<double>()) || ts.get<double>() < 0.0) {
    f.fail("timestamp", "a finite non-negative number of milliseconds", ts);
  }
  const double ms = ts.get<double>();
  if (ms < last_timestamp_ms_) {
    f.fail("timestamp",
           fmt::format("a time >= {} ms, the previous line's (lines must be in arrival order)",
                       last_timestamp_ms_),
           ts);
  }
  r.arrival_s = ms / 1000.0;
  r.prompt_tokens = f.length("input_length", 1);
  r.output_tokens = f.length("output_length", 0);

  const json& ids = f.get("hash_ids");
  if (!ids.is_array()) f.fail("hash_ids", "an array of non-negative integers", ids);
  r.hash_ids.reserve(ids.size());
  for (const json& id : ids) {
    if (!id.is_number_unsigned()) {
      f.fail("hash_ids", "an array of non-negative 64-bit integers", id);
    }
    r.hash_ids.push_back(id.get<std::uint64_t>());
  }
  if (options_.check_hash_count) {
    const std::int64_t want = hash_blocks_for(r.prompt_tokens, options_.hash_block_tokens);
    if (static_cast<std::int64_t>(r.hash_ids.size()) != want) {
      throw TraceError(lines_.path(), lines_.line_number(), "key 'hash_ids'",
                       fmt::format("{} ids for input_length {} at {} tokens per hash block", want,
                                   r.prompt_tokens, options_.hash_block_tokens),
                       fmt::format("{} ids", r.hash_ids.size()));
    }
  }
  last_timestamp_ms_ = ms;
  ++next_id_;
  return r;
}

std::string MooncakeReader::describe() const {
  return fmt::format("mooncake jsonl '{}' (hash block {} tokens)", lines_.path(),
                     options_.hash_block_tokens);
}

}  // namespace pagesim::traces
