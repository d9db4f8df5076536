// Sweep: grid axes (cartesian product, last axis fastest), cases crossed with the
// grid, labels, swept_keys, point roots that stay independent and keep the file's lines,
// and malformed sweep sections reported at file:line.
#include "sim/config/sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

constexpr const char* kFile = "sweep.yaml";

using Assignments = std::vector<std::pair<std::string, std::string>>;

Sweep expand(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  return Sweep::from_text(yaml, kFile, sets);
}

TEST(Sweep, NoSweepSectionGivesOnePlainRun) {
  const Sweep s = expand("name: x\nscheduler: {kind: vllm}\n");
  EXPECT_FALSE(s.swept());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s.label(0), "");
  EXPECT_TRUE(s.assignments(0).empty());
  EXPECT_EQ(s.config(0).name, "x");
  EXPECT_FALSE(expand("").swept());
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
    SCOPED_TRACE(points.label(i));
    const ExperimentConfig c = points.config(i);
    EXPECT_EQ(c.allocator.block_size, blocks[i]);
    EXPECT_EQ(c.scheduler.max_num_seqs, seqs[i]);
    EXPECT_EQ(c.scheduler.kind, SchedulerKind::kVllm);  // the sibling in the file stays
    EXPECT_EQ(c.name, "grid");
    EXPECT_FALSE(points.root(i)["sweep"]);
    const Assignments want{{"allocator.block_size", std::to_string(blocks[i])},
                           {"scheduler.max_num_seqs", std::to_string(seqs[i])}};
    EXPECT_EQ(points.assignments(i), want);
  }
  EXPECT_EQ(points.label(0), "allocator.block_size=8,scheduler.max_num_seqs=64");
  EXPECT_EQ(points.label(5), "allocator.block_size=32,scheduler.max_num_seqs=128");
  EXPECT_EQ(points.keys(), (std::vector<std::string>{"allocator.block_size", "scheduler.max_num_seqs"}));
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
  EXPECT_EQ(points.label(0), "orca,allocator.block_size=16");
  EXPECT_EQ(points.label(1), "orca,allocator.block_size=32");
  EXPECT_EQ(points.label(2), "case1,allocator.block_size=16");  // unlabelled: case<index>
  EXPECT_EQ(points.label(3), "case1,allocator.block_size=32");
  EXPECT_EQ(points.config(0).scheduler.kind, SchedulerKind::kOrca);
  EXPECT_EQ(points.config(0).allocator.kind, alloc::AllocatorKind::kContiguous);
  EXPECT_EQ(points.config(1).allocator.block_size, 32);
  EXPECT_EQ(points.config(3).scheduler.kind, SchedulerKind::kVllm);
  EXPECT_EQ(points.config(3).allocator.kind, alloc::AllocatorKind::kPaged);  // the default: case 0 did not leak
  EXPECT_EQ(points.assignments(0),
            (Assignments{{"scheduler.kind", "orca"}, {"allocator.kind", "contiguous"}, {"allocator.block_size", "16"}}));
  EXPECT_EQ(points.assignments(2), (Assignments{{"scheduler.kind", "vllm"}, {"allocator.block_size", "16"}}));
  // Cases first, then grid axes, each key once.
  EXPECT_EQ(points.keys(), (std::vector<std::string>{"scheduler.kind", "allocator.kind", "allocator.block_size"}));
}

TEST(Sweep, CasesOnly) {
  const auto points = expand("sweep:\n  cases:\n    - {label: a, seed: 1}\n    - {label: b, seed: 2}\n");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points.label(0), "a");
  EXPECT_EQ(points.label(1), "b");
  EXPECT_EQ(points.config(1).seed, 2u);
  EXPECT_EQ(points.keys(), std::vector<std::string>{"seed"});
}

