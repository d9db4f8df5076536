// pagesim._core: the simulator's experiment entry points, for the Python package
// (python/pagesim). Thin on purpose: an Experiment is the CLI's Sweep (sim/config/sweep.h)
// and its methods call the functions `pagesim run` calls (sim/experiment/experiment.h), so
// a run from Python writes the same files, byte for byte, and fails with the same
// file:line: key messages. Python owns the conveniences (dicts, DataFrames, executors).
//
// Threads: every method releases the GIL while it works, so Python threads run points in
// parallel. An Experiment guards its Sweep (whose YAML yaml-cpp cannot read concurrently)
// with its own mutex, held only while the sweep is read; a simulation runs without it.
// C++ exceptions become the Python classes registered below (ConfigError, ...), their
// message the C++ what().
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include "sim/config/config_error.h"
#include "sim/config/sweep.h"
#include "sim/core/simulation_error.h"
#include "sim/cost/cost_error.h"
#include "sim/experiment/experiment.h"
#include "sim/experiment/result_folder.h"
#include "sim/experiment/summary_table.h"
#include "sim/output/atomic_file.h"
#include "sim/output/build_info.h"
#include "sim/output/folder_lock.h"
#include "traces/trace_error.h"

namespace py = pybind11;

namespace pagesim::sim {
namespace {

ExistingResults existing_policy(const std::string& name) {
  if (name == "refuse") return ExistingResults::kRefuse;
  if (name == "overwrite") return ExistingResults::kOverwrite;
  if (name == "resume") return ExistingResults::kResume;
  throw std::invalid_argument("existing: expected one of refuse, overwrite, resume, found '" + name + "'");
}

// One point of a finished run: (label, folder relative to the result folder, warnings).
using PointInfo = std::tuple<std::string, std::string, std::vector<std::string>>;

// An experiment read from YAML text, with its sweep expanded lazily (sweep.h).
class Experiment {
 public:
  Experiment(const std::string& text, const std::string& file, const std::vector<std::string>& overrides)
      : sweep_(Sweep::from_text(text, file, overrides)) {}
  explicit Experiment(Sweep sweep) : sweep_(std::move(sweep)) {}

  bool swept() const { return sweep_.swept(); }
  std::size_t size() const { return sweep_.size(); }
  std::vector<std::string> keys() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return sweep_.keys();
  }
  std::string label(std::size_t index) const {
    check_index(index);
    std::lock_guard<std::mutex> lock(mutex_);
    return sweep_.label(index);
  }
  std::vector<std::pair<std::string, std::string>> assignments(std::size_t index) const {
    check_index(index);
    std::lock_guard<std::mutex> lock(mutex_);
    return sweep_.assignments(index);
  }
  std::string folder(std::size_t index) const {
    check_index(index);
    std::lock_guard<std::mutex> lock(mutex_);
    return sweep_.swept() ? point_folder(index, sweep_.label(index)) : std::string();
  }

