#include "sim/experiment/result_folder.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <system_error>

#include <fmt/format.h>

#include "sim/output/atomic_file.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

// "<two or more digits>-<label>": a sweep point's folder name (experiment.cpp's point_folder).
bool is_point_folder_name(const std::string& name) {
  std::size_t digits = 0;
  while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) ++digits;
  return digits >= 2 && digits < name.size() && name[digits] == '-';
}

// The result files present in `dir`, in result_file_names() order.
std::vector<std::string> result_files_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& name : result_file_names())
    if (fs::is_regular_file(dir / name, ec)) found.push_back(name);
  return found;
}

// The point folders in `dir` holding a result file (removing dead processes' temporaries in
// each on the way), sorted.
std::vector<std::string> point_folders_in(const fs::path& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory(ec) || !is_point_folder_name(name)) continue;
    remove_stale_temporaries(entry.path());
    if (!result_files_in(entry.path()).empty()) found.push_back(name);
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Removes the result files of `dir` and the plots drawn from them; then `dir` itself if
// `remove_empty_dir` and it is empty.
void remove_results(const fs::path& dir, bool remove_empty_dir) {
  for (const auto& name : result_files_in(dir)) fs::remove(dir / name);
  std::error_code ec;
  for (const auto& name : plot_file_names())
    if (fs::is_regular_file(dir / name, ec)) fs::remove(dir / name, ec);
  if (remove_empty_dir && fs::is_empty(dir, ec) && !ec) fs::remove(dir, ec);
}

// "pid N", or that the holder had not yet recorded it.
std::string pid_text(pid_t pid) { return pid > 0 ? fmt::format("pid {}", pid) : "pid not yet known"; }

// Refuses `dir` when it is a point folder of a sweep: named "<NN>-<label>" inside a folder
// that another run holds locked (a sweep writing its points there) or that holds sweep.csv
// (a finished sweep, whose table describes the points there).
void refuse_point_of_a_sweep(const fs::path& dir) {
  fs::path folder = dir.lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();  // "out/00-a/"
  if (!is_point_folder_name(folder.filename().string())) return;
  const fs::path sweep = folder.parent_path().empty() ? fs::path(".") : folder.parent_path();
  if (const std::optional<pid_t> holder = FolderLock::holder(sweep))
    throw SweepPointFolderError(fmt::format(
        "output folder '{}' is a point folder of '{}', which another pagesim run is writing ({}, holding '{}'); "
        "choose another --out",
        dir.string(), sweep.string(), pid_text(*holder), (sweep / FolderLock::kFileName).string()));
  std::error_code ec;
  if (fs::is_regular_file(sweep / "sweep.csv", ec))
    throw SweepPointFolderError(fmt::format(
        "output folder '{}' is a point folder of the sweep in '{}' ('{}' describes its points): results run into "
        "it would not be the ones sweep.csv reports; rerun the sweep into '{}' (--resume keeps its complete points) "
        "or choose another --out",
        dir.string(), sweep.string(), (sweep / "sweep.csv").string(), sweep.string()));
}

// Refuses `dir` when another run holds one of its point folders locked (a run into it, which
// a sweep into `dir` would write over or remove).
void refuse_point_folder_in_use(const fs::path& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_directory(ec) || !is_point_folder_name(entry.path().filename().string())) continue;
    if (const std::optional<pid_t> holder = FolderLock::holder(entry.path())) throw FolderBusy(entry.path(), *holder);
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

std::optional<KeptPoint> read_complete_point(const fs::path& dir, const std::string& resolved_config) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "summary.json", ec) || !fs::is_regular_file(dir / "config.resolved.yaml", ec))
    return std::nullopt;
  if (read_file(dir / "config.resolved.yaml") != resolved_config) return std::nullopt;
  try {
    const auto j = nlohmann::ordered_json::parse(read_file(dir / "summary.json"));
    return KeptPoint{read_record_json<Summary>(j), SummaryNotes::read_from(j)};
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // cut short or edited: run the point again
  }
}

const std::vector<std::string>& result_file_names() {
  static const std::vector<std::string> names = {"summary.json",  "config.resolved.yaml", "requests.csv",
                                                 "iterations.csv", "batches.jsonl",       "timeline.json",
                                                 "sweep.csv",     "client_metrics.json"};
  return names;
}

const std::vector<std::string>& plot_file_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    // pagesim plot (python/pagesim/plot.py) and pagesim.plots.memory (README command 1).
    for (const char* stem :
         {"memory_over_time", "latency_cdf", "sweep_metrics", "sweep_memory", "memory_bars", "fragmentation"})
      for (const char* ext : {"png", "svg", "pdf"}) all.push_back(fmt::format("{}.{}", stem, ext));
    return all;
  }();
  return names;
}

ResultFolder::ResultFolder(const fs::path& dir, ExistingResults policy)
    : dir_(dir), policy_(policy), created_(dir) {
  lock_.emplace(dir_);
  refuse_point_of_a_sweep(dir_);
  refuse_point_folder_in_use(dir_);
  remove_stale_temporaries(dir_);
  if (policy_ != ExistingResults::kRefuse) return;
  const std::vector<std::string> files = result_files_in(dir_);
  const std::vector<std::string> points = point_folders_in(dir_);
  if (files.empty() && points.empty()) return;
  std::string what = fmt::format("{}", fmt::join(files, ", "));
  if (!points.empty()) {
    if (!what.empty()) what += ", ";
    const std::string last = points.size() > 2 ? ", ..., " + points.back() : points.size() == 2 ? ", " + points.back() : "";
    what += fmt::format("{} point folder{} ({}{})", points.size(), points.size() == 1 ? "" : "s", points.front(), last);
  }
  throw ExistingResultsError(fmt::format(
      "output folder '{}' holds the results of another run: {}; pass --overwrite to replace them, or --resume to "
      "keep the points whose results are complete for the same config and run the rest",
      dir_.string(), what));
}

ResultFolder::~ResultFolder() = default;

std::vector<std::optional<KeptPoint>> ResultFolder::prepare(const std::vector<PlannedPoint>& points) {
  std::vector<std::optional<KeptPoint>> kept(points.size());
  std::set<std::string> keep_folders;
  if (policy_ == ExistingResults::kResume) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      kept[i] = read_complete_point(dir_ / points[i].folder, points[i].resolved_config);
      if (kept[i]) keep_folders.insert(points[i].folder);
    }
  }
  // The top level: a kept run without sweep keeps its files (a stale sweep.csv goes).
  if (keep_folders.count("")) {
    std::error_code ec;
    fs::remove(dir_ / "sweep.csv", ec);
    for (const auto& name : plot_file_names())
      if (name.starts_with("sweep_")) fs::remove(dir_ / name, ec);
  } else {
    remove_results(dir_, false);
  }
  for (const auto& name : point_folders_in(dir_))
    if (!keep_folders.count(name)) remove_results(dir_ / name, true);
  return kept;
}

}  // namespace pagesim::sim
