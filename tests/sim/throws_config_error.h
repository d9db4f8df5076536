// Test support: throws_config_error, the check that a call fails with a ConfigError at the
// expected place (file, line, dotted key) whose message holds the expected words, as an
// AssertionResult that quotes what() when it does not. Shared by the tests of the YAML
// sections (tests/sim/config/) and of building a run (tests/sim/experiment/). Stateless.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <string>
#include <vector>

#include "sim/config/config_error.h"

namespace pagesim::sim::testing {

// A `line` that throws_config_error does not check.
inline constexpr int kAnyLine = -1;

// Runs `f` and succeeds when it throws a ConfigError from `file` at `line` (0: a key with no
// line; kAnyLine: whichever) on `key`, whose what() starts "file[:line]: key: " and holds
// every one of `words`. Fails when `f` throws nothing or another exception.
template <class F>
::testing::AssertionResult throws_config_error(F&& f, const std::string& file, int line, const std::string& key,
                                               const std::vector<std::string>& words) {
  try {
    f();
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    const int at = line == kAnyLine ? e.line() : line;
    const std::string prefix = file + (at > 0 ? ":" + std::to_string(at) : std::string()) + ": " + key + ": ";
    if (e.file() != file) return ::testing::AssertionFailure() << "file '" << e.file() << "' in: " << what;
    if (e.line() != at) return ::testing::AssertionFailure() << "line " << e.line() << " in: " << what;
    if (e.key() != key) return ::testing::AssertionFailure() << "key '" << e.key() << "' in: " << what;
    if (!what.starts_with(prefix)) return ::testing::AssertionFailure() << "no prefix '" << prefix << "' in: " << what;
    for (const auto& w : words)
      if (what.find(w) == std::string::npos) return ::testing::AssertionFailure() << "no '" << w << "' in: " << what;
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "not a ConfigError: " << e.what();
  }
  return ::testing::AssertionFailure() << "no error";
}

}  // namespace pagesim::sim::testing
