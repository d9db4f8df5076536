#include "sim/cost/operator_table.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "sim/cost/csv_fields.h"
#include "sim/cost/cost_error.h"

namespace pagesim::sim {

namespace {

constexpr std::string_view kLatencyColumn = "latency_us";

using cost_csv::split_fields;
using cost_csv::trim;

// A finite number >= 0 filling the whole field, or nullopt-like false.
bool parse_number(std::string_view field, double& value) {
  const char* last = field.data() + field.size();
  const auto [end, ec] = std::from_chars(field.data(), last, value);
  return !field.empty() && ec == std::errc() && end == last && std::isfinite(value) && value >= 0;
}

}  // namespace

OperatorTable OperatorTable::read(const std::filesystem::path& path, std::span<const std::string_view> columns) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ProfileFormatError(path.string(), 0, "", "no readable file", "an operator table CSV");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path.string(), columns);
}

OperatorTable OperatorTable::parse(std::string_view text, std::string source, std::span<const std::string_view> columns) {
  OperatorTable t;
  t.source_ = std::move(source);
  for (std::string_view c : columns) t.columns_.emplace_back(c);
  std::string header;
  for (std::string_view c : columns) header += std::string(c) + ",";
  header += kLatencyColumn;

  std::int64_t line_no = 0;
  bool have_header = false;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const std::vector<std::string_view> f = split_fields(line);
    if (!have_header) {
      std::string found;
      for (std::string_view x : f) found += (found.empty() ? "" : ",") + std::string(x);
      if (found != header)
        throw ProfileFormatError(t.source_, line_no, "", fmt::format("the header '{}'", found),
                                 fmt::format("the header '{}'", header));
      have_header = true;
      continue;
    }
    if (f.size() != columns.size() + 1)
      throw ProfileFormatError(t.source_, line_no, "", fmt::format("{} fields in '{}'", f.size(), line),
                               fmt::format("{} fields: {}", columns.size() + 1, header));
    double latency = 0;
    if (!parse_number(f.back(), latency))
      throw ProfileFormatError(t.source_, line_no, std::string(kLatencyColumn), fmt::format("'{}'", f.back()),
                               "a finite number of microseconds >= 0");
    for (std::size_t c = 0; c < columns.size(); ++c) t.fields_.emplace_back(f[c]);
    t.latency_us_.push_back(latency);
    t.line_.push_back(line_no);
  }
  if (!have_header)
    throw ProfileFormatError(t.source_, 0, "", "no header line", fmt::format("the header '{}' then rows", header));
  return t;
}

std::size_t OperatorTable::column(std::string_view name) const {
  const auto it = std::find(columns_.begin(), columns_.end(), name);
  assert(it != columns_.end());
  return static_cast<std::size_t>(it - columns_.begin());
}

double OperatorTable::number(std::size_t row, std::size_t col) const {
  double value = 0;
  if (!parse_number(text(row, col), value))
    throw ProfileFormatError(source_, line_[row], columns_[col], fmt::format("'{}'", text(row, col)),
                             "a finite number >= 0");
  return value;
}

OperatorGrid::OperatorGrid(const OperatorTable& table, std::span<const std::size_t> selection,
                           std::vector<GridAxis> axes)
    : axes_(std::move(axes)) {
  assert(!selection.empty() && !axes_.empty());
  const std::size_t n_axes = axes_.size();
  struct Point {
    std::vector<double> coords;
    double seconds;
    std::size_t row;
  };
  std::vector<Point> points;
  points.reserve(selection.size());
  for (std::size_t row : selection) {
    Point p{{}, table.latency_us(row) * 1e-6, row};
    for (const GridAxis& a : axes_) p.coords.push_back(table.number(row, a.column));
    points.push_back(std::move(p));
  }
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.coords < b.coords; });
  for (std::size_t i = 1; i < points.size(); ++i)
    if (points[i].coords == points[i - 1].coords) {
      std::string where;
      for (std::size_t d = 0; d < n_axes; ++d)
        where += fmt::format("{}{}={}", d ? ", " : "", table.column_name(axes_[d].column), points[i].coords[d]);
      throw ProfileFormatError(table.source(), table.line(points[i].row), "",
                               fmt::format("a second row for {} (the first at line {})", where,
                                           table.line(points[i - 1].row)),
                               "one row per shape");
    }
  // Nodes over the sorted range [lo, hi) at `depth`.
  auto build = [&](auto&& self, Node& node, std::size_t lo, std::size_t hi, std::size_t depth) -> void {
    std::size_t i = lo;
    while (i < hi) {
      std::size_t j = i;
      while (j < hi && points[j].coords[depth] == points[i].coords[depth]) ++j;
      node.keys.push_back(points[i].coords[depth]);
      if (depth + 1 == n_axes) {
        node.seconds.push_back(points[i].seconds);  // one row: the duplicate check above
      } else {
        node.children.emplace_back();
        self(self, node.children.back(), i, j, depth + 1);
      }
      i = j;
    }
  };
  build(build, root_, 0, points.size(), 0);
}

GridLookup OperatorGrid::operator()(std::span<const double> coords) const {
  assert(coords.size() == axes_.size());
  GridLookup out;
  out.seconds = eval(root_, coords, 0, out.extrapolated);
  return out;
}

double OperatorGrid::eval(const Node& node, std::span<const double> coords, std::size_t depth,
                          bool& extrapolated) const {
  const bool last = depth + 1 == axes_.size();
  const bool sqrt_blend = axes_[depth].blend == AxisBlend::kSqrt;
  auto at = [&](std::size_t i) {
    return last ? node.seconds[i] : eval(node.children[i], coords, depth + 1, extrapolated);
  };
  auto to_space = [&](double v) { return sqrt_blend ? std::sqrt(std::max(v, 0.0)) : v; };
  auto from_space = [&](double v) { return sqrt_blend ? v * v : v; };

  const std::vector<double>& keys = node.keys;
  const double c = coords[depth];
  const auto it = std::lower_bound(keys.begin(), keys.end(), c);
  if (it != keys.end() && *it == c) return at(static_cast<std::size_t>(it - keys.begin()));
  extrapolated |= it == keys.begin() || it == keys.end();
  if (it == keys.begin() || keys.size() == 1) return at(it == keys.end() ? keys.size() - 1 : 0);
  if (it == keys.end()) {
    const std::size_t n = keys.size();
    const double a = to_space(at(n - 2));
    const double b = to_space(at(n - 1));
    const double slope = std::max(0.0, (b - a) / (keys[n - 1] - keys[n - 2]));
    return from_space(b + slope * (c - keys[n - 1]));
  }
  const std::size_t hi = static_cast<std::size_t>(it - keys.begin());
  const double w = (c - keys[hi - 1]) / (keys[hi] - keys[hi - 1]);
  const double a = to_space(at(hi - 1));
  const double b = to_space(at(hi));
  return from_space(a + (b - a) * w);
}

}  // namespace pagesim::sim