  // Every point parsed and built: [(folder, config.resolved.yaml text)]. Throws ConfigError
  // for a bad point, naming its values.
  std::vector<std::pair<std::string, std::string>> plan() const {
    std::vector<PlannedPoint> points;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      points = plan_points(sweep_);
    }
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& p : points) out.emplace_back(std::move(p.folder), std::move(p.resolved_config));
    return out;
  }

  // `pagesim run`: claims `out`, runs every point (`jobs` at once), writes the files and
  // sweep.csv. Holds the mutex throughout (run_experiment_sweep reads the sweep).
  std::vector<PointInfo> run(const std::filesystem::path& out, std::size_t jobs, const std::string& existing) const {
    const ExistingResults policy = existing_policy(existing);
    std::lock_guard<std::mutex> lock(mutex_);
    const std::vector<PointResult> results = run_experiment_sweep(sweep_, out, {}, jobs, policy);
    std::vector<PointInfo> info;
    for (std::size_t i = 0; i < results.size(); ++i)
      info.emplace_back(results[i].label, sweep_.swept() ? point_folder(i, results[i].label) : std::string(),
                        results[i].notes.warnings);
    return info;
  }

  // One point, as a sweep runs it, into `dir` (created; claimed by nobody: the caller owns
  // it). Returns its warnings.
  std::vector<std::string> run_point(std::size_t index, const std::filesystem::path& dir) const {
    check_index(index);
    ExperimentConfig config;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      config = sweep_.config(index);
    }
    SummaryNotes notes;
    run_experiment(config, dir, {}, &notes);
    return notes.warnings;
  }

  // sweep.csv for points whose results lie complete in out/<folder> (plan()'s texts):
  // each point's summary.json read back, as --resume does. Throws std::runtime_error naming
  // a point whose results are missing or not for this config.
  void write_table(const std::filesystem::path& out, const std::vector<std::pair<std::string, std::string>>& plan) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!sweep_.swept()) throw std::invalid_argument("write_table: the experiment has no sweep");
    write_sweep_table(sweep_, read_results(out, plan), out);
  }

  // `pagesim run`'s closing table (summary_table.h) with its note, and its --resume note, for
  // the points whose results lie complete in out/<folder>, read back as write_table() reads
  // them; kept[i]: point i was kept by a resume, not run.
  std::pair<std::string, std::string> results_table(const std::filesystem::path& out,
                                                    const std::vector<std::pair<std::string, std::string>>& plan,
                                                    const std::vector<bool>& kept) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<PointResult> results = read_results(out, plan);
    if (kept.size() != results.size()) throw std::invalid_argument("results_table: kept is not one flag per point");
    for (std::size_t i = 0; i < results.size(); ++i) results[i].kept = kept[i];
    return {format_results_table(results) + kResultsTableNote, format_resume_note(results)};
  }

 private:
  // Every point's summary.json read back. Throws std::runtime_error naming a point whose
  // results are missing or not for this config. REQUIRES: mutex_ held.
  std::vector<PointResult> read_results(const std::filesystem::path& out,
                                        const std::vector<std::pair<std::string, std::string>>& plan) const {
    if (plan.size() != sweep_.size()) throw std::invalid_argument("the plan is not this experiment's");
    std::vector<PointResult> results(sweep_.size());
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::optional<KeptPoint> kept = read_complete_point(out / plan[i].first, plan[i].second);
      if (!kept)
        throw std::runtime_error("point " + (plan[i].first.empty() ? std::string("run") : plan[i].first) +
                                 ": no complete results for this config in " + (out / plan[i].first).string());
      results[i].label = sweep_.swept() ? sweep_.label(i) : std::string();
      results[i].assignments = sweep_.assignments(i);
      results[i].summary = std::move(kept->summary);
      results[i].notes = std::move(kept->notes);
    }
    return results;
  }

  void check_index(std::size_t index) const {
    if (index >= sweep_.size())
      throw py::index_error("point " + std::to_string(index) + " of a sweep of " + std::to_string(sweep_.size()));
  }

  Sweep sweep_;
  mutable std::mutex mutex_;
};

// A claimed result folder (result_folder.h) held by Python for the length of a sweep.
class ClaimedFolder {
 public:
  ClaimedFolder(const std::filesystem::path& dir, const std::string& existing)
      : folder_(std::in_place, dir, existing_policy(existing)) {}

  // Which points are kept (--resume: complete for the same config); the rest is cleared.
  std::vector<bool> prepare(const std::vector<std::pair<std::string, std::string>>& plan) {
    std::vector<PlannedPoint> points;
    for (const auto& [folder, resolved] : plan) points.push_back({folder, resolved});
    std::vector<bool> kept;
    for (const auto& k : live().prepare(points)) kept.push_back(k.has_value());
    return kept;
  }
  void finish() { live().finish(); }
  // Unlocks (removing the folders the claim created if still empty, unless finished).
  void release() { folder_.reset(); }

 private:
  ResultFolder& live() {
    if (!folder_) throw std::runtime_error("the result folder was released");
    return *folder_;
  }
  std::optional<ResultFolder> folder_;
};

// Writes `files` (name -> bytes) into `dir`, each atomically (atomic_file.h), summary.json
// last: its presence means the point is complete.
void write_point_files(const std::filesystem::path& dir, const std::map<std::string, py::bytes>& files) {
  std::vector<std::pair<std::string, std::string>> contents;
  for (const auto& [name, data] : files) {
    if (name.find('/') != std::string::npos || name == "." || name == "..")
      throw std::invalid_argument("write_point_files: not a file name: '" + name + "'");
    contents.emplace_back(name, std::string(data));
  }
  std::stable_partition(contents.begin(), contents.end(), [](const auto& c) { return c.first != "summary.json"; });
  py::gil_scoped_release release;
  for (const auto& [name, data] : contents) {
    AtomicFile f(dir / name);
    f.stream().write(data.data(), static_cast<std::streamsize>(data.size()));
    f.commit();
  }
}

}  // namespace
}  // namespace pagesim::sim

