// The output folder of run_experiment_file() (result_folder.h): results of another run are
// refused, replaced (kOverwrite) or resumed (kResume: complete points of the same config
// kept, the rest rerun, the final files byte-identical to an uninterrupted run); nothing of
// an old run survives beside a new one; a locked folder is refused, and so are a point folder
// of a running or finished sweep and a sweep over a point folder in use; temporaries of a killed
// run are removed; a failing run leaves no empty folder.
#include "sim/experiment/result_folder.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/experiment/experiment.h"
#include "sim/output/folder_lock.h"
#include "traces/trace_error.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

const std::string kShareGpt = (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/sharegpt_opt_lengths.csv").string();

class ResultFolderTest : public testing::TempDirTest {};

using testing::read_file;

// Every file below `dir` (hidden ones included), relative, sorted.
std::set<std::string> files_under(const fs::path& dir) {
  std::set<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  return out;
}

ino_t inode(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? st.st_ino : 0;
}

// summary.json without its host timings.
nlohmann::json reproducible(const fs::path& p) {
  nlohmann::json j = nlohmann::json::parse(read_file(p));
  for (auto it = j.begin(); it != j.end();) {
    if (is_host_timing(it.key())) it = j.erase(it);
    else ++it;
  }
  return j;
}

// Two result folders hold the same files with the same bytes (summary.json: but host timings).
void expect_same_results(const fs::path& a, const fs::path& b) {
  const std::set<std::string> files = files_under(a);
  EXPECT_EQ(files_under(b), files);
  for (const auto& f : files) {
    if (f.ends_with("summary.json"))
      EXPECT_EQ(reproducible(a / f), reproducible(b / f)) << f;
    else
      EXPECT_TRUE(read_file(a / f) == read_file(b / f)) << f << " differs";
  }
}

std::string experiment(const std::string& sweep = "") {
  return "name: folder\n"
         "seed: 5\n"
         "workload:\n"
         "  arrival: {kind: poisson, rate: 20}\n"
         "  lengths: {kind: empirical, path: '" + kShareGpt + "'}\n"
         "  max_total_tokens: 2048\n"
         "  max_requests: 40\n"
         "kv: {slots: 4096}\n" + sweep;
}

const std::string kThreeCases =
    "sweep:\n  cases:\n    - {label: a, kv.slots: 2048}\n    - {label: b, kv.slots: 4096}\n"
    "    - {label: c, kv.slots: 8192}\n";
const std::set<std::string> kSingleRunFiles = {"config.resolved.yaml", "iterations.csv", "requests.csv",
                                                "summary.json"};

TEST_F(ResultFolderTest, FolderWithResultsOfAnotherRunIsRefused) {
  const std::string sweep = write("sweep.yaml", experiment(kThreeCases));
  const std::string single = write("single.yaml", experiment());
  const fs::path out = dir_ / "out";
  run_experiment_file(sweep, {}, out);
  const std::set<std::string> before = files_under(out);
  for (const std::string& file : {single, sweep}) {
    try {
      run_experiment_file(file, {}, out);
      ADD_FAILURE() << "ran into a folder holding results";
    } catch (const ExistingResultsError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("output folder '" + out.string() + "' holds the results of another run: sweep.csv, 3 point "
                          "folders (00-a, ..., 02-c)"),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("--overwrite"), std::string::npos) << what;
      EXPECT_NE(what.find("--resume"), std::string::npos) << what;
    }
    EXPECT_EQ(files_under(out), before);  // untouched, and no lock file left
  }
  // Any one result file is a result; files of other names are not.
  const fs::path other = dir_ / "other";
  fs::create_directories(other / "07-notes");
  std::ofstream(other / "notes.txt") << "mine";
  std::ofstream(other / "07-notes/todo.txt") << "mine";
  run_experiment_file(single, {}, other);
  EXPECT_EQ(read_file(other / "notes.txt"), "mine");
  for (const auto& name : result_file_names()) {
    const fs::path lone = dir_ / ("lone-" + name);
    fs::create_directories(lone);
    std::ofstream(lone / name) << "old";
    EXPECT_THROW(run_experiment_file(single, {}, lone), ExistingResultsError) << name;
    EXPECT_EQ(read_file(lone / name), "old");
  }
}