TEST(Sweep, MapValuesAndNestedKeysStayIndependent) {
  const Sweep points = expand(
      "name: nested\n"
      "scheduler: {kind: vllm, max_num_seqs: 256}\n"
      "sweep:\n"
      "  cases:\n"
      "    - {label: c, workload.arrival: {kind: constant, rate: 2}}\n"
      "  workload.arrival.rate: [3, 4]\n"
      "  scheduler.max_num_seqs: [1]\n");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points.label(0), "c,workload.arrival.rate=3,scheduler.max_num_seqs=1");
  EXPECT_EQ(points.assignments(0)[0], (std::pair<std::string, std::string>{"workload.arrival", "{kind: constant, rate: 2}"}));
  const ExperimentConfig a = points.config(0), b = points.config(1);
  EXPECT_EQ(a.workload.arrival.kind, traces::ArrivalKind::kConstant);
  EXPECT_EQ(a.workload.arrival.rate, 3);
  EXPECT_EQ(b.workload.arrival.kind, traces::ArrivalKind::kConstant);
  EXPECT_EQ(b.workload.arrival.rate, 4);
  EXPECT_EQ(a.scheduler.kind, SchedulerKind::kVllm);
  EXPECT_EQ(a.scheduler.max_num_seqs, 1);
  // The line of each key: the file's for what the file gives, the sweep's for swept values
  // (the axis's line where it replaced the case's value).
  EXPECT_EQ(a.origin.line("scheduler.kind"), 2);
  EXPECT_EQ(a.origin.line("workload.arrival.kind"), 5);
  EXPECT_EQ(a.origin.line("workload.arrival.rate"), 6);
  EXPECT_EQ(a.origin.line("scheduler.max_num_seqs"), 7);
  // Changing one point's tree changes no other, nor the next tree made for the same point.
  YAML::Node p0 = points.root(0);
  set_path(p0, "scheduler.max_num_seqs", YAML::Node(7), "test");
  set_path(p0, "workload.arrival.kind", YAML::Node("poisson"), "test");
  EXPECT_EQ(parse_experiment(p0, kFile).scheduler.max_num_seqs, 7);
  EXPECT_EQ(points.config(0).scheduler.max_num_seqs, 1);
  EXPECT_EQ(points.config(1).scheduler.max_num_seqs, 1);
  EXPECT_EQ(points.config(1).workload.arrival.kind, traces::ArrivalKind::kConstant);
}

// A point of another pool kind keeps none of the file's keys of the file's kind; the keys it
// gives itself stand (and are checked against its kind).
TEST(Sweep, APointOfAnotherPoolKindLeavesTheFilesKindKeys) {
  const Sweep s = expand(
      "name: kinds\n"
      "allocator: {kind: contiguous, block_size: 32, reservation: pow2, placement: first_fit}\n"
      "scheduler: {kind: orca}\n"
      "sweep:\n"
      "  cases:\n"
      "    - {label: contiguous}\n"
      "    - {label: paged, allocator.kind: paged, scheduler.kind: vllm}\n"
      "    - {label: vattention, allocator.kind: vattention, allocator.vattention.page_kib: 64}\n"
      "    - {label: bad, allocator.kind: paged, scheduler.kind: vllm, allocator.placement: best_fit}\n");
  EXPECT_EQ(s.config(0).allocator.contiguous.placement, alloc::PlacementKind::kFirstFit);
  const ExperimentConfig paged = s.config(1);
  EXPECT_EQ(paged.allocator.block_size, 32);
  EXPECT_EQ(paged.allocator.contiguous.reservation, alloc::ReservationPolicy::max());
  EXPECT_EQ(paged.allocator.contiguous.placement, alloc::PlacementKind::kBuddy);
  EXPECT_EQ(s.config(2).allocator.vattention_page_kib, 64);
  EXPECT_THROW(s.config(3), ConfigError);
  // --set allocator.kind is such a point too, in a sweep or not.
  for (const char* sweep : {"", "sweep: {seed: [1, 2]}\n"}) {
    const Sweep set = expand(std::string("name: set\nallocator: {kind: contiguous, reservation: pow2}\n"
                                         "scheduler: {kind: orca}\n") + sweep,
                             {"allocator.kind=paged", "scheduler.kind=vllm"});
    EXPECT_EQ(set.config(0).allocator.contiguous.reservation, alloc::ReservationPolicy::max()) << sweep;
    EXPECT_THROW(expand(std::string("name: set\nscheduler: {kind: orca}\n") + sweep,
                        {"allocator.kind=paged", "scheduler.kind=vllm", "allocator.reservation=pow2"})
                     .config(0),
                 ConfigError)
        << sweep;
  }
}

