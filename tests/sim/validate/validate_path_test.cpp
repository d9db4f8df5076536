// `pagesim validate PATH` on folders (sim/validate/validate_path.h): a run's folder is its
// batches.jsonl; a sweep's folder is every point's, with a line per point and a total; a
// folder without any batches file is one clear error (issue 41 item 10).
#include "sim/validate/validate_path.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "validate_test_backends.h"
#include "validate_test_support.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::correct_batch;
using testing::header;
using testing::TempDir;
using testing::write_batch_file;

struct Result {
  int status = -1;
  std::string out, err;
};

Result validate(const fs::path& path) {
  ValidateOptions o;
  o.file = path;
  std::ostringstream out, err;
  const testing::TestBackends backends;
  Result r;
  r.status = run_validate_path(o, backends.all(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

TEST(ValidatePath, ARunFolderIsItsBatchesFile) {
  TempDir dir("validate_path_run");
  write_batch_file(dir.path(), "batches.jsonl", header(), {correct_batch()});
  const Result r = validate(dir.path());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find((dir.path() / "batches.jsonl").string() + ": allocator paged"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("point "), std::string::npos) << r.out;
  // The file itself, as before.
  EXPECT_EQ(validate(dir.path() / "batches.jsonl").out, r.out);
}

TEST(ValidatePath, ASweepFolderChecksEveryPointInPointOrder) {
  TempDir dir("validate_path_sweep");
  for (const char* point : {"10-c", "02-b", "00-a"}) fs::create_directories(dir.path() / point);
  write_batch_file(dir.path() / "00-a", "batches.jsonl", header(), {correct_batch()});
  SampledBatch broken = correct_batch();
  broken.sequences[1].block_table[2] = 9;  // a corrupted block table
  write_batch_file(dir.path() / "10-c", "batches.jsonl", header(), {broken});
  fs::create_directories(dir.path() / "notes");  // not a point folder
  const Result r = validate(dir.path());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("point 00-a: PASS\n"
                       "point 02-b: no batches.jsonl (validate.every_n_iterations: 0 there)\n"
                       "point 10-c: FAIL\n"
                       "sweep: 1 of 2 points pass (1 fail, 1 without batches.jsonl): FAIL\n"),
            std::string::npos)
      << r.out;
  fs::remove(dir.path() / "10-c" / "batches.jsonl");
  const Result passing = validate(dir.path());
  EXPECT_EQ(passing.status, 0) << passing.out << passing.err;
  EXPECT_NE(passing.out.find("sweep: 1 of 1 points pass (0 fail, 2 without batches.jsonl): PASS\n"), std::string::npos)
      << passing.out;
}

TEST(ValidatePath, AFolderWithoutBatchesIsAClearError) {
  TempDir dir("validate_path_none");
  Result r = validate(dir.path());
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "error: " + dir.path().string() +
                       ": expected a batches file, a run's folder holding batches.jsonl or a sweep's folder whose "
                       "points (NN-label/) hold one, found a folder with neither; a run writes it when its experiment "
                       "sets validate.every_n_iterations > 0\n");
  fs::create_directories(dir.path() / "00-a");
  r = validate(dir.path());
  EXPECT_NE(r.err.find("found 1 point folder without one"), std::string::npos) << r.err;
  r = validate(dir.path() / "missing");
  EXPECT_NE(r.err.find("missing: no such file or folder"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pagesim::sim
