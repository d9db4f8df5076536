// ConfigOrigin: the line of the deepest key given along a path, keys without a line (--set),
// and errors that read "file:line: key: message"; and the lines YamlReader records while
// parse_experiment() reads a file.
#include "sim/config/config_origin.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/config/experiment_config.h"

namespace pagesim::sim {
namespace {

TEST(ConfigOrigin, LineOfTheDeepestKeyGiven) {
  ConfigOrigin o("exp.yaml");
  o.record("allocator", 4);
  o.record("allocator.kind", 5);
  o.record("workload", 10);
  o.record("workload.sampling", 11);
  o.record("workload.sampling[1]", 13);
  EXPECT_EQ(o.line("allocator.kind"), 5);
  EXPECT_EQ(o.line("allocator.block_size"), 4);  // left to its default: its section's line
  EXPECT_EQ(o.line("allocator"), 4);
  EXPECT_EQ(o.line("workload.sampling[1].n"), 13);
  EXPECT_EQ(o.line("workload.sampling[2].n"), 11);
  EXPECT_EQ(o.line("workload.arrival.rate"), 10);
  EXPECT_EQ(o.line("scheduler.kind"), 0);  // nothing given along the path
  EXPECT_EQ(o.line(""), 0);
  EXPECT_TRUE(o.has("allocator.kind"));
  EXPECT_FALSE(o.has("allocator.block_size"));
}

TEST(ConfigOrigin, AKeyWithoutALineNamesTheKeyOnly) {
  ConfigOrigin o("exp.yaml");
  o.record("scheduler", 2);
  o.record("scheduler.max_num_seqs", 0);  // from --set
  EXPECT_EQ(o.line("scheduler.max_num_seqs"), 0);  // not the section's line: the file did not give it
  const ConfigError e = o.error("scheduler.max_num_seqs", "expected an integer >= 1, found 0");
  EXPECT_EQ(e.file(), "exp.yaml");
  EXPECT_EQ(e.line(), 0);
  EXPECT_EQ(e.key(), "scheduler.max_num_seqs");
  EXPECT_STREQ(e.what(), "exp.yaml: scheduler.max_num_seqs: expected an integer >= 1, found 0");
  EXPECT_STREQ(o.error("scheduler.kind", "bad").what(), "exp.yaml:2: scheduler.kind: bad");
}

TEST(ConfigOrigin, ParseRecordsTheLineOfEveryKeyRead) {
  const ExperimentConfig c = parse_experiment(YAML::Load("name: x\n"                       // 1
                                                         "allocator:\n"                    // 2
                                                         "  kind: contiguous\n"            // 3
                                                         "  reservation: fixed:8\n"        // 4
                                                         "workload:\n"                     // 5
                                                         "  sampling:\n"                   // 6
                                                         "    - {weight: 1, n: 2}\n"       // 7
                                                         "    - {weight: 1, n: 4}\n"),     // 8
                                              "exp.yaml");
  const ConfigOrigin& o = c.origin;
  EXPECT_EQ(o.file(), "exp.yaml");
  EXPECT_EQ(o.line("name"), 1);
  EXPECT_EQ(o.line("allocator.kind"), 3);
  EXPECT_EQ(o.line("allocator.reservation"), 4);
  EXPECT_EQ(o.line("allocator.placement"), 3);  // a block map's line is its first key's
  EXPECT_EQ(o.line("workload.sampling[1]"), 8);
  EXPECT_EQ(o.line("workload.sampling[1].n"), 8);
  EXPECT_EQ(o.line("scheduler.kind"), 0);
  EXPECT_FALSE(o.has("scheduler"));
}

}  // namespace
}  // namespace pagesim::sim
