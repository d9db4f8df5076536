#include "traces/json_document.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <iterator>
#include <system_error>
#include <utility>

#include "traces/trace_error.h"
#include "traces/trace_request.h"

namespace pagesim::traces {

namespace {

// `text` with the literals Python's json module writes for non-finite floats — NaN, Infinity,
// -Infinity, which JSON lacks — outside strings turned into the JSON strings "NaN",
// "Infinity" and "-Infinity"; everything else as it is.
std::string with_python_literals_as_strings(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      out += ch;
      if (ch == '\\' && i + 1 < text.size()) out += text[++i];
      else if (ch == '"') in_string = false;
      continue;
    }
    if (ch == '"') in_string = true;
    bool replaced = false;
    for (const std::string_view literal : {"-Infinity", "Infinity", "NaN"}) {
      if (text.compare(i, literal.size(), literal) != 0) continue;
      out += '"';
      out += literal;
      out += '"';
      i += literal.size() - 1;
      replaced = true;
      break;
    }
    if (!replaced) out += ch;
  }
  return out;
}

}  // namespace

bool JsonDocument::is_non_finite_literal(const json& v) {
  return v.is_string() && (v == "NaN" || v == "Infinity" || v == "-Infinity");
}

JsonDocument::JsonDocument(std::string path, std::string_view expected) : path_(std::move(path)) {
  errno = 0;
  std::ifstream in(path_, std::ios::binary);
  if (!in.is_open()) {
    const int err = errno;
    throw TraceError(path_, 0, "", "a readable file", err != 0 ? std::generic_category().message(err) : "none");
  }
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw TraceError(path_, 0, "", "a readable file", "a read error");
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw TraceError(path_, 0, "", std::string(expected), "an empty file");
  try {
    const bool python_literals = text.find("NaN") != text.npos || text.find("Infinity") != text.npos;
    root_ = json::parse(python_literals ? with_python_literals_as_strings(text) : text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
    // nlohmann's message without its "[json.exception.parse_error.101] " prefix; it says
    // where (line and column).
    std::string_view what = e.what();
    if (const auto close = what.find("] "); what.starts_with("[json.") && close != what.npos)
      what.remove_prefix(close + 2);
    throw TraceError(path_, 0, "", std::string(expected), fmt::format("malformed JSON ({})", what));
  }
}

void JsonDocument::fail(const std::string& where, std::string expected, const json& found) const {
  throw TraceError(path_, 0, where, std::move(expected),
                   found.is_null()                   ? std::string("null")
                   : is_non_finite_literal(found) ? found.get<std::string>()
                                                  : quote_found(found.dump()));
}

const JsonDocument::json* JsonDocument::find(const json& object, const std::string& where, const char* key) const {
  if (!object.is_object())
    fail(where.empty() ? "top level" : where, fmt::format("a JSON object (with a key '{}')", key), object);
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

const JsonDocument::json& JsonDocument::at(const json& object, const std::string& where, const char* key) const {
  if (const json* v = find(object, where, key)) return *v;
  const auto it = object.find(key);
  if (it != object.end()) fail(member(where, key), "a value", *it);  // present but null
  std::string keys;
  std::size_t listed = 0;
  for (const auto& item : object.items()) {
    if (++listed > 12) {
      keys += ", ...";
      break;
    }
    keys += (keys.empty() ? "" : ", ") + item.key();
  }
  throw TraceError(path_, 0, where.empty() ? std::string() : where, fmt::format("a key '{}'", key),
                   keys.empty() ? std::string("an empty object") : fmt::format("only the keys {}", keys));
}

std::int64_t JsonDocument::tokens(const json& v, const std::string& where, std::int64_t min_value) const {
  const std::string rule = min_value == 0   ? std::string("a non-negative integer number of tokens")
                           : min_value == 1 ? std::string("a positive integer number of tokens")
                                            : fmt::format("an integer number of tokens >= {}", min_value);
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxTokens))
    fail(where, fmt::format("{} no larger than {}", rule, kMaxTokens), v);
  if (!v.is_number_integer() || v.get<std::int64_t>() < min_value) fail(where, rule, v);
  return v.get<std::int64_t>();
}

double JsonDocument::number(const json& v, const std::string& where, bool non_negative) const {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || (non_negative && v.get<double>() < 0))
    fail(where, non_negative ? "a finite number >= 0" : "a finite number", v);
  return v.get<double>();
}

const JsonDocument::json& JsonDocument::array(const json& v, const std::string& where, std::int64_t length) const {
  if (!v.is_array()) fail(where, length >= 0 ? fmt::format("an array of {} values", length) : "an array", v);
  if (length >= 0 && v.size() != static_cast<std::size_t>(length))
    throw TraceError(path_, 0, where, fmt::format("an array of {} values (one per request)", length),
                     fmt::format("{} values", v.size()));
  return v;
}

std::string JsonDocument::index(const std::string& where, std::size_t i) { return fmt::format("{}[{}]", where, i); }

std::string JsonDocument::member(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : fmt::format("{}.{}", where, key);
}

}  // namespace pagesim::traces
