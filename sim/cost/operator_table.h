// OperatorTable and OperatorGrid: measured operator latencies (sim/cost/operator_tables/, one
// CSV per operator) and interpolation in them.
//
// OperatorTable is one CSV as written by python/operator_tables/import_aiconfigurator.py:
// '#' comment lines, a header naming the columns, then rows; the last column is latency_us
// (microseconds). Reading checks the header against the columns the caller expects and every
// field the caller asks for as a number; errors are ProfileFormatError naming file:line, the
// column, what was found and what was expected.
//
// OperatorGrid is the latency over some numeric columns (its axes, outermost first) of a
// selection of a table's rows (e.g. one dtype's GEMMs over n, k, m). The rows need not fill a
// full grid: each node keeps the axis values its own rows have (aiconfigurator's attention
// tables leave out the large-batch × long-sequence corner), so a lookup brackets the query
// per axis among the values present below the bracket chosen so far. Per axis:
//   inside the measured range  linear between the two bracketing values, or linear in
//                              sqrt(latency) for an axis marked kSqrt (prefill attention's
//                              sequence length, where latency grows ~quadratically: the blend
//                              aiconfigurator uses, perf_database/perf_interp.rs
//                              OpInterpConfig::grid_sqrt_axis, called from attention.rs
//                              query_context); exact at a measured value;
//   above the largest value    continued along the last two measured values (in the axis'
//                              blend space), slope clamped at >= 0 so that a noisy last pair
//                              never makes latency fall as the operator grows; one measured
//                              value: held;
//   below the smallest value   held at the smallest value's latency (the launch floor).
// A lookup that left the measured range on any axis, at any level, is flagged extrapolated.
// Both are immutable after construction; lookups allocate nothing and are safe from any
// thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pagesim::sim {

class OperatorTable {
 public:
  // Reads the CSV at `path`; its header must be exactly `columns` followed by latency_us.
  // Throws ProfileFormatError (unreadable file, wrong header, a row with the wrong number of
  // fields, a latency that is not a finite number >= 0).
  static OperatorTable read(const std::filesystem::path& path, std::span<const std::string_view> columns);
  // The same from text; errors name `source` as the file.
  static OperatorTable parse(std::string_view text, std::string source, std::span<const std::string_view> columns);

  const std::string& source() const { return source_; }
  std::size_t rows() const { return line_.size(); }
  std::size_t columns() const { return columns_.size(); }
  const std::string& column_name(std::size_t col) const { return columns_[col]; }
  // Index of the column named `name`. REQUIRES: it is one of the columns read.
  std::size_t column(std::string_view name) const;

  // The field of row `row`, column `col` as written. REQUIRES: row < rows(), col < columns().
  std::string_view text(std::size_t row, std::size_t col) const { return fields_[row * columns_.size() + col]; }
  // The field as a finite number >= 0; throws ProfileFormatError naming file:line and column.
  double number(std::size_t row, std::size_t col) const;
  double latency_us(std::size_t row) const { return latency_us_[row]; }
  std::int64_t line(std::size_t row) const { return line_[row]; }  // 1-based line in the file

 private:
  std::string source_;
  std::vector<std::string> columns_;  // without latency_us
  std::vector<std::string> fields_;   // rows() × columns(), row-major
  std::vector<double> latency_us_;
  std::vector<std::int64_t> line_;
};

// How one axis of an OperatorGrid is interpolated (see the header comment).
enum class AxisBlend { kLinear, kSqrt };

struct GridAxis {
  std::size_t column = 0;             // the table column holding this axis' values
  AxisBlend blend = AxisBlend::kLinear;
};

// One lookup's answer: seconds, and whether any axis left the measured range.
struct GridLookup {
  double seconds = 0;
  bool extrapolated = false;
};

class OperatorGrid {
 public:
  // The latency of rows `selection` of `table` over `axes` (outermost first).
  // Throws ProfileFormatError when an axis field is not a number, or when two rows give the
  // same axis values (naming both lines). REQUIRES: selection nonempty, axes nonempty.
  OperatorGrid(const OperatorTable& table, std::span<const std::size_t> selection, std::vector<GridAxis> axes);

  // Seconds at `coords` (one per axis, in axis order). REQUIRES: coords.size() == axes().
  GridLookup operator()(std::span<const double> coords) const;
  std::size_t axes() const { return axes_.size(); }
  // The measured values of the outermost axis (ascending).
  std::span<const double> outer_values() const { return root_.keys; }

 private:
  struct Node {
    std::vector<double> keys;      // ascending axis values present under this node
    std::vector<Node> children;    // one per key above the last axis
    std::vector<double> seconds;   // one per key on the last axis
  };
  double eval(const Node& node, std::span<const double> coords, std::size_t depth, bool& extrapolated) const;

  std::vector<GridAxis> axes_;
  Node root_;
};

}  // namespace pagesim::sim
