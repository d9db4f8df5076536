// ResultFolder: the output folder of one `pagesim run`, claimed for that run alone.
//
// A run's results are the files it writes — summary.json, config.resolved.yaml,
// requests.csv, iterations.csv, batches.jsonl, timeline.json, sweep.csv — at the top of the folder (a run
// without sweep; sweep.csv for a sweep) and in point folders "<NN>-<label>/" (a sweep's
// points: two or more digits, a dash, the label) holding any of them. Claiming a folder:
//   1. creates it if missing (CreatedFolder: removed again if the run fails while it is
//      still empty) and locks it (FolderLock: a second run into it fails at once);
//   2. refuses, whatever the policy, a folder that belongs to another run: a point folder
//      of a sweep (SweepPointFolderError: named "<NN>-<label>" inside a folder that another
//      run holds locked, or that holds a finished sweep's sweep.csv), or a folder one of
//      whose point folders another run holds locked (FolderBusy naming that point folder).
//      Locking before checking leaves no gap between a run into a point folder and a sweep
//      into its parent started at once: one of the two sees the other's lock;
//   3. removes temporaries of processes that no longer exist, left by a killed run;
//   4. refuses (ExistingResultsError) if results of another run are there, unless the
//      policy is kOverwrite (they are removed before anything runs) or kResume (points
//      whose results are complete for the same resolved config are kept; everything else
//      of the old run is removed).
// Nothing of an old run survives beside the new one: results removed take the plots drawn
// from them (plot_file_names(): a sweep's top-level plots always go, a kept point keeps its
// own); files of other names are left alone.
// Not copyable; one thread.
#pragma once

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/metrics/summary.h"
#include "sim/output/created_folder.h"
#include "sim/output/folder_lock.h"

namespace pagesim::sim {

// What to do with a folder that holds results of another run.
enum class ExistingResults {
  kRefuse,     // fail with ExistingResultsError (the default: results are never lost)
  kOverwrite,  // remove them, then run
  kResume,     // keep the points that are complete for the same config; run the others
};

// The file names of a run's results.
const std::vector<std::string>& result_file_names();

// The file names of the plots drawn from a folder's results (`pagesim plot`, README command
// 1's pagesim.plots.memory): removed with the results they show, never counted as results.
const std::vector<std::string>& plot_file_names();

// The folder holds results of another run and the policy is kRefuse. The message names the
// folder, what is there and the two flags (--overwrite, --resume).
class ExistingResultsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The folder is a point folder of a sweep ("<NN>-<label>" inside a folder another run holds
// locked, or inside a finished sweep's folder, which holds sweep.csv): results written there
// would not be the ones the sweep reports. Whatever the policy; the message names the folder,
// the sweep's folder and its lock holder or sweep.csv.
class SweepPointFolderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One point the new run will write: its folder relative to the result folder ("" for a run
// without sweep) and the text its config.resolved.yaml will have.
struct PlannedPoint {
  std::string folder;
  std::string resolved_config;
};

// A complete point of an earlier run that --resume keeps: its summary.json read back.
struct KeptPoint {
  Summary summary;
  SummaryNotes notes;  // its warnings and oversize counts, reported again
};

// The point whose results `dir` holds, when they are complete for `resolved_config`: its
// config.resolved.yaml equal byte for byte and a summary.json that reads back (written last,
// so its presence means complete). Else nullopt (missing, another config, cut short).
std::optional<KeptPoint> read_complete_point(const std::filesystem::path& dir, const std::string& resolved_config);

class ResultFolder {
 public:
  // Claims `dir` as described above. Throws FolderBusy, SweepPointFolderError,
  // ExistingResultsError, or std::filesystem::filesystem_error; nothing it made stays then.
  ResultFolder(const std::filesystem::path& dir, ExistingResults policy);
  // Unlocks; unless finish() was called, removes the folders the claim created if empty.
  ~ResultFolder();
  ResultFolder(const ResultFolder&) = delete;
  ResultFolder& operator=(const ResultFolder&) = delete;

  // Makes room for `points`: removes every result of the old run except, under kResume, the
  // points whose folder holds config.resolved.yaml equal byte for byte to the planned text
  // and a summary.json that reads back (written last, so its presence means complete).
  // Returns, per point, what the kept point's summary.json holds, or nullopt for a point to run.
  // REQUIRES: called once, before anything is written into the folder.
  std::vector<std::optional<KeptPoint>> prepare(const std::vector<PlannedPoint>& points);

  // The run completed: the folder stays.
  void finish() { created_.keep(); }

 private:
  std::filesystem::path dir_;
  ExistingResults policy_;
  CreatedFolder created_;
  std::optional<FolderLock> lock_;  // reset before created_ is taken back
};

}  // namespace pagesim::sim