// Points are made when asked for: a sweep of 10^12 points expands at once (one YAML tree
// per point would never finish), and any point can be read.
TEST(Sweep, PointsAreMadeOnDemand) {
  std::string axis = "[";
  for (int v = 0; v < 100; ++v) axis += (v ? ", " : "") + std::to_string(v + 1);
  axis += "]";
  std::string yaml = "name: huge\nsweep:\n";
  for (const char* key : {"seed", "scheduler.max_num_seqs", "workload.max_requests", "output.iterations_stride",
                          "scheduler.max_num_batched_tokens", "validate.max_batches"})
    yaml += std::string("  ") + key + ": " + axis + "\n";
  const Sweep s = expand(yaml);
  ASSERT_EQ(s.size(), 1'000'000'000'000u);
  const std::size_t last = s.size() - 1;
  EXPECT_EQ(s.label(last),
            "seed=100,scheduler.max_num_seqs=100,workload.max_requests=100,output.iterations_stride=100,"
            "scheduler.max_num_batched_tokens=100,validate.max_batches=100");
  const ExperimentConfig c = s.config(123'456'789'012u);  // base-100 digits 12,34,56,78,90,12
  EXPECT_EQ(c.seed, 13u);
  EXPECT_EQ(c.scheduler.max_num_seqs, 35);
  EXPECT_EQ(c.workload.max_requests, 57);
  EXPECT_EQ(c.output.iterations_stride, 79);
  EXPECT_EQ(c.scheduler.max_num_batched_tokens, 91);
  EXPECT_EQ(c.validate.max_batches, 13);
  EXPECT_EQ(c.origin.line("validate.max_batches"), 8);
}

// Points read the file's keys at their lines whatever follows the sweep section, and a
// file laid out so that the sweep's lines cannot be cut out (a flow map) still works.
TEST(Sweep, KeysAfterTheSweepAndFlowFiles) {
  const Sweep after = expand(
      "name: after\n"                      // 1
      "sweep:\n"                           // 2
      "  seed: [1, 2]\n"                   // 3
      "scheduler:\n"                       // 4
      "  max_num_seqs: 9\n");              // 5
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after.config(1).seed, 2u);
  EXPECT_EQ(after.config(1).scheduler.max_num_seqs, 9);
  EXPECT_EQ(after.config(1).origin.line("scheduler.max_num_seqs"), 5);
  EXPECT_EQ(after.config(1).origin.line("seed"), 3);
  const Sweep flow = expand("{name: flow, scheduler: {max_num_seqs: 9}, sweep: {seed: [1, 2]}}\n");
  ASSERT_EQ(flow.size(), 2u);
  EXPECT_EQ(flow.config(1).seed, 2u);
  EXPECT_EQ(flow.config(1).scheduler.max_num_seqs, 9);
  EXPECT_EQ(flow.config(0).origin.line("scheduler.max_num_seqs"), 1);
  // An anchor in the sweep's lines that a later key refers to.
  const Sweep alias = expand(
      "name: alias\n"
      "sweep:\n"
      "  scheduler.max_num_seqs: [&n 4, 5]\n"
      "scheduler: {max_num_batched_tokens: *n}\n");
  ASSERT_EQ(alias.size(), 2u);
  EXPECT_EQ(alias.config(1).scheduler.max_num_seqs, 5);
  EXPECT_EQ(alias.config(1).scheduler.max_num_batched_tokens, 4);
  EXPECT_EQ(alias.config(1).origin.line("scheduler.max_num_seqs"), 3);
}

// ---- --set and the sweep ----

TEST(SweepSet, ReplacesAnAxisOrAddsOne) {
  const std::string yaml =
      "name: s\n"
      "sweep:\n"
      "  allocator.block_size: [16, 32]\n"
      "  seed: [0, 1]\n";
  const Sweep replaced = expand(yaml, {"sweep.allocator.block_size=[8, 64, 128]"});
  ASSERT_EQ(replaced.size(), 6u);
  EXPECT_EQ(replaced.label(0), "allocator.block_size=8,seed=0");  // the axis keeps its place
  EXPECT_EQ(replaced.config(5).allocator.block_size, 128);
  EXPECT_EQ(replaced.config(5).origin.line("allocator.block_size"), 0);  // from --set: no line
  const Sweep added = expand(yaml, {"sweep.scheduler.max_num_seqs=[4]"});
  ASSERT_EQ(added.size(), 4u);
  EXPECT_EQ(added.label(3), "allocator.block_size=32,seed=1,scheduler.max_num_seqs=4");
  const Sweep whole = expand(yaml, {"sweep={seed: [5]}"});
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole.config(0).seed, 5u);
  const Sweep fresh = expand("name: s\n", {"sweep.seed=[1, 2, 3]", "scheduler.max_num_seqs=7"});
  ASSERT_EQ(fresh.size(), 3u);
  EXPECT_EQ(fresh.config(2).seed, 3u);
  EXPECT_EQ(fresh.config(2).scheduler.max_num_seqs, 7);  // the other --set applies to every point
}

