// The interpreter rule of sim/cli/python_handoff.h, on fake interpreters (shell scripts that
// find only the modules they are told to): $PAGESIM_PYTHON alone when set, else the project's
// .venv, python3, /usr/bin/python3, first that finds every module the caller needs; the probe
// asks for exactly those modules under the hand-off's PYTHONPATH; and the refusal message
// names the interpreters, the modules and the install hint.
#include "sim/cli/python_handoff.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;
using pagesim::sim::cli::exec_python_module;
using pagesim::sim::cli::find_python;
using pagesim::sim::cli::python_candidates;
using pagesim::sim::cli::PythonHandoff;
using pagesim::sim::testing::read_file;

// Sets (or, with nullopt, unsets) one environment variable for a scope and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class PythonHandoffTest : public pagesim::sim::testing::TempDirTest {
 protected:
  // An executable at `at` that, run as `at -c PROGRAM MODULE...`, logs "MODULE... |PYTHONPATH"
  // to asked.txt and exits 0 exactly when every MODULE is in `finds` (space-separated).
  fs::path fake_python(const fs::path& at, const std::string& finds) const {
    fs::create_directories(at.parent_path());
    std::ofstream(at) << "#!/bin/sh\nshift 2\necho \"$* |$PYTHONPATH\" >> '" << (dir_ / "asked.txt").string()
                      << "'\nfor m in \"$@\"; do case ' " << finds << " ' in *\" $m \"*) ;; *) exit 1;; esac; done\n"
                      << "exit 0\n";
    ::chmod(at.c_str(), 0755);
    return at;
  }
  fs::path venv_python() const { return dir_ / ".venv" / "bin" / "python"; }
};

TEST_F(PythonHandoffTest, ExplicitPythonIsTheOnlyCandidate) {
  const fs::path mine = fake_python(dir_ / "mine" / "python", "matplotlib");
  fake_python(venv_python(), "matplotlib");
  const ScopedEnv env("PAGESIM_PYTHON", mine.string());
  EXPECT_EQ(python_candidates(dir_), std::vector<std::string>{mine.string()});
  EXPECT_EQ(find_python(dir_, {"matplotlib"}), mine.string());
  // It lacks ray: reported, not passed over for the venv that has it or python3 that has sys.
  fake_python(venv_python(), "ray");
  EXPECT_EQ(find_python(dir_, {"ray"}), std::nullopt);
  EXPECT_EQ(find_python(dir_, {"sys"}), std::nullopt);
}

TEST_F(PythonHandoffTest, VenvFirstThenPython3WhenTheVenvLacksAModule) {
  const ScopedEnv env("PAGESIM_PYTHON", std::nullopt);
  EXPECT_EQ(python_candidates(dir_),
            (std::vector<std::string>{venv_python().string(), "python3", "/usr/bin/python3"}));
  fake_python(venv_python(), "pagesim ray");
  EXPECT_EQ(find_python(dir_, {"pagesim", "ray"}), venv_python().string());
  EXPECT_NE(read_file(dir_ / "asked.txt").find("pagesim ray |"), std::string::npos) << read_file(dir_ / "asked.txt");
  // The venv lacks sys in this fake; the real python3 on PATH finds it.
  EXPECT_EQ(find_python(dir_, {"sys"}), std::optional<std::string>("python3"));
}

TEST_F(PythonHandoffTest, NoCandidateFindsAMissingModule) {
  const ScopedEnv env("PAGESIM_PYTHON", std::nullopt);
  EXPECT_EQ(find_python(dir_, {"pagesim_no_such_module_for_the_test"}), std::nullopt);
}

TEST_F(PythonHandoffTest, RefusalNamesInterpreterModulesAndHintAndProbesUnderThePythonPath) {
  const fs::path mine = fake_python(dir_ / "mine" / "python", "matplotlib");
  const ScopedEnv env("PAGESIM_PYTHON", mine.string());
  const ScopedEnv path("PYTHONPATH", "/earlier");
  const PythonHandoff handoff{.module = "pagesim", .needs = {"pagesim", "ray"}, .path = {dir_ / "pkg"},
                              .install_hint = "run .ci/venv"};
  const std::string why = exec_python_module(handoff, {"sweep"});
  EXPECT_EQ(why, "pagesim needs a Python that finds pagesim, ray: PAGESIM_PYTHON=" + mine.string() +
                     " does not (run .ci/venv)");
  EXPECT_EQ(read_file(dir_ / "asked.txt"), "pagesim ray |" + (dir_ / "pkg").string() + ":/earlier\n");
}

TEST_F(PythonHandoffTest, RefusalWithoutExplicitPythonListsTheCandidates) {
  const ScopedEnv env("PAGESIM_PYTHON", std::nullopt);
  const ScopedEnv dir("PAGESIM_PYTHON_DIR", (dir_ / "python").string());  // so <repo> is dir_
  const ScopedEnv path("PYTHONPATH", std::nullopt);
  const PythonHandoff handoff{.module = "pagesim.plot", .needs = {"pagesim_no_such_module_for_the_test"},
                              .path = {}, .install_hint = "apt-get install it"};
  EXPECT_EQ(exec_python_module(handoff, {}),
            "pagesim.plot needs a Python that finds pagesim_no_such_module_for_the_test: none of " +
                venv_python().string() +
                ", python3, /usr/bin/python3 does (set PAGESIM_PYTHON to one that does, or apt-get install it)");
}

}  // namespace