// kOverwrite: the old run's files go first, whatever the new run writes — a single run into
// an old sweep folder keeps no sweep.csv, iterations_stride 0 keeps no iterations.csv.
TEST_F(ResultFolderTest, OverwriteLeavesNothingOfTheOldRun) {
  const std::string sweep = write("sweep.yaml", experiment(kThreeCases));
  const std::string single = write("single.yaml", experiment());
  const fs::path out = dir_ / "out";
  run_experiment_file(sweep, {}, out);
  std::ofstream(out / "notes.txt") << "mine";
  run_experiment_file(single, {}, out, {}, 1, ExistingResults::kOverwrite);
  std::set<std::string> want = kSingleRunFiles;
  want.insert("notes.txt");
  EXPECT_EQ(files_under(out), want);
  run_experiment_file(single, {"output.iterations_stride=0"}, out, {}, 1, ExistingResults::kOverwrite);
  want.erase("iterations.csv");
  EXPECT_EQ(files_under(out), want);
  // And the result is the same as a run into a fresh folder.
  run_experiment_file(single, {"output.iterations_stride=0"}, dir_ / "fresh");
  fs::remove(out / "notes.txt");
  expect_same_results(dir_ / "fresh", out);
}

// kResume: an interrupted sweep (a point without summary.json), a point whose config changed
// under the same folder name, and a point the sweep no longer has. The complete unchanged
// point is kept as it is (same inodes); the others are rerun or removed; the final folder is
// byte-identical to an uninterrupted run of the new sweep.
TEST_F(ResultFolderTest, ResumeKeepsCompletePointsAndRerunsTheRest) {
  const std::string old_sweep = write("old.yaml", experiment(kThreeCases));
  const std::string new_sweep =
      write("new.yaml", experiment("sweep:\n  cases:\n    - {label: a, kv.slots: 2048}\n"
                                   "    - {label: b, kv.slots: 6144}\n    - {label: c, kv.slots: 8192}\n"));
  const fs::path want = dir_ / "want", out = dir_ / "out";
  run_experiment_file(new_sweep, {}, want);
  run_experiment_file(old_sweep, {}, out);
  fs::remove(out / "02-c/summary.json");  // stopped before its summary: incomplete
  fs::remove(out / "sweep.csv");
  std::ofstream(out / "02-c/iterations.csv.tmp.999999999.1") << "stale";  // a pid that cannot exist
  const ino_t a_requests = inode(out / "00-a/requests.csv");
  const auto results = run_experiment_file(new_sweep, {}, out, {}, 1, ExistingResults::kResume);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].label, "a");
  EXPECT_EQ(inode(out / "00-a/requests.csv"), a_requests) << "a complete point was rerun";
  // The changed point ran again (its old files were removed first, so a fresh file may get
  // the old inode number back: compare what it holds, not the inode).
  EXPECT_EQ(nlohmann::ordered_json::parse(read_file(out / "01-b/summary.json")).at("kv_slots"), 6144)
      << "a changed point was kept";
  expect_same_results(want, out);
  // The kept point's summary is its run's, host timings included: the results table shows it.
  const auto kept_file = nlohmann::ordered_json::parse(read_file(out / "00-a/summary.json"));
  const nlohmann::ordered_json kept_summary = results[0].summary.to_json();
  for (const auto& [k, v] : kept_summary.items()) EXPECT_EQ(v, kept_file.at(k)) << k;

  // A shorter sweep: the point it no longer has is removed.
  const std::string shorter = write("short.yaml", experiment("sweep:\n  cases:\n    - {label: a, kv.slots: 2048}\n"
                                                             "    - {label: b, kv.slots: 6144}\n"));
  run_experiment_file(shorter, {}, out, {}, 1, ExistingResults::kResume);
  EXPECT_EQ(inode(out / "00-a/requests.csv"), a_requests);
  EXPECT_FALSE(fs::exists(out / "02-c"));
  run_experiment_file(shorter, {}, dir_ / "want-short");
  expect_same_results(dir_ / "want-short", out);

  // A run without sweep resumed into a sweep's folder: nothing of the sweep stays.
  const std::string single = write("single.yaml", experiment());
  run_experiment_file(single, {}, out, {}, 1, ExistingResults::kResume);
  EXPECT_EQ(files_under(out), kSingleRunFiles);
  // ... and resumed again unchanged, it is complete: kept as it is.
  const ino_t single_requests = inode(out / "requests.csv");
  run_experiment_file(single, {}, out, {}, 1, ExistingResults::kResume);
  EXPECT_EQ(inode(out / "requests.csv"), single_requests);
}

