// expand_sweep: grid axes (cartesian product, last axis fastest), cases crossed with the
// grid, labels, swept_keys, point roots that stay independent and keep the file's lines,
// and malformed sweep sections reported at file:line.
#include "sim/config/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"

namespace pagesim::sim {
namespace {

constexpr const char* kFile = "sweep.yaml";

using Assignments = std::vector<std::pair<std::string, std::string>>;

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

std::vector<SweepPoint> expand(const std::string& yaml) { return expand_sweep(YAML::Load(yaml), kFile); }

ExperimentConfig config_of(const SweepPoint& p) { return parse_experiment(p.root, kFile); }

TEST(Sweep, NoSweepSectionGivesNoPoints) {
  EXPECT_TRUE(expand("name: x\nscheduler: {kind: vllm}\n").empty());
  EXPECT_TRUE(expand_sweep(YAML::Node(), kFile).empty());
}

TEST(Sweep, GridIsTheCartesianProductLastAxisFastest) {
  const auto points = expand(
      "name: grid\n"
      "scheduler: {kind: vllm, max_num_seqs: 256}\n"
      "sweep:\n"
      "  allocator.block_size: [8, 16, 32]\n"
      "  scheduler.max_num_seqs: [64, 128]\n");
  ASSERT_EQ(points.size(), 6u);
  const std::int64_t blocks[] = {8, 8, 16, 16, 32, 32};
  const std::int64_t seqs[] = {64, 128, 64, 128, 64, 128};
  for (std::size_t i = 0; i < points.size(); ++i) {
    SCOPED_TRACE(points[i].label);
    const ExperimentConfig c = config_of(points[i]);
    EXPECT_EQ(c.allocator.block_size, blocks[i]);
    EXPECT_EQ(c.scheduler.max_num_seqs, seqs[i]);
    EXPECT_EQ(c.scheduler.kind, SchedulerKind::kVllm);  // the sibling in the file stays
    EXPECT_EQ(c.name, "grid");
    EXPECT_FALSE(points[i].root["sweep"]);
    const Assignments want{{"allocator.block_size", std::to_string(blocks[i])},
                           {"scheduler.max_num_seqs", std::to_string(seqs[i])}};
    EXPECT_EQ(points[i].assignments, want);
  }
  EXPECT_EQ(points[0].label, "allocator.block_size=8,scheduler.max_num_seqs=64");
  EXPECT_EQ(points[5].label, "allocator.block_size=32,scheduler.max_num_seqs=128");
  EXPECT_EQ(swept_keys(points), (std::vector<std::string>{"allocator.block_size", "scheduler.max_num_seqs"}));
}

TEST(Sweep, CasesCrossedWithTheGrid) {
  const auto points = expand(
      "name: cases\n"
      "sweep:\n"
      "  cases:\n"
      "    - {label: orca, scheduler.kind: orca, allocator.kind: contiguous}\n"
      "    - {scheduler.kind: vllm}\n"
      "  allocator.block_size: [16, 32]\n");
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].label, "orca,allocator.block_size=16");
  EXPECT_EQ(points[1].label, "orca,allocator.block_size=32");
  EXPECT_EQ(points[2].label, "case1,allocator.block_size=16");  // unlabelled: case<index>
  EXPECT_EQ(points[3].label, "case1,allocator.block_size=32");
  EXPECT_EQ(config_of(points[0]).scheduler.kind, SchedulerKind::kOrca);
  EXPECT_EQ(config_of(points[0]).allocator.kind, alloc::AllocatorKind::kContiguous);
  EXPECT_EQ(config_of(points[1]).allocator.block_size, 32);
  EXPECT_EQ(config_of(points[3]).scheduler.kind, SchedulerKind::kVllm);
  EXPECT_EQ(config_of(points[3]).allocator.kind, alloc::AllocatorKind::kPaged);  // the default: case 0 did not leak
  EXPECT_EQ(points[0].assignments,
            (Assignments{{"scheduler.kind", "orca"}, {"allocator.kind", "contiguous"}, {"allocator.block_size", "16"}}));
  EXPECT_EQ(points[2].assignments, (Assignments{{"scheduler.kind", "vllm"}, {"allocator.block_size", "16"}}));
  // Cases first, then grid axes, each key once.
  EXPECT_EQ(swept_keys(points), (std::vector<std::string>{"scheduler.kind", "allocator.kind", "allocator.block_size"}));
}

TEST(Sweep, CasesOnly) {
  const auto points = expand("sweep:\n  cases:\n    - {label: a, seed: 1}\n    - {label: b, seed: 2}\n");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].label, "a");
  EXPECT_EQ(points[1].label, "b");
  EXPECT_EQ(config_of(points[1]).seed, 2u);
  EXPECT_EQ(swept_keys(points), std::vector<std::string>{"seed"});
}

