#include "traces/lengths_csv_reader.h"

#include <fmt/format.h>

#include <cassert>
#include <utility>

#include "traces/trace_error.h"
#include "traces/trace_request.h"

namespace pagesim::traces {

LengthsCsvReader::LengthsCsvReader(std::string path, const LengthColumns& columns, std::string name)
    : csv_(std::move(path), std::move(name)) {
  prompt_col_ = find_column(columns.prompt, kPromptLengthColumns, "prompt");
  output_col_ = find_column(columns.output, kOutputLengthColumns, "output");
}

std::size_t LengthsCsvReader::find_column(const std::string& name,
                                          std::span<const std::string_view> candidates,
                                          const char* what) const {
  if (!name.empty()) return csv_.require(name);
  std::optional<std::size_t> found;
  std::string list;
  for (const auto candidate : candidates) {
    list += (list.empty() ? "" : ", ") + std::string(candidate);
    const auto i = csv_.find(candidate);
    if (!i) continue;
    if (found) {
      throw TraceError(path(), csv_.header_line(), "header",
                       fmt::format("one {}-length column (name it in the workload spec)", what),
                       fmt::format("both '{}' and '{}'", csv_.columns()[*found], candidate));
    }
    found = i;
  }
  if (!found) {
    std::string present;
    for (const auto& c : csv_.columns()) present += (present.empty() ? "" : ", ") + c;
    const char* article = std::string_view(what) == "output" ? "an" : "a";
    throw TraceError(path(), csv_.header_line(), "header",
                     fmt::format("{} {}-length column, one of {}", article, what, list),
                     fmt::format("the columns {}", present));
  }
  return *found;
}

std::optional<LengthRow> LengthsCsvReader::next() {
  if (!csv_.next_row()) return std::nullopt;
  LengthRow row;
  row.prompt_tokens = csv_.integer(prompt_col_, 1, kMaxTokens);
  row.output_tokens = csv_.integer(output_col_, 0, kMaxTokens);
  return row;
}

LengthTable load_lengths(const std::string& path, const LengthColumns& columns,
                         std::int64_t max_total_tokens, const std::string& name) {
  assert(max_total_tokens >= 0);
  LengthsCsvReader reader(path, columns, name);
  LengthTable table;
  table.path = reader.path();
  while (auto row = reader.next()) {
    ++table.rows_read;
    if (max_total_tokens == 0 || row->total_tokens() < max_total_tokens) {
      table.rows.push_back(*row);
    }
  }
  return table;
}

}  // namespace pagesim::traces
