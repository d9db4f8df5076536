// JsonDocument: a whole JSON file parsed into memory, with checked access to its values whose
// errors name the file and the value's place in the document, e.g.
//   run.json: input_lens[3]: expected a positive integer number of tokens, found '-1'
//   reqs.json: [12].info.output_token_times: expected an array of times, found 'null'
// For readers of result files that hold one JSON value (vllm_bench_reader.h,
// inference_perf_requests_reader.h). Python's json module writes NaN, Infinity and -Infinity
// for non-finite floats (vLLM's result files hold them where a metric has no finite value),
// which JSON lacks: they are read as the strings "NaN", "Infinity" and "-Infinity"
// (is_non_finite_literal), which number() refuses by name ("found Infinity") and a reader
// that takes an infinite value (vLLM's request_rate) checks for itself. Owns the parsed
// value; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace pagesim::traces {

class JsonDocument {
 public:
  using json = nlohmann::json;

  // Reads and parses `path`. Throws TraceError naming the file when it cannot be read, is
  // empty or is not one JSON value (nlohmann's message gives the line and column), saying
  // `expected` (what the file should hold).
  JsonDocument(std::string path, std::string_view expected);

  const json& root() const { return root_; }
  const std::string& path() const { return path_; }

  // Throws TraceError: "<path>: <where>: expected <expected>, found <found as JSON>".
  [[noreturn]] void fail(const std::string& where, std::string expected, const json& found) const;

  // `object`[key]. `where` names `object` ("" for the root). Throws TraceError when `object`
  // is not an object or lacks the key (listing the keys it has).
  const json& at(const json& object, const std::string& where, const char* key) const;
  // The same, or nullptr when the key is absent or null.
  const json* find(const json& object, const std::string& where, const char* key) const;

  // `v` as an integer in [min_value, kMaxTokens] (trace_request.h).
  std::int64_t tokens(const json& v, const std::string& where, std::int64_t min_value) const;
  // `v` as a finite number (>= 0 when `non_negative`).
  double number(const json& v, const std::string& where, bool non_negative) const;
  // `v` as an array (of any length, or exactly `length` when length >= 0).
  const json& array(const json& v, const std::string& where, std::int64_t length = -1) const;

  // True when `v` is one of Python's non-finite literals as read: "NaN", "Infinity", "-Infinity".
  static bool is_non_finite_literal(const json& v);

  // "input_lens" + 3 -> "input_lens[3]"; "" + 3 -> "[3]"; "[3]" + "info" -> "[3].info".
  static std::string index(const std::string& where, std::size_t i);
  static std::string member(const std::string& where, std::string_view key);

 private:
  std::string path_;
  json root_;
};

}  // namespace pagesim::traces
