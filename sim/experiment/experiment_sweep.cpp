#include "sim/experiment/experiment.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <fmt/format.h>
#include "sim/config/config_error.h"
#include "sim/config/sweep.h"
#include "sim/experiment/result_folder.h"
#include "sim/metrics/slo.h"
#include "sim/output/atomic_file.h"
#include "sim/experiment/run_building.h"

namespace pagesim::sim {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string point_folder(std::size_t index, const std::string& label) {
  std::string safe;
  for (char ch : label) safe += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '=' || ch == '_') ? ch : '_';
  std::string name = fmt::format("{:02}-{}", index, safe);
  // File systems refuse names past 255 bytes (NAME_MAX), which a long label or a grid of many
  // axes reaches: such a name keeps its first bytes and ends in a hash of the whole (FNV-1a,
  // stable everywhere), so it stays unique and the same on every run; sweep.csv keeps the label.
  constexpr std::size_t kMaxName = 255;
  if (name.size() > kMaxName) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ULL;
    const std::string tail = fmt::format("~{:016x}", h);
    name = name.substr(0, kMaxName - tail.size()) + tail;
  }
  return name;
}

namespace {

// ---- Sweeps ----

// What became of a sweep's point: sweep.csv's `status` after a failure stopped the sweep.
enum class PointStatus { kNotRun, kOk, kFailed };

constexpr std::string_view status_name(PointStatus s) {
  return s == PointStatus::kOk ? "ok" : s == PointStatus::kFailed ? "failed" : "not run";
}

// Runs every point not `kept` (--resume) on `jobs` threads; each point is its own simulation, its config made
// under `yaml` (yaml-cpp nodes cannot be read concurrently). With several jobs the progress
// callbacks are serialised. After a failure no new point starts; once the running ones are
// done, the first failing point's error (by index) is returned (null when every point ran).
// `results` and `status` get one entry per point: a point's result is valid where its
// status is kOk.
std::exception_ptr run_sweep_points(const Sweep& sweep, const std::filesystem::path& out,
                                    const ProgressFactory& progress, std::size_t jobs,
                                    const std::vector<std::optional<KeptPoint>>& kept,
                                    std::vector<PointResult>& results, std::vector<PointStatus>& status) {
  const std::size_t n = sweep.size();
  results.assign(n, PointResult{});
  status.assign(n, PointStatus::kNotRun);
  std::vector<std::exception_ptr> errors(n);
  std::mutex yaml, printing;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= n) return;
      ExperimentConfig config;
      ProgressFn report;
      {
        std::lock_guard<std::mutex> lock(yaml);
        config = sweep.config(i);
        results[i].label = sweep.label(i);
        results[i].assignments = sweep.assignments(i);
        if (kept[i]) {
          results[i].summary = kept[i]->summary;  // --resume: complete for this very config
          results[i].notes = kept[i]->notes;
          results[i].kept = true;
          status[i] = PointStatus::kOk;
          continue;
        }
        if (progress) report = progress(results[i].label, i, n);
      }
      if (report && jobs > 1)
        report = [&printing, inner = std::move(report)](double now, std::int64_t arrived, std::int64_t finished) {
          std::lock_guard<std::mutex> lock(printing);
          inner(now, arrived, finished);
        };
      // A point's failure names the point (label and values), as plan_points' errors do.
      try {
        results[i].summary = run_experiment(config, out / point_folder(i, results[i].label), report, &results[i].notes);
        status[i] = PointStatus::kOk;
      } catch (const ConfigError& e) {
        std::lock_guard<std::mutex> lock(yaml);
        errors[i] = std::make_exception_ptr(sweep.in_point(i, e));
        status[i] = PointStatus::kFailed;
        failed = true;
      } catch (const SimulationError& e) {
        std::lock_guard<std::mutex> lock(yaml);
        errors[i] = std::make_exception_ptr(
            SimulationError(fmt::format("{} (in sweep point {} '{}')", e.what(), i, results[i].label)));
        status[i] = PointStatus::kFailed;
        failed = true;
      } catch (...) {
        errors[i] = std::current_exception();
        status[i] = PointStatus::kFailed;
        failed = true;
      }
    }
  };
  if (jobs <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < std::min(jobs, n); ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  for (const auto& e : errors)
    if (e) return e;
  return nullptr;
}