TEST_F(ResultFolderTest, LockedFolderIsRefusedBeforeAnythingIsWritten) {
  const std::string single = write("single.yaml", experiment());
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  {
    FolderLock other_run(out);
    try {
      run_experiment_file(single, {}, out);
      ADD_FAILURE() << "ran into a locked folder";
    } catch (const FolderBusy& e) {
      EXPECT_EQ(e.holder_pid(), ::getpid());
      EXPECT_NE(std::string(e.what()).find("'" + out.string() + "' is in use by another pagesim run (pid " +
                                           std::to_string(::getpid())),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(files_under(out), std::set<std::string>{".pagesim.lock"});
  }
  run_experiment_file(single, {}, out);
  EXPECT_EQ(files_under(out), kSingleRunFiles);  // the lock file goes with the run
}

// A point folder of a sweep belongs to the sweep (issue 24, item 7): while another run holds
// the sweep's folder, or once its sweep.csv describes the points, a run into one of them is
// refused whatever the policy and writes nothing; a folder of another name is no point, and
// the sweep itself still resumes.
TEST_F(ResultFolderTest, PointFolderOfASweepIsRefused) {
  const std::string single = write("single.yaml", experiment());
  const fs::path out = dir_ / "out";
  fs::create_directories(out);
  {
    FolderLock sweep_run(out);  // a sweep writing its points into out
    for (const fs::path& point : {out / "00-a", out / "01-b/"}) {
      try {
        run_experiment_file(single, {}, point);
        ADD_FAILURE() << "ran into " << point;
      } catch (const SweepPointFolderError& e) {
        EXPECT_EQ(std::string(e.what()), "output folder '" + point.string() + "' is a point folder of '" +
                                             out.string() + "', which another pagesim run is writing (pid " +
                                             std::to_string(::getpid()) + ", holding '" +
                                             (out / ".pagesim.lock").string() + "'); choose another --out");
      }
    }
    EXPECT_EQ(files_under(out), std::set<std::string>{".pagesim.lock"});
    EXPECT_FALSE(fs::exists(out / "00-a"));
    run_experiment_file(single, {}, out / "plots");
  }
  const std::string sweep = write("sweep.yaml", experiment(kThreeCases));
  const fs::path done = dir_ / "done";
  run_experiment_file(sweep, {}, done);
  const std::set<std::string> before = files_under(done);
  const std::string summary = read_file(done / "01-b/summary.json");
  for (const ExistingResults policy : {ExistingResults::kRefuse, ExistingResults::kOverwrite, ExistingResults::kResume}) {
    try {
      run_experiment_file(single, {}, done / "01-b", {}, 1, policy);
      ADD_FAILURE() << "ran into a point folder of a finished sweep";
    } catch (const SweepPointFolderError& e) {
      EXPECT_EQ(std::string(e.what()),
                "output folder '" + (done / "01-b").string() + "' is a point folder of the sweep in '" + done.string() +
                    "' ('" + (done / "sweep.csv").string() + "' describes its points): results run into it would not "
                    "be the ones sweep.csv reports; rerun the sweep into '" + done.string() +
                    "' (--resume keeps its complete points) or choose another --out");
    }
  }
  EXPECT_THROW(run_experiment_file(single, {}, done / "05-new"), SweepPointFolderError);
  EXPECT_EQ(files_under(done), before);
  EXPECT_EQ(read_file(done / "01-b/summary.json"), summary);
  run_experiment_file(sweep, {}, done, {}, 1, ExistingResults::kResume);  // every point kept
  EXPECT_EQ(files_under(done), before);
  EXPECT_EQ(read_file(done / "01-b/summary.json"), summary);
}

// A sweep into a folder one of whose point folders another run holds would write over that
// run or remove its results: refused, naming the point folder, before anything is written.
TEST_F(ResultFolderTest, SweepIntoAFolderWithAPointFolderInUseIsRefused) {
  const std::string sweep = write("sweep.yaml", experiment(kThreeCases));
  const fs::path out = dir_ / "out";
  fs::create_directories(out / "01-b");
  {
    FolderLock point_run(out / "01-b");
    try {
      run_experiment_file(sweep, {}, out);
      ADD_FAILURE() << "ran a sweep over a point folder in use";
    } catch (const FolderBusy& e) {
      EXPECT_EQ(e.holder_pid(), ::getpid());
      EXPECT_NE(std::string(e.what()).find("output folder '" + (out / "01-b").string() +
                                           "' is in use by another pagesim run (pid " + std::to_string(::getpid())),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(files_under(out), std::set<std::string>{"01-b/.pagesim.lock"});
  }
  run_experiment_file(sweep, {}, out);
  EXPECT_TRUE(fs::exists(out / "sweep.csv"));
}

// A run killed with SIGKILL leaves its temporaries; the next run into the folder removes them.
TEST_F(ResultFolderTest, TemporariesOfAKilledRunAreRemoved) {
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  int status = 0;
  ::waitpid(dead, &status, 0);
  const std::string tmp = ".tmp." + std::to_string(dead) + ".7ffd00";
  const fs::path out = dir_ / "out";
  fs::create_directories(out / "00-a");
  std::ofstream(out / ("iterations.csv" + tmp)) << "half";
  std::ofstream(out / ("00-a/requests.csv" + tmp)) << "half";
  std::ofstream(out / ".pagesim.lock") << dead << "\n";  // its lock file stays too; the lock does not
  const std::string single = write("single.yaml", experiment());
  run_experiment_file(single, {}, out);  // temporaries are not results: no refusal
  EXPECT_EQ(files_under(out), kSingleRunFiles);
}

// A trace that turns out malformed mid-run: no file and no folder of the run stays, the
// parents it created included; in a sweep, the failing point's folder goes, finished ones stay.
TEST_F(ResultFolderTest, RunFailingWhileStreamingItsTraceLeavesNoFolder) {
  std::string trace = "arrival_s,prompt_tokens,output_tokens\n";
  for (int i = 0; i < 200; ++i) trace += std::to_string(i * 0.05) + "," + (i == 150 ? "many" : "100") + ",20\n";
  const std::string csv = write("trace.csv", trace);
  const std::string file = write("trace.yaml", "workload:\n  kind: trace\n  trace: {path: '" + csv +
                                                   "', format: native}\nkv: {slots: 8192}\n");
  EXPECT_THROW(run_experiment_file(file, {}, dir_ / "new/parent/out"), traces::TraceError);
  EXPECT_FALSE(fs::exists(dir_ / "new"));
  const std::string sweep = write("sweep.yaml", "workload:\n  kind: trace\n  trace: {path: '" + csv +
                                                    "', format: native}\n  max_requests: 100\nkv: {slots: 8192}\n"
                                                    "sweep:\n  workload.max_requests: [100, 0]\n");
  EXPECT_THROW(run_experiment_file(sweep, {}, dir_ / "sweep"), traces::TraceError);
  EXPECT_TRUE(fs::exists(dir_ / "sweep/00-workload.max_requests=100/summary.json"));
  EXPECT_FALSE(fs::exists(dir_ / "sweep/01-workload.max_requests=0"));
  EXPECT_FALSE(fs::exists(dir_ / "sweep/.pagesim.lock"));
}

}  // namespace
}  // namespace pagesim::sim