TEST(Sweep, MapValuesAndNestedKeysStayIndependent) {
  const YAML::Node root = YAML::Load(
      "name: nested\n"
      "scheduler: {kind: vllm, max_num_seqs: 256}\n"
      "sweep:\n"
      "  cases:\n"
      "    - {label: c, workload.arrival: {kind: constant, rate: 2}}\n"
      "  workload.arrival.rate: [3, 4]\n"
      "  scheduler.max_num_seqs: [1]\n");
  const std::string before = emit(root);
  const auto points = expand_sweep(root, kFile);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].label, "c,workload.arrival.rate=3,scheduler.max_num_seqs=1");
  EXPECT_EQ(points[0].assignments[0], (std::pair<std::string, std::string>{"workload.arrival", "{kind: constant, rate: 2}"}));
  const ExperimentConfig a = config_of(points[0]), b = config_of(points[1]);
  EXPECT_EQ(a.workload.arrival.kind, traces::ArrivalKind::kConstant);
  EXPECT_EQ(a.workload.arrival.rate, 3);
  EXPECT_EQ(b.workload.arrival.kind, traces::ArrivalKind::kConstant);
  EXPECT_EQ(b.workload.arrival.rate, 4);
  EXPECT_EQ(a.scheduler.kind, SchedulerKind::kVllm);
  EXPECT_EQ(a.scheduler.max_num_seqs, 1);
  // The file's YAML (the case's map included) is unchanged.
  EXPECT_EQ(emit(root), before);
  // Changing one point changes no other.
  SweepPoint p0 = points[0];
  set_path(p0.root, "scheduler.max_num_seqs", YAML::Node(7), "test");
  set_path(p0.root, "workload.arrival.kind", YAML::Node("poisson"), "test");
  EXPECT_EQ(config_of(p0).scheduler.max_num_seqs, 7);
  EXPECT_EQ(config_of(points[1]).scheduler.max_num_seqs, 1);
  EXPECT_EQ(config_of(points[1]).workload.arrival.kind, traces::ArrivalKind::kConstant);
  EXPECT_EQ(emit(root), before);
}

// Errors in a point name the line of the file, whether the bad value is the file's own or
// comes from the sweep.
TEST(Sweep, PointErrorsKeepTheFileLines) {
  const auto points = expand(
      "name: lines\n"                          // 1
      "scheduler:\n"                           // 2
      "  kind: vllm\n"                         // 3
      "  max_num_seq: 8\n"                     // 4: typo
      "sweep:\n"                               // 5
      "  allocator.block_size: [16, 32]\n");   // 6
  ASSERT_EQ(points.size(), 2u);
  for (const auto& p : points) {
    try {
      config_of(p);
      ADD_FAILURE() << "no error";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.line(), 4) << e.what();
      EXPECT_EQ(e.key(), "scheduler.max_num_seq");
    }
  }
  const auto bad_case = expand(
      "name: lines\n"                                                          // 1
      "allocator: {kind: contiguous}\n"                                        // 2
      "sweep:\n"                                                               // 3
      "  cases:\n"                                                             // 4
      "    - {label: ok, allocator.reservation: pow2}\n"                       // 5
      "    - {label: bad, allocator.reservation: pow3}\n"                      // 6
      "  allocator.max_seq_len:\n"                                             // 7
      "    - 1024\n"                                                           // 8
      "    - lots\n");                                                         // 9
  ASSERT_EQ(bad_case.size(), 4u);
  EXPECT_EQ(config_of(bad_case[0]).allocator.max_seq_len, 1024);
  try {
    config_of(bad_case[1]);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 9) << e.what();
    EXPECT_EQ(e.key(), "allocator.max_seq_len");
    EXPECT_EQ(std::string(e.what()).rfind("sweep.yaml:9: allocator.max_seq_len: expected an integer, found 'lots'", 0), 0u)
        << e.what();
  }
  try {
    config_of(bad_case[2]);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 6) << e.what();
    EXPECT_EQ(e.key(), "allocator.reservation");
  }
}

// ---- Malformed sweep sections: file, line, key ----

::testing::AssertionResult fails_with(const std::string& yaml, int line, const std::string& key,
                                      const std::string& words) {
  try {
    expand(yaml);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    const std::string prefix = std::string(kFile) + ":" + std::to_string(line) + ": " + key + ": ";
    if (e.line() != line || e.key() != key || what.rfind(prefix, 0) != 0 || what.find(words) == std::string::npos)
      return ::testing::AssertionFailure() << "wanted '" << prefix << "..." << words << "', got: " << what;
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error";
}

TEST(SweepErrors, SweepNotAMap) {
  EXPECT_TRUE(fails_with("name: x\nsweep: 5\n", 2, "sweep", "expected a map"));
  EXPECT_TRUE(fails_with("name: x\nsweep:\n  - allocator.block_size\n", 3, "sweep", "expected a map"));
}

TEST(SweepErrors, AxisNotANonEmptyList) {
  EXPECT_TRUE(fails_with("sweep:\n  allocator.block_size: []\n", 2, "sweep.allocator.block_size",
                         "expected a non-empty list"));
  EXPECT_TRUE(fails_with("sweep:\n  seed: [1, 2]\n  allocator.block_size: 16\n", 3, "sweep.allocator.block_size",
                         "expected a non-empty list"));
}

TEST(SweepErrors, CasesMalformed) {
  EXPECT_TRUE(fails_with("sweep:\n  cases: []\n", 2, "sweep.cases", "expected a non-empty list of maps"));
  EXPECT_TRUE(fails_with("sweep:\n  cases: {label: a}\n", 2, "sweep.cases", "expected a non-empty list of maps"));
  EXPECT_TRUE(fails_with("sweep:\n  cases:\n    - {label: a}\n    - orca\n", 4, "sweep.cases[1]", "expected a map"));
}

TEST(SweepErrors, DuplicateLabels) {
  EXPECT_TRUE(fails_with("sweep:\n  cases:\n    - {label: a, seed: 1}\n    - {label: a, seed: 2}\n", 4,
                         "sweep.cases[1].label", "used by sweep.cases[0]"));
}

TEST(SweepErrors, KeyUnderAValueThatIsNotASection) {
  try {
    expand("model: opt-13b\nsweep:\n  model.layers: [1, 2]\n");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.layers");
    EXPECT_NE(std::string(e.what()).find(kFile), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'model' is not a section"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim
