// Test support: TempDirTest, a GoogleTest fixture that gives each test a fresh folder of its
// own, removed afterwards (named by process, suite and test, so ctest's parallel processes
// never share one; a parameterized test's '/' becomes '_'); and helpers to read files and
// run commands there.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace pagesim::sim::testing {

// The whole file at `p`; empty when it cannot be read.
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// `s` in single quotes, for a shell command line. REQUIRES: s holds no single quote.
inline std::string shell_quote(const std::string& s) { return "'" + s + "'"; }

struct CommandResult {
  int status = -1;  // exit status; -1 when killed by a signal
  std::string out, err;
};

// Runs `command` through the shell inside `dir`, capturing its stdout and stderr (through
// files in `dir`, removed afterwards).
inline CommandResult run_in(const std::filesystem::path& dir, const std::string& command) {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = "cd " + shell_quote(dir.string()) + " && " + command + " >" + shell_quote(out.string()) +
                          " 2>" + shell_quote(err.string());
  const int raw = std::system(cmd.c_str());
  CommandResult r;
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    // A parameterized test's names hold '/' ("Kinds/PoolKindTest", "Runs/0"): one folder,
    // not a nest whose parents TearDown would leave behind.
    std::string name = "pagesim-test-" + std::to_string(::getpid()) + "-" + info->test_suite_name() + "-" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Writes `text` to dir_/name; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  std::filesystem::path dir_;
};

}  // namespace pagesim::sim::testing