PYBIND11_MODULE(_core, m) {
  using namespace pagesim::sim;
  using Release = py::call_guard<py::gil_scoped_release>;
  m.doc() = "pagesim's compiled core: the experiment entry points `pagesim run` uses (see the pagesim package).";
  m.attr("__version__") = std::string(pagesim_version());
  m.attr("__commit__") = std::string(pagesim_commit());

  // Exceptions: ConfigError and TraceError are ValueErrors (bad input); the folder's are
  // OSErrors. Their text is the CLI's message (file:line: key: what was found / expected).
  py::register_exception<ConfigError>(m, "ConfigError", PyExc_ValueError);
  py::register_exception<pagesim::traces::TraceError>(m, "TraceError", PyExc_ValueError);
  py::register_exception<CostModelError>(m, "CostModelError", PyExc_ValueError);
  py::register_exception<SimulationError>(m, "SimulationError", PyExc_RuntimeError);
  py::register_exception<ExistingResultsError>(m, "ExistingResultsError", PyExc_FileExistsError);
  py::register_exception<FolderBusy>(m, "FolderBusyError", PyExc_BlockingIOError);
  py::register_exception<SweepPointFolderError>(m, "SweepPointFolderError", PyExc_FileExistsError);

  py::class_<Experiment>(m, "Experiment",
                         "An experiment read from YAML text (a sweep expanded lazily); `file` names it in errors.")
      .def(py::init<const std::string&, const std::string&, const std::vector<std::string>&>(), py::arg("text"),
           py::arg("file"), py::arg("overrides") = std::vector<std::string>{})
      .def_static(
          "from_file",
          [](const std::string& file, const std::vector<std::string>& overrides) {
            return std::make_unique<Experiment>(Sweep::from_file(file, overrides));
          },
          py::arg("file"), py::arg("overrides") = std::vector<std::string>{},
          "The experiment in the YAML file `file` (ConfigError when it cannot be read).")
      .def_property_readonly("swept", &Experiment::swept, "False for an experiment without sweep (one point).")
      .def("__len__", &Experiment::size)
      .def("keys", &Experiment::keys, Release(), "The swept key paths, cases' first.")
      .def("label", &Experiment::label, py::arg("index"), Release(), "The point's label ('' without sweep).")
      .def("assignments", &Experiment::assignments, py::arg("index"), Release(),
           "[(key path, value as YAML text)] of the point's swept keys.")
      .def("folder", &Experiment::folder, py::arg("index"), Release(),
           "The point's folder in the result folder ('' without sweep).")
      .def("plan", &Experiment::plan, Release(),
           "Parses and builds every point; [(folder, config.resolved.yaml text)].")
      .def("run", &Experiment::run, py::arg("out"), py::arg("jobs") = 1, py::arg("existing") = "refuse", Release(),
           "`pagesim run`: claims `out`, runs every point, writes the results; [(label, folder, warnings)].")
      .def("run_point", &Experiment::run_point, py::arg("index"), py::arg("dir"), Release(),
           "Runs one point into `dir` as a sweep does; its warnings.")
      .def("write_table", &Experiment::write_table, py::arg("out"), py::arg("plan"), Release(),
           "Writes out/sweep.csv from the points' summary.json files.")
      .def("results_table", &Experiment::results_table, py::arg("out"), py::arg("plan"), py::arg("kept"), Release(),
           "(`pagesim run`'s closing table and its note, its --resume note) of the points' results in `out`.");

  py::class_<ClaimedFolder>(m, "ClaimedFolder", "A result folder locked for one run (result_folder.h).")
      .def(py::init<const std::filesystem::path&, const std::string&>(), py::arg("dir"), py::arg("existing"))
      .def("prepare", &ClaimedFolder::prepare, py::arg("plan"), Release(),
           "Clears the old run's results; per point, whether it is kept (resume).")
      .def("finish", &ClaimedFolder::finish, "The run completed: the folder stays.")
      .def("release", &ClaimedFolder::release, Release(), "Unlocks the folder.");

  m.def("write_point_files", &write_point_files, py::arg("dir"), py::arg("files"),
        "Writes {name: bytes} into `dir`, each atomically, summary.json last.");
}
