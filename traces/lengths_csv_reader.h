// LengthsCsvReader: streams (prompt, output) length rows from a lengths-only CSV file, and
// load_lengths(), which reads such a file whole into a LengthTable.
//
// A lengths file has no timestamps (e.g. the vLLM paper's ShareGPT lengths
// `input_tokens,output_tokens`, or `num_prefill_tokens,num_decode_tokens,...`); arrivals come
// from an arrival process (lengths_csv_source.h, cycle_shuffle_source.h, length_model.h).
// The two columns are named by LengthColumns or detected from the header; other columns are
// ignored. Prompt lengths must be >= 1, output lengths >= 0.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "traces/csv_file.h"

namespace pagesim::traces {

struct LengthRow {
  std::int64_t prompt_tokens = 0;  // >= 1
  std::int64_t output_tokens = 0;  // >= 0
  std::int64_t total_tokens() const { return prompt_tokens + output_tokens; }
  friend bool operator==(const LengthRow&, const LengthRow&) = default;
};

// Column names tried, in order, when LengthColumns leaves a name empty. Exactly one of each
// list must be present.
inline constexpr std::array<std::string_view, 5> kPromptLengthColumns = {
    "input_tokens", "num_prefill_tokens", "prompt_tokens", "input_length", "ContextTokens"};
inline constexpr std::array<std::string_view, 5> kOutputLengthColumns = {
    "output_tokens", "num_decode_tokens", "output_length", "GeneratedTokens", "output_len"};

struct LengthColumns {
  std::string prompt;  // column of prompt lengths; empty = detect from kPromptLengthColumns
  std::string output;  // column of output lengths; empty = detect from kOutputLengthColumns
};

class LengthsCsvReader {
 public:
  // Opens `path` and finds the two columns. Throws TraceError (missing or ambiguous column).
  // `name`: as LineReader's.
  explicit LengthsCsvReader(std::string path, const LengthColumns& columns = {}, std::string name = {});

  // The next row, or nullopt at the end of the file. Throws TraceError on a bad row.
  std::optional<LengthRow> next();

  const std::string& path() const { return csv_.path(); }
  std::int64_t line_number() const { return csv_.line_number(); }
  const std::string& prompt_column() const { return csv_.columns()[prompt_col_]; }
  const std::string& output_column() const { return csv_.columns()[output_col_]; }

 private:
  std::size_t find_column(const std::string& name, std::span<const std::string_view> candidates,
                          const char* what) const;

  CsvFile csv_;
  std::size_t prompt_col_, output_col_;
};

// A lengths file held in memory (16 bytes per kept row).
struct LengthTable {
  std::string path;
  std::vector<LengthRow> rows;  // kept rows, in file order
  std::uint64_t rows_read = 0;  // data rows in the file, kept or not
};

// Reads every row of `path`, keeping those with prompt + output < max_total_tokens (strict,
// as in the vLLM artifact); max_total_tokens == 0 keeps all. Throws TraceError.
// REQUIRES: max_total_tokens >= 0.
// `name`: as LineReader's (LengthTable::path is the name).
LengthTable load_lengths(const std::string& path, const LengthColumns& columns = {},
                         std::int64_t max_total_tokens = 0, const std::string& name = {});

}  // namespace pagesim::traces
