// The messages and commands of issue 41 (items 6 to 13), through the built binary
// (PAGESIM_BINARY) in a fresh temporary folder: what a newcomer's mistakes are told, and
// the commands that take what a newcomer gives them.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "temp_dir_test.h"

namespace {

namespace fs = std::filesystem;

using pagesim::sim::testing::read_file;
using pagesim::sim::testing::shell_quote;
using Result = pagesim::sim::testing::CommandResult;

class Messages : public pagesim::sim::testing::TempDirTest {
 protected:
  // `pagesim ARGS` in dir_.
  Result pagesim(const std::string& args) const {
    return pagesim::sim::testing::run_in(dir_, shell_quote(PAGESIM_BINARY) + " " + args);
  }
};

// Item 6: a misspelt subcommand gets the intended one, a usage error (status 2).
TEST_F(Messages, AMisspeltSubcommandSuggestsTheIntendedOne) {
  Result r = pagesim("rnu x.yaml");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "pagesim: error: unknown subcommand 'rnu': did you mean run? (pagesim --help lists the commands)\n");
  r = pagesim("trace stast t.csv");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "pagesim: error: unknown subcommand 'stast': did you mean stats? (pagesim trace --help lists the commands)\n");
  r = pagesim("frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown subcommand 'frobnicate': expected one of run, trace, validate"), std::string::npos)
      << r.err;
  // Known commands and options are CLI11's as before.
  EXPECT_EQ(pagesim("--version").status, 0);
  EXPECT_EQ(pagesim("presets").status, 0);
}

// Item 13: help names the command `pagesim`, not the path it was run by (the installed
// command execs <pkg>/bin/pagesim).
TEST_F(Messages, HelpNamesTheCommandNotTheExecutablesPath) {
  const Result r = pagesim("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("Usage: pagesim [OPTIONS] SUBCOMMAND"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(PAGESIM_BINARY), std::string::npos) << r.out;
  EXPECT_NE(pagesim("run --help").out.find("Usage: pagesim run [OPTIONS] experiment"), std::string::npos);
}

// Item 6: a misspelt preset and key, with the whole line as the user sees it.
TEST_F(Messages, AMisspeltPresetOrKeySuggestsTheIntendedOne) {
  write("e.yaml", "name: e\nmodel: llama3-8b\n");
  Result r = pagesim("run e.yaml -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "pagesim: error: e.yaml:2: model: unknown model preset 'llama3-8b', expected one of the 35 model presets: "
            "did you mean llama-3-8b? (`pagesim presets` lists them)\n");
  write("k.yaml", "name: k\nallocator:\n  blok_size: 16\n");
  r = pagesim("run k.yaml -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("pagesim: error: k.yaml:3: allocator.blok_size: unknown key: did you mean "
                        "allocator.block_size? (allowed here: ",
                        0),
            0u)
      << r.err;
}

// Item 7: a --set mistake names the option, not the file.
TEST_F(Messages, ASetMistakeNamesTheOption) {
  write("s.yaml", "name: s\nsweep:\n  cases:\n    - {label: paged-v1}\n    - {label: b, seed: 2}\n");
  const Result r = pagesim("run s.yaml -q --set allocator.blok_size=3");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("pagesim: error: --set allocator.blok_size=3: allocator.blok_size: unknown key: did you mean "
                        "allocator.block_size?",
                        0),
            0u)
      << r.err;
  EXPECT_NE(r.err.find("(in sweep point 0 'paged-v1')"), std::string::npos) << r.err;
}

// Item 8: an experiment named without a folder names the working directory it was looked up in.
TEST_F(Messages, AMissingTraceNamesTheExperimentsFolder) {
  write("e.yaml", "name: e\nworkload:\n  kind: trace\n  trace: {path: nothere.csv}\n");
  const Result r = pagesim("run e.yaml -q");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("found 'nothere.csv': not in " + fs::canonical(dir_).string() + ", "), std::string::npos)
      << r.err;
}

// Item 10: validate takes a run's folder and a sweep's folder, not only a batches file.
TEST_F(Messages, ValidateTakesARunOrASweepFolder) {
  write("s.yaml",
        "name: s\nworkload: {max_requests: 20, arrival: {rate: 5}}\nvalidate: {every_n_iterations: 20, max_batches: "
        "1}\nsweep:\n  allocator.block_size: [8, 16]\n");
  ASSERT_EQ(pagesim("run s.yaml -q -o out").status, 0);
  Result r = pagesim("validate out");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("point 00-allocator.block_size=8: PASS\npoint 01-allocator.block_size=16: PASS\nsweep: 2 of 2 "
                       "points pass (0 fail): PASS\n"),
            std::string::npos)
      << r.out;
  r = pagesim("validate out/01-allocator.block_size=16");
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("summary: 1 of 1 batches pass"), std::string::npos) << r.out;
  fs::create_directories(dir_ / "empty");
  r = pagesim("validate empty");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("empty: expected a batches file, a run's folder holding batches.jsonl"), std::string::npos)
      << r.err;
}

// Item 11: a point failing mid-sweep leaves sweep.csv with the finished points and a status
// per point, and the --resume command that runs the rest; a sweep whose points all ran has
// no status column.
TEST_F(Messages, ASweepStoppedByAFailureKeepsWhatFinished) {
  write("trace.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,3000,10\n1,200,10\n");
  // opt-13b's 2,048-token context cannot hold the 3,000-token prompt: point 1 fails as it runs.
  write("s.yaml",
        "name: s\nworkload:\n  kind: trace\n  trace: {path: trace.csv, format: native}\n"
        "scheduler: {max_num_batched_tokens: 8192}\nsweep:\n  model: [llama-2-7b, opt-13b, llama-2-13b]\n");
  Result r = pagesim("run s.yaml -q --out 'my out' --set 'workload.arrival={rate: 1}'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("exceed max_model_len = 2048 tokens"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pagesim: the sweep stopped: 1 of 3 points finished, 1 failed, 1 not run (my out/sweep.csv "
                       "lists every point with its status); once the cause is fixed, run the rest with\n"
                       "  pagesim run s.yaml --out 'my out' --resume --set 'workload.arrival={rate: 1}'\n"),
            std::string::npos)
      << r.err;
  const std::string table = read_file(dir_ / "my out/sweep.csv");
  ASSERT_FALSE(table.empty());
  const std::string header = table.substr(0, table.find('\n'));
  EXPECT_EQ(header.rfind("point,label,model,memory_pct.token_states,", 0), 0u) << header;
  EXPECT_EQ(header.substr(header.size() - 7), ",status") << header;
  EXPECT_NE(table.find("\n00-model=llama-2-7b,model=llama-2-7b,llama-2-7b,2."), std::string::npos) << table;
  EXPECT_NE(table.find("\n01-model=opt-13b,model=opt-13b,opt-13b,,"), std::string::npos) << table;
  for (const char* status : {",ok\n", ",failed\n", ",not run\n"})
    EXPECT_NE(table.find(status), std::string::npos) << status << " in " << table;
  // The command it printed, with the cause fixed, finishes the sweep: no status column then.
  r = pagesim("run s.yaml -q --out 'my out' --resume --set 'workload.arrival={rate: 1}' --set max_model_len=off");
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string done = read_file(dir_ / "my out/sweep.csv");
  EXPECT_EQ(done.find("status"), std::string::npos) << done;
  EXPECT_EQ(std::count(done.begin(), done.end(), '\n'), 4);
}

}  // namespace