// Each swept key's value for point `index`, in sweep.keys() order: the value the point sets,
// as written; for a key it does not set (another case's), its effective value, from the
// config.resolved.yaml the point wrote into `dir` (what ran, derived values included), else
// from its config with every default written out. Empty only for a key neither holds.
std::vector<std::string> swept_values(const Sweep& sweep, std::size_t index, const std::filesystem::path& dir) {
  const std::vector<std::pair<std::string, std::string>> assigned = sweep.assignments(index);
  std::optional<YAML::Node> resolved, every_field;
  std::vector<std::string> values;
  for (const std::string& k : sweep.keys()) {
    const auto it = std::find_if(assigned.begin(), assigned.end(), [&](const auto& a) { return a.first == k; });
    if (it != assigned.end()) {
      values.push_back(it->second);
      continue;
    }
    if (!resolved) {
      try {
        resolved = YAML::LoadFile((dir / "config.resolved.yaml").string());
      } catch (const YAML::Exception&) {
        resolved = YAML::Node();  // unreadable: the defaults below stand in
      }
    }
    std::optional<std::string> v = value_text_at(*resolved, k);
    if (!v) {
      if (!every_field) every_field = to_yaml(sweep.config(index), true);
      v = value_text_at(*every_field, k);
    }
    values.push_back(v.value_or(""));
  }
  return values;
}

// sweep.csv: one row per point; host timings stay in each summary.json (reproducibility).
// A sweep of cases adds a `case` column (the point's case label) before the swept keys, and
// every swept key has a value on every row (swept_values), so grouping by a key keeps the
// cases that leave it at its default. The notes' columns (slo.*, cluster.*) follow, their
// union over the points in order of first appearance, empty where a point has none; without
// any the table is as it was. A sweep a failure stopped (`status` given, some point not ok)
// ends each row with a `status` column (ok, failed, not run) and leaves the results of the
// points not ok empty; a sweep whose every point ran has no such column.
void write_sweep_csv(const Sweep& sweep, const std::vector<PointResult>& results, const std::filesystem::path& out,
                     const std::vector<PointStatus>* status = nullptr) {
  const auto ok = [&](std::size_t i) { return status == nullptr || (*status)[i] == PointStatus::kOk; };
  bool stopped = false;
  for (std::size_t i = 0; i < results.size(); ++i) stopped |= !ok(i);
  const std::vector<std::string> keys = sweep.keys();
  const bool cases = sweep.has_cases();
  AtomicFile csv(out / "sweep.csv");
  std::string header = cases ? "point,label,case" : "point,label";
  for (const auto& k : keys) header += "," + csv_field(k);
  // The columns of every point, in first-seen order: the summary's, then the notes' (slo,
  // cluster). Points differ only by optional objects (prefix_cache when the sweep turns the
  // prefix cache on and off, slo, cluster), whose cells stay empty where a point has none.
  std::vector<std::string> columns;
  std::vector<std::vector<std::pair<std::string, std::string>>> cells(results.size());
  auto add = [&](std::size_t i, const std::string& k, std::string cell) {
    if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
    cells[i].emplace_back(k, std::move(cell));
  };
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!ok(i)) continue;
    for (const auto& [k, v] : flatten(results[i].summary.to_json()))
      if (!is_host_timing(k)) add(i, k, v.dump());
    for (const auto& [k, v] : flatten_note_columns(results[i].notes))
      add(i, k, v.is_string() ? csv_field(v.get<std::string>()) : v.dump());
  }
  for (const auto& k : columns) header += "," + csv_field(k);
  if (stopped) header += ",status";
  csv.stream() << header << '\n';
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string folder = point_folder(i, sweep.label(i));  // a point not run has no result's label
    std::string row = fmt::format("{},{}", folder, csv_field(sweep.label(i)));
    if (cases) row += "," + csv_field(sweep.case_label(i));
    for (const std::string& v : swept_values(sweep, i, out / folder)) row += "," + csv_field(v);
    for (const auto& k : columns) {
      auto it = std::find_if(cells[i].begin(), cells[i].end(), [&](const auto& kv) { return kv.first == k; });
      row += "," + (it == cells[i].end() ? std::string() : it->second);
    }
    if (stopped) row += "," + csv_field(std::string(status_name((*status)[i])));
    csv.stream() << row << '\n';
  }
  csv.commit();
}

}  // namespace

