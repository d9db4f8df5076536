// Helpers shared by the traces tests: paths of fixtures and bundled data, a scratch directory
// removed at the end of each test, and checks on TraceError.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/request_source.h"
#include "traces/trace_error.h"
#include "traces/trace_format.h"

namespace pagesim::traces::testing {

inline std::string fixture(std::string_view name) {
  return std::string(PAGESIM_SOURCE_DIR) + "/tests/traces/data/" + std::string(name);
}

// Options naming a format (and tokens per hash id); the rest at their defaults.
inline TraceFileOptions format_options(TraceFormat format, std::int64_t hash_block_tokens = 0) {
  TraceFileOptions o;
  o.format = format;
  o.hash_block_tokens = hash_block_tokens;
  return o;
}

inline std::string bundled(std::string_view name) {
  return std::string(PAGESIM_SOURCE_DIR) + "/traces/data/" + std::string(name);
}

// A fresh directory under the system temp directory, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "pagesim-traces-" + std::to_string(::getpid()) + "-" +
                       std::to_string(counter++) + "-" + (info ? info->name() : "x");
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = std::filesystem::temp_directory_path() / name;
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string path(std::string_view name) const { return (dir_ / std::string(name)).string(); }

  // Writes `content` byte for byte to a file called `name`; returns its path.
  std::string write(std::string_view name, std::string_view content) const {
    const std::string p = path(name);
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    return p;
  }

 private:
  std::filesystem::path dir_;
};

inline std::vector<TraceRequest> drain(RequestSource& source) {
  std::vector<TraceRequest> out;
  while (auto r = source.next()) out.push_back(std::move(*r));
  return out;
}

// Runs f and returns the TraceError it throws; fails the test if it throws nothing.
template <class F>
std::optional<TraceError> catch_trace_error(F&& f) {
  try {
    f();
  } catch (const TraceError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a TraceError";
  return std::nullopt;
}

// A malformed-input case: file content, the 1-based line the error must name (0 = whole
// file) and a fragment its message must contain.
struct BadInput {
  const char* name;
  const char* content;
  std::int64_t line;
  const char* message;
};

inline std::ostream& operator<<(std::ostream& os, const BadInput& c) { return os << c.name; }

// Test names of INSTANTIATE_TEST_SUITE_P over BadInput cases.
inline std::string bad_input_name(const ::testing::TestParamInfo<BadInput>& info) {
  return info.param.name;
}

// Checks that reading `path` with `read` fails at c.line with c.message in what(), and that
// what() starts with "path:line: " (or "path: " for line 0).
template <class ReadAll>
void expect_bad_input(const std::string& path, const BadInput& c, ReadAll&& read) {
  const auto e = catch_trace_error([&] { read(path); });
  if (!e) return;
  const std::string what = e->what();
  EXPECT_EQ(e->file(), path) << what;
  EXPECT_EQ(e->line(), c.line) << what;
  const std::string prefix = c.line > 0 ? path + ":" + std::to_string(c.line) + ": " : path + ": ";
  EXPECT_TRUE(what.starts_with(prefix)) << what;
  EXPECT_NE(what.find(c.message), std::string::npos) << "message: " << what << "\nwanted: " << c.message;
}

// expect_bad_input on c.content written to a scratch file called `name` (its ending is the
// format's: "bad.csv", "bad.jsonl").
template <class ReadAll>
void expect_bad_file(std::string_view name, const BadInput& c, ReadAll&& read) {
  ScratchDir dir;
  expect_bad_input(dir.write(name, c.content), c, std::forward<ReadAll>(read));
}

}  // namespace pagesim::traces::testing
