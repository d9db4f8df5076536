// CreatedFolder: a failed run takes back the folders it created while they are empty, and
// nothing else; a kept one stays.
#include "sim/output/created_folder.h"
#include "temp_dir_test.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

class CreatedFolderTest : public testing::TempDirTest {};

TEST_F(CreatedFolderTest, FailedRunRemovesTheEmptyFoldersItCreated) {
  { CreatedFolder f(dir_ / "a/b/c/"); EXPECT_TRUE(fs::is_directory(dir_ / "a/b/c")); }
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_TRUE(fs::exists(dir_));  // existed before
}

TEST_F(CreatedFolderTest, FoldersHoldingFilesStay) {
  {
    CreatedFolder f(dir_ / "a/b/c");
    std::ofstream(dir_ / "a/b/kept.txt") << "x";
  }
  EXPECT_FALSE(fs::exists(dir_ / "a/b/c"));
  EXPECT_TRUE(fs::exists(dir_ / "a/b/kept.txt"));
}

TEST_F(CreatedFolderTest, KeptFolderStays) {
  {
    CreatedFolder f(dir_ / "a/b");
    f.keep();
  }
  EXPECT_TRUE(fs::is_directory(dir_ / "a/b"));
}

TEST_F(CreatedFolderTest, ExistingFolderIsNeverRemoved) {
  fs::create_directories(dir_ / "old");
  { CreatedFolder f(dir_ / "old"); }
  EXPECT_TRUE(fs::is_directory(dir_ / "old"));
}

}  // namespace
}  // namespace pagesim::sim
