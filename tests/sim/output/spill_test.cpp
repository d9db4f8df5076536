// The spill files (sim/output): SpillFile — what is appended reads back at its offsets; the
// file has no name in the temporary folder (nothing to leave behind); clear() empties it; a
// temporary folder that does not exist is an error naming it, what the file was for and the
// reason. SpillQueue against std::deque under random pushes and pops — the same records in
// the same order, the same sizes, for chunks of 1, 2, 7 and 64 records and no bound (0); the
// records in memory stay within two chunks, and a bounded queue does spill.
#include "sim/output/spill_file.h"
#include "sim/output/spill_queue.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

// Points TMPDIR at `dir` for the test's lifetime.
class TmpdirOverride {
 public:
  explicit TmpdirOverride(const std::string& dir) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~TmpdirOverride() {
    if (old_.empty()) unsetenv("TMPDIR");
    else setenv("TMPDIR", old_.c_str(), 1);
  }

 private:
  std::string old_;
};

fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(SpillFile, AppendsReadBackAtTheirOffsetsAndLeaveNoName) {
  const fs::path dir = fresh_folder("pagesim-spill-test");
  {
    TmpdirOverride tmpdir(dir.string());
    SpillFile f("test values");
    std::vector<std::int64_t> a(1000), b(3);
    std::iota(a.begin(), a.end(), 0);
    std::iota(b.begin(), b.end(), 5000);
    EXPECT_EQ(f.append(a.data(), a.size() * sizeof(std::int64_t)), 0u);
    EXPECT_EQ(f.append(b.data(), b.size() * sizeof(std::int64_t)), 8000u);
    EXPECT_EQ(f.size(), 8024u);
    EXPECT_TRUE(fs::is_empty(dir)) << "the file must be unlinked at once";
    std::vector<std::int64_t> got(3);
    f.read(8000, got.data(), 3 * sizeof(std::int64_t));
    EXPECT_EQ(got, b);
    f.read(8 * 500, got.data(), 3 * sizeof(std::int64_t));
    EXPECT_EQ(got, (std::vector<std::int64_t>{500, 501, 502}));
    SpillFile moved = std::move(f);
    moved.clear();
    EXPECT_EQ(moved.size(), 0u);
    EXPECT_EQ(moved.append(b.data(), sizeof(std::int64_t)), 0u);
    moved.read(0, got.data(), sizeof(std::int64_t));
    EXPECT_EQ(got[0], 5000);
    std::int64_t past = 0;
    EXPECT_THROW(moved.read(8, &past, sizeof(past)), std::runtime_error);  // beyond the end
  }
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(SpillFile, AMissingTemporaryFolderIsAnErrorNamingIt) {
  TmpdirOverride tmpdir("/nonexistent/pagesim-spill");
  try {
    SpillFile f("latency samples");
    FAIL() << "created a file in a folder that does not exist";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("latency samples"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/pagesim-spill"), std::string::npos) << what;
    EXPECT_NE(what.find("No such file or directory"), std::string::npos) << what;
    EXPECT_NE(what.find("TMPDIR"), std::string::npos) << what;
  }
}

struct Record {
  std::uint64_t id;
  double when;
  std::int32_t n;
};

TEST(SpillQueue, KeepsFifoOrderUnderRandomOperations) {
  for (const std::size_t chunk : {0, 1, 2, 7, 64}) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    std::mt19937_64 rng(chunk + 1);
    SpillQueue<Record> q(chunk, "test records");
    std::deque<Record> want;
    std::uint64_t next = 0;
    std::size_t most_spilled = 0;
    for (int step = 0; step < 20000; ++step) {
      // Phases that mostly grow, then mostly shrink the queue, so that it spills and drains.
      const bool growing = (step / 2500) % 2 == 0;
      const bool push = want.empty() || std::uniform_int_distribution<int>(0, 9)(rng) < (growing ? 7 : 3);
      if (push) {
        const Record r{next, static_cast<double>(next) * 0.5, static_cast<std::int32_t>(next % 5)};
        ++next;
        q.push_back(r);
        want.push_back(r);
      } else {
        ASSERT_EQ(q.front().id, want.front().id);
        ASSERT_EQ(q.front().when, want.front().when);
        ASSERT_EQ(q.front().n, want.front().n);
        q.pop_front();
        want.pop_front();
      }
      ASSERT_EQ(q.size(), want.size());
      ASSERT_EQ(q.empty(), want.empty());
      if (chunk > 0) {
        ASSERT_LE(q.size() - q.spilled(), 2 * chunk);
      } else {
        ASSERT_EQ(q.spilled(), 0u);
      }
      most_spilled = std::max(most_spilled, q.spilled());
    }
    if (chunk > 0) {
      EXPECT_GT(most_spilled, 10 * chunk) << "the queue should have spilled";
    }
    while (!want.empty()) {
      ASSERT_EQ(q.front().id, want.front().id);
      q.pop_front();
      want.pop_front();
    }
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.spilled(), 0u);
  }
}

}  // namespace
}  // namespace pagesim::sim