std::vector<PlannedPoint> plan_points(const Sweep& sweep, std::unique_ptr<traces::RequestSource>* workload) {
  std::vector<PlannedPoint> plan;
  plan.reserve(sweep.size());
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    try {
      const ExperimentConfig config = sweep.config(i);
      Run checked = check_run(config);
      plan.push_back({sweep.swept() ? point_folder(i, sweep.label(i)) : std::string(),
                      resolved_config_text(config, checked)});
      if (workload && !sweep.swept()) *workload = std::move(checked.source);
    } catch (const ConfigError& e) {
      throw sweep.in_point(i, e);  // one run: the error as it was, or blamed on its --set
    }
  }
  return plan;
}

void write_sweep_table(const Sweep& sweep, const std::vector<PointResult>& results, const std::filesystem::path& out) {
  write_sweep_csv(sweep, results, out);
}

std::vector<PointResult> run_experiment_file(const std::string& file, const std::vector<std::string>& overrides,
                                             const std::filesystem::path& out, const ProgressFactory& progress,
                                             std::size_t jobs, ExistingResults existing, SweepStop* stopped) {
  return run_experiment_sweep(Sweep::from_file(file, overrides), out, progress, jobs, existing, stopped);
}

std::vector<PointResult> run_experiment_sweep(const Sweep& sweep, const std::filesystem::path& out,
                                              const ProgressFactory& progress, std::size_t jobs,
                                              ExistingResults existing, SweepStop* stopped) {
  const bool swept = sweep.swept();
  std::unique_ptr<traces::RequestSource> workload;  // the run without sweep's, as checked
  const std::vector<PlannedPoint> plan = plan_points(sweep, &workload);
  ResultFolder folder(out, existing);
  const std::vector<std::optional<KeptPoint>> kept = folder.prepare(plan);
  std::vector<PointResult> results;
  if (!swept) {
    PointResult r;
    if (kept[0]) {
      r.summary = kept[0]->summary;  // --resume: complete for this very config
      r.notes = kept[0]->notes;
      r.kept = true;
    } else
      r.summary = run_experiment(sweep.config(0), out, progress ? progress("", 0, 1) : ProgressFn{}, &r.notes,
                                 std::move(workload));
    results.push_back(std::move(r));
  } else {
    std::vector<PointStatus> status;
    const std::exception_ptr error = run_sweep_points(sweep, out, progress, jobs, kept, results, status);
    if (error) {
      // The points that finished are not lost: sweep.csv lists every point with its status.
      SweepStop stop{.points = sweep.size()};
      for (const PointStatus s : status)
        (s == PointStatus::kOk ? stop.finished : s == PointStatus::kFailed ? stop.failed : stop.not_run) += 1;
      if (stop.finished > 0) {
        write_sweep_csv(sweep, results, out, &status);
        stop.table_written = true;
        folder.finish();
      }
      if (stopped) *stopped = stop;
      std::rethrow_exception(error);
    }
    write_sweep_csv(sweep, results, out);
  }
  folder.finish();
  return results;
}

}  // namespace pagesim::sim