::testing::AssertionResult set_conflicts(const std::string& yaml, const std::vector<std::string>& sets,
                                         const std::string& key, const std::string& words) {
  try {
    expand(yaml, sets);
  } catch (const ConfigError& e) {
    if (e.file() != "--set" || e.key() != key || std::string(e.what()).find(words) == std::string::npos)
      return ::testing::AssertionFailure() << "wanted --set: " << key << ": ..." << words << ", got: " << e.what();
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error";
}

TEST(SweepSet, AKeyTheSweepVariesIsAnError) {
  const std::string yaml =
      "name: s\n"                                                // 1
      "sweep:\n"                                                 // 2
      "  cases:\n"                                               // 3
      "    - {label: a, workload.arrival: {kind: constant}}\n"   // 4
      "  allocator.block_size: [16, 32]\n";                      // 5
  EXPECT_TRUE(set_conflicts(yaml, {"allocator.block_size=8"}, "allocator.block_size",
                            "the sweep also varies 'allocator.block_size' (sweep.yaml:5: sweep.allocator.block_size)"));
  EXPECT_TRUE(set_conflicts(yaml, {"allocator={kind: paged}"}, "allocator", "'allocator.block_size'"));
  EXPECT_TRUE(set_conflicts(yaml, {"workload.arrival.rate=3"}, "workload.arrival.rate",
                            "'workload.arrival' (sweep.yaml:4: sweep.cases[0])"));
  // Whatever the order of the --set options.
  EXPECT_TRUE(set_conflicts("name: s\n", {"seed=1", "sweep.seed=[1, 2]"}, "seed", "'seed'"));
  // Keys beside the swept ones are fine.
  EXPECT_EQ(expand(yaml, {"allocator.kind=paged", "workload.max_requests=5"}).config(1).workload.max_requests, 5);
}

// Issue 41 item 7: a mistake in a --set value is the option's, not the file's, and a point
// with no swept value leaves no empty tail.
TEST(SweepSet, AMistakeInASetValueNamesTheOption) {
  const std::string yaml =
      "name: s\n"
      "sweep:\n"
      "  cases:\n"
      "    - {label: paged-v1}\n"
      "    - {label: small, allocator.block_size: 8}\n";
  const Sweep sweep = expand(yaml, {"allocator.blok_size=3"});
  try {
    sweep.config(0);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "--set allocator.blok_size=3");
    EXPECT_EQ(e.key(), "allocator.blok_size");
    const ConfigError in = sweep.in_point(0, e);
    EXPECT_EQ(std::string(in.what()).rfind("--set allocator.blok_size=3: allocator.blok_size: unknown key: did you "
                                           "mean allocator.block_size?",
                                           0),
              0u)
        << in.what();
    EXPECT_NE(std::string(in.what()).find("(in sweep point 0 'paged-v1')"), std::string::npos) << in.what();
  }
  // An error found later (building the point) on a --set key is the option's too; one on the
  // file's keys stays the file's.
  const ConfigError later = sweep.in_point(1, ConfigError("sweep.yaml", 0, "allocator.blok_size", "bad"));
  EXPECT_EQ(later.file(), "--set allocator.blok_size=3");
  EXPECT_NE(std::string(later.what()).find("(in sweep point 1 'small': allocator.block_size=8)"), std::string::npos)
      << later.what();
  EXPECT_EQ(sweep.in_point(1, ConfigError("sweep.yaml", 0, "seed", "bad")).file(), "sweep.yaml");
  // Without a sweep: no point to name.
  const Sweep one = expand("name: s\n", {"scheduler.kind=vlm"});
  try {
    one.config(0);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(one.in_point(0, e).what()),
              "--set scheduler.kind=vlm: scheduler.kind: expected one of static, orca, vllm, sarathi, vllm-v1, "
              "vllm-v0, sglang, found 'vlm'; did you mean vllm?");
  }
}

