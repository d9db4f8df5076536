#include "sim/validate/validate_path.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <exception>
#include <new>
#include <system_error>

#include <fmt/format.h>

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBatchesFile = "batches.jsonl";

// The point number of a sweep's point folder ("07-orca" -> 7), or -1 for another name.
std::int64_t point_number(const std::string& name) {
  std::size_t digits = 0;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  if (digits < 2 || digits > 9 || digits >= name.size() || name[digits] != '-') return -1;
  return std::stoll(name.substr(0, digits));
}

}  // namespace

ValidateTargets validate_targets(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw ValidateError(fmt::format("{}: no such file or folder", path.string()));
  ValidateTargets t;
  if (!fs::is_directory(path, ec)) {
    t.points.push_back({"", path});
    return t;
  }
  if (fs::is_regular_file(path / kBatchesFile, ec)) {
    t.points.push_back({"", path / kBatchesFile});
    return t;
  }
  std::vector<std::pair<std::int64_t, std::string>> folders;
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec) && point_number(name) >= 0) folders.emplace_back(point_number(name), name);
  }
  std::sort(folders.begin(), folders.end());
  bool any = false;
  for (const auto& [number, name] : folders) {
    const fs::path batches = path / name / kBatchesFile;
    const bool has = fs::is_regular_file(batches, ec);
    any |= has;
    t.points.push_back({name, has ? batches : fs::path()});
  }
  if (!any)
    throw ValidateError(fmt::format(
        "{}: expected a batches file, a run's folder holding {} or a sweep's folder whose points (NN-label/) hold "
        "one, found {}; a run writes it when its experiment sets validate.every_n_iterations > 0",
        path.string(), kBatchesFile,
        folders.empty() ? std::string("a folder with neither")
                        : fmt::format("{} point folder{} without one", folders.size(), folders.size() == 1 ? "" : "s")));
  t.sweep = true;
  return t;
}

int run_validate_path(const ValidateOptions& options, const PagedAttentionBackends& backends, std::ostream& out,
                      std::ostream& err) {
  ValidateTargets targets;
  try {
    targets = validate_targets(options.file);
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
  if (!targets.sweep) {
    ValidateOptions one = options;
    one.file = targets.points.front().batches;
    return run_validate_command(one, backends, out, err);
  }
  std::vector<std::string> lines;
  std::size_t passed = 0, failed = 0, without = 0;
  for (const ValidateTargets::Point& p : targets.points) {
    if (p.batches.empty()) {
      ++without;
      lines.push_back(fmt::format("point {}: no {} (validate.every_n_iterations: 0 there)", p.folder, kBatchesFile));
      continue;
    }
    ValidateOptions one = options;
    one.file = p.batches;
    const int status = run_validate_command(one, backends, out, err);
    out << "\n";
    (status == 0 ? passed : failed) += 1;
    lines.push_back(fmt::format("point {}: {}", p.folder, status == 0 ? "PASS" : "FAIL"));
  }
  for (const std::string& l : lines) out << l << "\n";
  out << fmt::format("sweep: {} of {} points pass ({} fail{}): {}\n", passed, passed + failed, failed,
                     without > 0 ? fmt::format(", {} without {}", without, kBatchesFile) : std::string(),
                     failed == 0 ? "PASS" : "FAIL");
  return failed == 0 ? 0 : 1;
}

}  // namespace pagesim::sim
