// The sglang scheduler's settings: what scheduler.kind: sglang implies (the radix
// allocator, pages of 1 token), the keys it adds, and the combinations refused with an error
// naming the key.
#include <gtest/gtest.h>

#include <string>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"

namespace pagesim::sim {
namespace {

ExperimentConfig parse(const std::string& yaml) { return parse_experiment(YAML::Load(yaml), "exp.yaml"); }

// The key of the ConfigError parsing `yaml` throws, with its message checked for `word`.
std::string error_key(const std::string& yaml, const std::string& word) {
  try {
    parse(yaml);
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    return e.key();
  }
  return "(no error)";
}

TEST(SglangConfig, ImpliesTheRadixAllocatorWithPagesOfOneToken) {
  const ExperimentConfig c = parse("scheduler: {kind: sglang}\n");
  EXPECT_EQ(c.scheduler.kind, SchedulerKind::kSglang);
  EXPECT_EQ(c.allocator.kind, alloc::AllocatorKind::kRadix);
  EXPECT_EQ(c.allocator.block_size, 1);
  EXPECT_EQ(c.scheduler.schedule_policy, SchedulePolicy::kLpm);
}

TEST(SglangConfig, PageSizeAndOrderAreKeys) {
  const ExperimentConfig c =
      parse("scheduler: {kind: sglang, schedule_policy: fcfs}\nallocator: {kind: radix, block_size: 16}\n");
  EXPECT_EQ(c.allocator.block_size, 16);
  EXPECT_EQ(c.scheduler.schedule_policy, SchedulePolicy::kFcfs);
  // The order is written back only when it is not the default.
  EXPECT_NE(YAML::Dump(to_yaml(c)).find("schedule_policy: fcfs"), std::string::npos);
}

// prefix_cache: true says what the radix pool does anyway (a replica override of a
// prefix-caching cluster keeps the key); false is refused (below).
TEST(SglangConfig, PrefixCacheTrueIsRedundant) {
  const ExperimentConfig c = parse("workload: {kind: trace, trace: {path: t.jsonl, format: mooncake}}\n"
                                   "scheduler: {kind: sglang}\nallocator: {prefix_cache: true}\n");
  EXPECT_EQ(c.allocator.kind, alloc::AllocatorKind::kRadix);
  EXPECT_TRUE(c.allocator.caches_prefixes());
}

TEST(SglangConfig, VllmV0IsANameOfItsOwn) {
  EXPECT_EQ(parse("scheduler: {kind: vllm-v0}\n").scheduler.kind, SchedulerKind::kVllmV0);
  EXPECT_EQ(parse("scheduler: {kind: vllm-v0}\n").allocator.kind, alloc::AllocatorKind::kPaged);
}

TEST(SglangConfig, MeaninglessCombinationsNameTheirKey) {
  EXPECT_EQ(error_key("scheduler: {kind: sglang}\nallocator: {kind: paged}\n", "radix"), "allocator.kind");
  EXPECT_EQ(error_key("scheduler: {kind: vllm, schedule_policy: lpm}\n", "sglang"), "scheduler.schedule_policy");
  EXPECT_EQ(error_key("scheduler: {kind: sglang, preemption: swap}\nallocator: {cpu_swap_gib: 1}\n", "recompute"),
            "scheduler.preemption");
  EXPECT_EQ(error_key("scheduler: {kind: sglang}\nallocator: {prefix_cache: false}\n", "always"),
            "allocator.prefix_cache");
  EXPECT_EQ(error_key("scheduler: {kind: sglang}\nallocator: {eviction: fifo}\n", "least recently"),
            "allocator.eviction");
  EXPECT_EQ(error_key("scheduler: {kind: sglang, schedule_policy: dfs}\n", "lpm"), "scheduler.schedule_policy");
}

}  // namespace
}  // namespace pagesim::sim
