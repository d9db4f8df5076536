// FolderLock: one writer per folder. A second lock — another object of this process or
// another process — fails at once naming the folder and the holder's pid; the lock file is
// gone after release; a holder killed with SIGKILL blocks nobody; holder() asks without
// locking.
#include "sim/output/folder_lock.h"
#include "temp_dir_test.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <thread>

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class FolderLockTest : public testing::TempDirTest {};

TEST_F(FolderLockTest, SecondLockFailsNamingFolderAndHolder) {
  std::optional<FolderLock> first(std::in_place, dir_);
  EXPECT_TRUE(fs::exists(dir_ / ".pagesim.lock"));
  // From another thread too: the lock is the open file's, not the thread's or process's.
  std::optional<FolderBusy> busy;
  std::thread([&] {
    try {
      FolderLock second(dir_);
    } catch (const FolderBusy& e) {
      busy = e;
    }
  }).join();
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->holder_pid(), ::getpid());
  const std::string what = busy->what();
  EXPECT_NE(what.find("'" + dir_.string() + "' is in use by another pagesim run (pid " + std::to_string(::getpid())),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("--out"), std::string::npos) << what;
  first.reset();
  EXPECT_FALSE(fs::exists(dir_ / ".pagesim.lock"));
  FolderLock again(dir_);  // free once released
}

// A holder in another process; SIGKILL releases its lock (its lock file stays, harmlessly).
TEST_F(FolderLockTest, LockOfAKilledProcessIsFree) {
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FolderLock held(dir_);
    const char c = 1;
    if (::write(ready[1], &c, 1) != 1) ::_exit(2);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  try {
    FolderLock second(dir_);
    ADD_FAILURE() << "locked a folder another process holds";
  } catch (const FolderBusy& e) {
    EXPECT_EQ(e.holder_pid(), child);
    EXPECT_NE(std::string(e.what()).find("(pid " + std::to_string(child) + ","), std::string::npos) << e.what();
  }
  EXPECT_EQ(FolderLock::holder(dir_), std::optional<pid_t>(child));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_TRUE(fs::exists(dir_ / ".pagesim.lock"));
  EXPECT_EQ(FolderLock::holder(dir_), std::nullopt);  // a lock file nobody holds
  { FolderLock after(dir_); }
  EXPECT_FALSE(fs::exists(dir_ / ".pagesim.lock"));
}

// holder() tells whether a writer holds a folder without taking the lock or making a file:
// none without a lock file, the holder's pid while held, none once released.
TEST_F(FolderLockTest, HolderIsAskedWithoutLocking) {
  EXPECT_EQ(FolderLock::holder(dir_), std::nullopt);
  EXPECT_FALSE(fs::exists(dir_ / ".pagesim.lock"));
  EXPECT_EQ(FolderLock::holder(dir_ / "missing"), std::nullopt);
  {
    FolderLock held(dir_);
    EXPECT_EQ(FolderLock::holder(dir_), std::optional<pid_t>(::getpid()));
    EXPECT_EQ(FolderLock::holder(dir_), std::optional<pid_t>(::getpid()));  // asking took nothing
  }
  EXPECT_EQ(FolderLock::holder(dir_), std::nullopt);
  FolderLock again(dir_);  // asking left the folder free
}

}  // namespace
}  // namespace pagesim::sim
