// AtomicFile: a destination appears whole or not at all; temporaries are named per process
// and object ("<path>.tmp.<pid>.<k>"), removed when not committed, and those of processes
// that no longer exist are removed by remove_stale_temporaries().
#include "sim/output/atomic_file.h"
#include "temp_dir_test.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class AtomicFileTest : public testing::TempDirTest {
 protected:
  std::set<std::string> names() const {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.insert(e.path().filename().string());
    return out;
  }
};

using testing::read_file;

// The pid of a process that has exited and been reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

TEST_F(AtomicFileTest, TwoWritersOfOnePathHaveTheirOwnTemporaries) {
  const fs::path path = dir_ / "iterations.csv";
  AtomicFile a(path), b(path);
  EXPECT_NE(a.temporary_path(), b.temporary_path());
  const std::string prefix = "iterations.csv.tmp." + std::to_string(::getpid()) + ".";
  for (const AtomicFile* f : {&a, &b}) {
    const std::string name = f->temporary_path().filename().string();
    EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
    EXPECT_EQ(temporary_owner(name), ::getpid()) << name;
  }
  a.stream() << "a rows\n";
  b.stream() << "b rows\n";
  a.commit();
  EXPECT_EQ(read_file(path), "a rows\n");  // whole, never a mix of the two
  b.commit();
  EXPECT_EQ(read_file(path), "b rows\n");
  EXPECT_EQ(names(), std::set<std::string>{"iterations.csv"});
}

TEST_F(AtomicFileTest, UncommittedFileLeavesNothing) {
  {
    AtomicFile f(dir_ / "sub/summary.json");
    f.stream() << "half";
    EXPECT_TRUE(fs::exists(f.temporary_path()));
  }
  EXPECT_TRUE(fs::is_empty(dir_ / "sub"));
}

// The descriptor this process holds open on `p`, or -1.
int open_descriptor_of(const fs::path& p) {
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(e.path(), ec);
    if (!ec && target == fs::absolute(p)) return std::stoi(e.path().filename().string());
  }
  return -1;
}

// A full disk: the temporary's descriptor is pointed at /dev/full (every write fails with
// ENOSPC) through the writer's own code path; the error says why and names the output folder,
// and nothing is left behind.
TEST_F(AtomicFileTest, FullDiskSaysNoSpaceAndNamesTheFolder) {
  {
    AtomicFile f(dir_ / "requests.csv");
    const int fd = open_descriptor_of(f.temporary_path());
    ASSERT_GE(fd, 0);
    const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
    ASSERT_GE(full, 0);
    ASSERT_EQ(::dup2(full, fd), fd);
    ::close(full);
    for (int i = 0; i < 100000; ++i) f.stream() << "a row of a requests file\n";  // past any buffer
    try {
      f.commit();
      FAIL() << "commit() succeeded on a full disk";
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("No space left on device"), std::string::npos) << what;
      EXPECT_NE(what.find("output folder '" + dir_.string() + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("requests.csv"), std::string::npos) << what;
      EXPECT_EQ(what.find(".tmp."), std::string::npos) << what;  // the destination, not the temporary
    }
  }
  EXPECT_EQ(names(), std::set<std::string>{});
}

TEST(TemporaryOwner, ParsesOnlyTemporaryNames) {
  EXPECT_EQ(temporary_owner("summary.json.tmp.123.7ffd1a2b"), 123);
  EXPECT_EQ(temporary_owner("a.tmp.b.tmp.42.0"), 42);
  EXPECT_EQ(temporary_owner("summary.json"), std::nullopt);
  EXPECT_EQ(temporary_owner("summary.json.tmp"), std::nullopt);
  EXPECT_EQ(temporary_owner("x.tmp.12"), std::nullopt);
  EXPECT_EQ(temporary_owner("x.tmp.12."), std::nullopt);
  EXPECT_EQ(temporary_owner("x.tmp.abc.1"), std::nullopt);
  EXPECT_EQ(temporary_owner("x.tmp.0.1"), std::nullopt);
  EXPECT_EQ(temporary_owner("x.tmp.12.xyz"), std::nullopt);
  EXPECT_EQ(temporary_owner(".tmp.12.1"), std::nullopt);
}

// After a SIGKILL: the dead process's temporaries go; a live one's, and other files, stay.
TEST_F(AtomicFileTest, StaleTemporariesOfDeadProcessesAreRemoved) {
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getpid());
  for (const std::string& name : {"requests.csv.tmp." + dead + ".7ffd10", "iterations.csv.tmp." + dead + ".7ffd20",
                                 "summary.json.tmp." + live + ".7ffd30", std::string("notes.tmp"), std::string("data.csv")})
    std::ofstream(dir_ / name) << "x";
  fs::create_directories(dir_ / ("sub.tmp." + dead + ".1"));  // a folder, not a temporary
  EXPECT_EQ(remove_stale_temporaries(dir_), 2);
  EXPECT_EQ(names(), (std::set<std::string>{"summary.json.tmp." + live + ".7ffd30", "notes.tmp", "data.csv",
                                            "sub.tmp." + dead + ".1"}));
  EXPECT_EQ(remove_stale_temporaries(dir_ / "missing"), 0);
}

}  // namespace
}  // namespace pagesim::sim