// Errors in a point name the line of the file, whether the bad value is the file's own or
// comes from the sweep.
// A sweep whose points would not be what their labels say is refused at the line that
// makes it so: an axis repeating a value, two axes setting one key, an axis overriding a case.
TEST(Sweep, PointsThatContradictTheirLabelsAreRefused) {
  auto error_of = [](const std::string& yaml, const std::vector<std::string>& sets = {}) -> ConfigError {
    try {
      expand(yaml, sets);
    } catch (const ConfigError& e) {
      return e;
    }
    ADD_FAILURE() << "no error for:\n" << yaml;
    return ConfigError("", 0, "", "");
  };
  const ConfigError twice = error_of("sweep:\n  allocator.block_size:\n    - 16\n    - 32\n    - 16\n");
  EXPECT_EQ(twice.key(), "sweep.allocator.block_size");
  EXPECT_EQ(twice.line(), 5);
  EXPECT_NE(std::string(twice.what()).find("found 16 twice (values 0 and 2)"), std::string::npos) << twice.what();
  // One number spelled twice is one value too (they ran as two points with two labels).
  for (const auto& [a, b] : {std::pair{"1", "1.0"}, std::pair{"4096", "0x1000"}, std::pair{"1e3", "1000"}}) {
    const ConfigError spelled =
        error_of(std::string("sweep:\n  allocator.block_size:\n    - ") + a + "\n    - " + b + "\n");
    EXPECT_EQ(spelled.key(), "sweep.allocator.block_size");
    EXPECT_NE(std::string(spelled.what()).find("one number spelled twice"), std::string::npos) << spelled.what();
  }
  EXPECT_NO_THROW(expand("sweep:\n  allocator.block_size:\n    - 16\n    - 0x10a\n"));
  const ConfigError axes = error_of("sweep:\n  allocator: [{kind: paged, block_size: 8}]\n  allocator.block_size: [16, 32]\n");
  EXPECT_EQ(axes.key(), "sweep.allocator.block_size");
  EXPECT_EQ(axes.line(), 3);
  const ConfigError overridden = error_of(
      "sweep:\n  cases:\n    - {label: a, allocator.block_size: 16}\n  allocator.block_size: [8, 32]\n");
  EXPECT_EQ(overridden.key(), "sweep.cases[0].allocator.block_size");
  EXPECT_EQ(overridden.line(), 3);
  EXPECT_NE(std::string(overridden.what()).find("would override this case at every point"), std::string::npos);
  // Through --set too (no file line then for the replaced axis).
  EXPECT_EQ(error_of("name: x\n", {"sweep={allocator.block_size: [16, 16]}"}).key(), "sweep.allocator.block_size");
  // Still allowed: a case's map whose one entry an axis varies (MapValuesAndNestedKeysStayIndependent).
  EXPECT_EQ(expand("sweep:\n  cases:\n    - {label: c, scheduler: {kind: vllm, max_num_seqs: 8}}\n"
                   "  scheduler.max_num_seqs: [1, 2]\n").size(), 2u);
}

// An experiment file holds one YAML document: a second one would be silently dropped.
TEST(Sweep, ASecondYamlDocumentIsRefused) {
  try {
    expand("name: x\nworkload: {max_requests: 5}\n---\nname: y\n");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();
    EXPECT_NE(std::string(e.what()).find("found a second YAML document"), std::string::npos) << e.what();
  }
  EXPECT_EQ(expand("---\nname: x\n").config(0).name, "x");  // one document after a marker is fine
  EXPECT_EQ(expand("name: x\n---\n").config(0).name, "x");  // and an empty one after it
  // yaml-cpp yields empty documents forever for ","; reading stops at the second.
  EXPECT_FALSE(expand(",").swept());
}

TEST(Sweep, PointErrorsKeepTheFileLines) {
  const auto points = expand(
      "name: lines\n"                          // 1
      "scheduler:\n"                           // 2
      "  kind: vllm\n"                         // 3
      "  max_num_seq: 8\n"                     // 4: typo
      "sweep:\n"                               // 5
      "  allocator.block_size: [16, 32]\n");   // 6
  ASSERT_EQ(points.size(), 2u);
  for (std::size_t i = 0; i < points.size(); ++i) {
    try {
      points.config(i);
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
  EXPECT_EQ(bad_case.config(0).allocator.max_seq_len, 1024);
  try {
    bad_case.config(1);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 9) << e.what();
    EXPECT_EQ(e.key(), "allocator.max_seq_len");
    EXPECT_EQ(std::string(e.what()).rfind("sweep.yaml:9: allocator.max_seq_len: expected an integer, found 'lots'", 0), 0u)
        << e.what();
  }
  try {
    bad_case.config(2);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.line(), 6) << e.what();
    EXPECT_EQ(e.key(), "allocator.reservation");
  }
}

// ---- Malformed sweep sections: file, line, key ----

// Expects expanding `yaml` to fail with a ConfigError on `key` at `line` whose text holds `words`.
::testing::AssertionResult fails_with(const std::string& yaml, int line, const std::string& key,
                                      const std::string& words) {
  return testing::throws_config_error([&] { expand(yaml); }, kFile, line, key, {words});
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
    expand("model: opt-13b\nsweep:\n  model.layers: [1, 2]\n").config(0);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "model.layers");
    EXPECT_NE(std::string(e.what()).find(kFile), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'model' is not a section"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim
