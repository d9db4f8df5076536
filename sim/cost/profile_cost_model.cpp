#include "sim/cost/profile_cost_model.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/cost/csv_fields.h"
#include "sim/cost/cost_error.h"

namespace pagesim::sim {

namespace {

constexpr std::string_view kHeader = "part,x,y,seconds";
constexpr std::size_t kColumns = 4;

enum class Part : std::size_t { linear, moe, attn_prefill, attn_decode, lm_head, swap, count };

struct PartInfo {
  std::string_view name;
  bool two_d;
  bool required;
  std::string_view x_meaning;
  std::string_view y_meaning;
};

constexpr std::array<PartInfo, static_cast<std::size_t>(Part::count)> kParts{{
    {"linear", false, true, "tokens in the batch", ""},
    {"moe", false, false, "tokens in the batch", ""},
    {"attn_prefill", false, true, "query-key pairs", ""},
    {"attn_decode", true, true, "decode sequences", "mean context tokens per decode sequence"},
    {"lm_head", false, false, "sampled sequences", ""},
    {"swap", true, true, "blocks", "block size in tokens"},
}};

const PartInfo& info(Part p) { return kParts[static_cast<std::size_t>(p)]; }

std::string part_names() {
  std::string out;
  for (const PartInfo& p : kParts) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

struct Row {
  double x = 0;
  double y = 0;  // 0 for 1-D parts
  double seconds = 0;
  std::int64_t line = 0;
};

using cost_csv::split_fields;
using cost_csv::trim;

class Parser {
 public:
  explicit Parser(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(std::int64_t line, std::string column, std::string found,
                         std::string expected) const {
    throw ProfileFormatError(source_, line, std::move(column), std::move(found),
                             std::move(expected));
  }

  // A finite number >= 0 that fills the whole field.
  double number(std::string_view field, std::int64_t line, const char* column,
                std::string_view meaning) const {
    double value = 0;
    const char* first = field.data();
    const char* last = field.data() + field.size();
    const auto [end, ec] = std::from_chars(first, last, value);
    if (field.empty() || ec != std::errc() || end != last || !std::isfinite(value) || value < 0) {
      fail(line, column, fmt::format("'{}'", field),
           fmt::format("a finite number >= 0 ({})", meaning));
    }
    return value;
  }

  void parse(std::string_view text) {
    std::int64_t line_no = 0;
    bool have_header = false;
    while (!text.empty()) {
      const std::size_t nl = text.find('\n');
      const std::string_view raw = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      ++line_no;
      const std::string_view line = trim(raw);
      if (line.empty() || line.front() == '#') continue;
      if (!have_header) {
        std::string normalized;
        for (std::string_view f : split_fields(line)) {
          if (!normalized.empty()) normalized += ',';
          normalized += f;
        }
        if (normalized != kHeader) {
          fail(line_no, "", fmt::format("'{}'", line), fmt::format("the header '{}'", kHeader));
        }
        have_header = true;
        continue;
      }
      parse_row(line, line_no);
    }
    if (!have_header) {
      fail(0, "", "no header line", fmt::format("the header '{}' then rows", kHeader));
    }
  }

  void parse_row(std::string_view line, std::int64_t line_no) {
    const std::vector<std::string_view> f = split_fields(line);
    if (f.size() != kColumns) {
      fail(line_no, "", fmt::format("{} fields in '{}'", f.size(), line),
           fmt::format("{} fields: {}", kColumns, kHeader));
    }
    const auto it = std::find_if(kParts.begin(), kParts.end(),
                                 [&](const PartInfo& p) { return p.name == f[0]; });
    if (it == kParts.end()) {
      fail(line_no, "part", fmt::format("'{}'", f[0]), fmt::format("one of {}", part_names()));
    }
    const PartInfo& p = *it;
    Row row;
    row.line = line_no;
    row.x = number(f[1], line_no, "x", p.x_meaning);
    if (p.two_d) {
      row.y = number(f[2], line_no, "y", p.y_meaning);
    } else if (!f[2].empty()) {
      fail(line_no, "y", fmt::format("'{}'", f[2]),
           fmt::format("an empty field (part '{}' is indexed by x only)", p.name));
    }
    row.seconds = number(f[3], line_no, "seconds", "measured seconds");
    rows_[static_cast<std::size_t>(it - kParts.begin())].push_back(row);
    ++row_count_;
  }

  // Sorts a part's rows by (x, y) and rejects a repeated grid point.
  std::vector<Row>& sorted(Part part) {
    std::vector<Row>& rows = rows_[static_cast<std::size_t>(part)];
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
      return a.x != b.x ? a.x < b.x : (a.y != b.y ? a.y < b.y : a.line < b.line);
    });
    for (std::size_t i = 1; i < rows.size(); ++i) {
      if (rows[i].x == rows[i - 1].x && rows[i].y == rows[i - 1].y) {
        const std::string point = info(part).two_d
                                      ? fmt::format("x={} y={}", rows[i].x, rows[i].y)
                                      : fmt::format("x={}", rows[i].x);
        fail(rows[i].line, "x", fmt::format("a second '{}' row at {}", info(part).name, point),
             fmt::format("one row per grid point (first at line {})", rows[i - 1].line));
      }
    }
    return rows;
  }

  PiecewiseLinear curve(Part part) {
    const std::vector<Row>& rows = sorted(part);
    std::vector<double> xs, ys;
    for (const Row& r : rows) {
      xs.push_back(r.x);
      ys.push_back(r.seconds);
    }
    return PiecewiseLinear(std::move(xs), std::move(ys));
  }

  BilinearGrid grid(Part part) {
    const std::vector<Row>& rows = sorted(part);
    std::vector<double> xs, ys;
    for (const Row& r : rows) {
      if (xs.empty() || xs.back() != r.x) xs.push_back(r.x);
      ys.push_back(r.y);
    }
    std::sort(ys.begin(), ys.end());
    ys.erase(std::unique(ys.begin(), ys.end()), ys.end());
    // Rows sorted by (x, y) without repeats form the grid exactly when row k is the point
    // (xs[k / ny], ys[k % ny]); the first point where that fails is missing.
    const std::size_t ny = ys.size();
    std::vector<double> values;
    for (std::size_t k = 0; k < xs.size() * ny; ++k) {
      const double x = xs[k / ny];
      const double y = ys[k % ny];
      if (k >= rows.size() || rows[k].x != x || rows[k].y != y) {
        const std::int64_t first_line =
            std::min_element(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
              return a.line < b.line;
            })->line;
        fail(first_line, "", fmt::format("no '{}' row for x={} y={}", info(part).name, x, y),
             fmt::format("a full grid: a row for every x ({}) with every y ({})",
                         info(part).x_meaning, info(part).y_meaning));
      }
      values.push_back(rows[k].seconds);
    }
    return BilinearGrid(std::move(xs), std::move(ys), std::move(values));
  }

  void require_parts() const {
    for (std::size_t i = 0; i < kParts.size(); ++i) {
      if (kParts[i].required && rows_[i].empty()) {
        std::string required;
        for (const PartInfo& p : kParts) {
          if (!p.required) continue;
          if (!required.empty()) required += ", ";
          required += p.name;
        }
        fail(0, "part", fmt::format("no '{}' rows", kParts[i].name),
             fmt::format("at least one row for each of {}", required));
      }
    }
  }

  bool has(Part part) const { return !rows_[static_cast<std::size_t>(part)].empty(); }
  // True when no row of a part an iteration pays for (all but swap) holds a time above 0.
  bool iteration_rows_all_zero() const {
    for (std::size_t i = 0; i < kParts.size(); ++i) {
      if (static_cast<Part>(i) == Part::swap) continue;
      for (const Row& r : rows_[i])
        if (r.seconds > 0) return false;
    }
    return true;
  }
  std::size_t row_count() const { return row_count_; }

 private:
  std::string source_;
  std::array<std::vector<Row>, kParts.size()> rows_;
  std::size_t row_count_ = 0;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ProfileFormatError(path.string(), 0, "", "no readable file",
                             "a profile CSV (see sim/cost/profile_cost_model.h)");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

ProfileCostModel::ProfileCostModel(const std::filesystem::path& path, double iteration_overhead_s, std::string name)
    : ProfileCostModel(read_file(path), name.empty() ? path.string() : std::move(name), iteration_overhead_s) {}

ProfileCostModel::ProfileCostModel(std::string_view csv_text, std::string source_name, double iteration_overhead_s)
    : ProfileCostModel(parse(csv_text, std::move(source_name)), iteration_overhead_s) {}

ProfileCostModel::ProfileCostModel(Tables tables, double iteration_overhead_s)
    : tables_(std::move(tables)), iteration_overhead_s_(iteration_overhead_s) {
  if (!(std::isfinite(iteration_overhead_s) && iteration_overhead_s >= 0))
    throw CostModelError(fmt::format("profile cost model ({}): iteration overhead is {} s, expected a finite "
                                     "number of seconds >= 0",
                                     tables_.source, iteration_overhead_s));
  // Every iteration would take no time: latencies 0, rates unbounded.
  if (tables_.iteration_rows_all_zero && iteration_overhead_s == 0)
    throw ProfileFormatError(tables_.source, 0, "seconds",
                             "0 in every linear, moe, attn_prefill, attn_decode and lm_head row (and no "
                             "iteration overhead)",
                             "some time > 0, or every iteration would take no time");
}

ProfileCostModel::Tables ProfileCostModel::parse(std::string_view text, std::string source) {
  Parser parser(source);
  parser.parse(text);
  parser.require_parts();
  std::optional<PiecewiseLinear> lm_head;
  if (parser.has(Part::lm_head)) lm_head = parser.curve(Part::lm_head);
  std::optional<PiecewiseLinear> moe;
  if (parser.has(Part::moe)) moe = parser.curve(Part::moe);
  return Tables{
      .source = std::move(source),
      .rows = parser.row_count(),
      .iteration_rows_all_zero = parser.iteration_rows_all_zero(),
      .linear = parser.curve(Part::linear),
      .attn_prefill = parser.curve(Part::attn_prefill),
      .attn_decode = parser.grid(Part::attn_decode),
      .swap = parser.grid(Part::swap),
      .lm_head = std::move(lm_head),
      .moe = std::move(moe),
  };
}

double ProfileCostModel::iteration_seconds(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  const auto tokens = static_cast<double>(batch.total_tokens());
  double t = std::max(0.0, tables_.linear(tokens));
  if (tables_.moe) t += std::max(0.0, (*tables_.moe)(tokens));
  if (batch.prefill_seqs > 0) {
    t += std::max(0.0, tables_.attn_prefill(batch.prefill_attention_pairs));
  }
  if (batch.decode_seqs > 0) {
    const double seqs = static_cast<double>(batch.decode_seqs);
    const double mean_context = static_cast<double>(batch.decode_context_tokens) / seqs;
    t += std::max(0.0, tables_.attn_decode(seqs, mean_context));
  }
  if (tables_.lm_head && batch.sampling_seqs() > 0) {
    t += std::max(0.0, (*tables_.lm_head)(static_cast<double>(batch.sampling_seqs())));
  }
  return t + iteration_overhead_s_;
}

double ProfileCostModel::swap_seconds(std::int64_t blocks, std::int64_t block_size) const {
  assert(blocks >= 0 && block_size >= 1);
  if (blocks == 0) return 0;
  return std::max(0.0,
                  tables_.swap(static_cast<double>(blocks), static_cast<double>(block_size)));
}

void ProfileCostModel::check_model(const ModelSpec& model) const {
  if (model.moe_layers > 0 && !tables_.moe) {
    throw ProfileFormatError(tables_.source, 0, "part", "no 'moe' rows",
                             fmt::format("'moe' rows for model {}: {} of its {} layers are MoE layers, which a table "
                                         "without them prices at no time (profile it with pagesim profile)",
                                         model.name, model.moe_layers, model.layers));
  }
  if (model.moe_layers == 0 && tables_.moe) {
    throw ProfileFormatError(tables_.source, 0, "part", "'moe' rows",
                             fmt::format("no 'moe' rows for model {}, which has no MoE layers (the table "
                                         "was profiled for a mixture-of-experts model)",
                                         model.name));
  }
}

std::string ProfileCostModel::describe() const {
  // The overhead is named only when there is one, so a plain profile describes itself as before.
  return fmt::format("profile(file={}, rows={}, lm_head={}{}{})", tables_.source, tables_.rows,
                     tables_.lm_head ? "measured" : "in linear", tables_.moe ? ", moe=measured" : "",
                     iteration_overhead_s_ > 0 ? fmt::format(", iteration_overhead={}s", iteration_overhead_s_) : "");
}

}  // namespace pagesim::sim
