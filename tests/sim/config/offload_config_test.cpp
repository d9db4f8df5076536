// allocator.offload: parsed, written back only when used, and every meaningless or bad
// value refused at its key and line with what was expected.
#include "sim/config/offload_config.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

constexpr const char* kFile = "exp.yaml";

// A trace workload (the prefix cache needs one) with the allocator lines given.
std::string with_allocator(const std::string& allocator_lines) {
  return "workload: {kind: trace, trace: {path: t.jsonl, format: mooncake}}\n"
         "allocator:\n" + allocator_lines;
}

const std::string kTwoTiers =
    "  prefix_cache: true\n"
    "  cpu_swap_gib: 64\n"
    "  offload:\n"
    "    write_policy: write_through\n"
    "    overlap: true\n"
    "    tiers:\n"
    "      - {kind: cpu, capacity_gib: 32, read_gbps: 20, write_gbps: 10, latency_us: 5, eviction: lfu}\n"
    "      - {kind: disk, capacity_gib: 512, read_gbps: 3, write_gbps: 1.5, latency_us: 80}\n";

// Expects a ConfigError on `key` at `line` (0: whichever) whose text holds every one of `words`.
::testing::AssertionResult fails_at(const std::string& yaml, int line, const std::string& key,
                                    const std::vector<std::string>& words) {
  return testing::throws_config_error([&] { parse_experiment(YAML::Load(yaml), kFile); }, kFile,
                                      line > 0 ? line : testing::kAnyLine, key, words);
}

TEST(OffloadConfig, ParsesTiersAndRoundTrips) {
  const ExperimentConfig c = parse_experiment(YAML::Load(with_allocator(kTwoTiers)), kFile);
  const OffloadConfig& o = c.allocator.offload_config;
  ASSERT_EQ(o.tiers.size(), 2u);
  EXPECT_EQ(o.write_policy, alloc::TierWritePolicy::kWriteThrough);
  EXPECT_TRUE(o.overlap);
  EXPECT_EQ(o.tiers[0].kind, alloc::TierKind::kCpu);
  EXPECT_EQ(o.tiers[0].eviction, alloc::EvictionKind::kLfu);
  EXPECT_EQ(o.tiers[1].kind, alloc::TierKind::kDisk);
  EXPECT_EQ(o.tiers[1].write_gbps, 1.5);
  EXPECT_EQ(o.tiers[1].eviction, alloc::EvictionKind::kLru);  // the default
  const ExperimentConfig back = parse_experiment(to_yaml(c), kFile);
  EXPECT_EQ(back.allocator.offload_config.tiers.size(), 2u);
  EXPECT_EQ(back.allocator.offload_config.tiers[1].latency_us, 80);
  EXPECT_TRUE(back.allocator.offload_config.overlap);
}

TEST(OffloadConfig, LeftOutOfTheResolvedConfigWhenUnused) {
  const ExperimentConfig c = parse_experiment(YAML::Load("name: x\n"), kFile);
  EXPECT_TRUE(c.allocator.offload_config.at_default());
  EXPECT_FALSE(to_yaml(c)["allocator"]["offload"]);
}

TEST(OffloadConfig, ConvertsUnitsIntoBlocks) {
  OffloadConfig o;
  o.tiers.push_back({alloc::TierKind::kDisk, 1.0, 2.0, 1.0, 50, alloc::EvictionKind::kFifo});
  const alloc::OffloadSettings s = offload_settings(o, 1 << 20, 1 << 30, ConfigOrigin(kFile));
  ASSERT_EQ(s.tiers.size(), 1u);
  EXPECT_EQ(s.tiers[0].capacity_blocks, 1024);  // 1 GiB of 1 MiB blocks
  EXPECT_EQ(s.tiers[0].read_bytes_per_s, 2e9);
  EXPECT_EQ(s.tiers[0].write_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(s.tiers[0].latency_s, 50e-6);
  EXPECT_EQ(s.bytes_per_block, 1 << 20);
  o.tiers[0].capacity_gib = 1e-9;  // smaller than one block
  EXPECT_THROW(offload_settings(o, 1 << 20, 1 << 30, ConfigOrigin(kFile)), ConfigError);
}

TEST(OffloadConfig, UnknownKeysAreNamed) {
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    tires: []\n"), 5,
                       "allocator.offload.tires", {"unknown key", "tiers", "write_policy", "overlap"}));
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    tiers:\n      - {kind: cpu, capacity: 4}\n"),
                       6, "allocator.offload.tiers[0].capacity", {"unknown key", "capacity_gib", "read_gbps"}));
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    tiers:\n      - {kind: ssd, capacity_gib: 4}\n"),
                       6, "allocator.offload.tiers[0].kind", {"cpu", "disk", "ssd"}));
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    write_policy: lazy\n"), 5,
                       "allocator.offload.write_policy", {"write_back", "write_through"}));
}

TEST(OffloadConfig, MeaninglessCombinationsAreRefused) {
  // No tier at all.
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload: {overlap: true}\n"), 0, "allocator.offload",
                       {"lists no tier"}));
  // Tiers without the prefix cache, or without the paged allocator.
  EXPECT_TRUE(fails_at(with_allocator("  offload:\n    tiers: [{kind: cpu, capacity_gib: 4}]\n"), 0,
                       "allocator.offload", {"prefix_cache is false"}));
  EXPECT_TRUE(fails_at(with_allocator("  kind: contiguous\n  offload:\n    tiers: [{kind: cpu, capacity_gib: 4}]\n"),
                       0, "allocator.offload", {"paged"}));
  // Order and kinds.
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    tiers: [{kind: disk, capacity_gib: 4}, "
                                      "{kind: cpu, capacity_gib: 4}]\n"),
                       0, "allocator.offload.tiers[1].kind", {"before the disk tier"}));
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    tiers: [{kind: cpu, capacity_gib: 4}, "
                                      "{kind: cpu, capacity_gib: 4}]\n"),
                       0, "allocator.offload.tiers[1].kind", {"second cpu tier"}));
  // The CPU tier shares the swap budget: it cannot exceed it.
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  cpu_swap_gib: 16\n  offload:\n    tiers: [{kind: cpu, "
                                      "capacity_gib: 32}]\n"),
                       0, "allocator.offload.tiers[0].capacity_gib", {"cpu_swap_gib", "share"}));
  EXPECT_TRUE(fails_at(with_allocator("  prefix_cache: true\n  offload:\n    tiers: [{kind: disk, capacity_gib: 4, "
                                      "eviction: lru_protect_waiting}]\n"),
                       0, "allocator.offload.tiers[0].eviction", {"waiting queue"}));
}

TEST(OffloadConfig, BadValuesAreRefusedAtTheirKey) {
  auto tier = [](const std::string& fields) {
    return with_allocator("  prefix_cache: true\n  offload:\n    tiers: [{kind: disk, " + fields + "}]\n");
  };
  EXPECT_TRUE(fails_at(tier("capacity_gib: 0"), 0, "allocator.offload.tiers[0].capacity_gib", {"> 0"}));
  EXPECT_TRUE(fails_at(tier("capacity_gib: .nan"), 0, "allocator.offload.tiers[0].capacity_gib", {"> 0"}));
  EXPECT_TRUE(fails_at(tier("capacity_gib: 4, read_gbps: 0"), 0, "allocator.offload.tiers[0].read_gbps", {"> 0"}));
  EXPECT_TRUE(fails_at(tier("capacity_gib: 4, write_gbps: -1"), 0, "allocator.offload.tiers[0].write_gbps", {"> 0"}));
  EXPECT_TRUE(fails_at(tier("capacity_gib: 4, latency_us: .inf"), 0, "allocator.offload.tiers[0].latency_us", {">= 0"}));
  EXPECT_TRUE(fails_at(tier("capacity_gib: four"), 0, "allocator.offload.tiers[0].capacity_gib", {"a number"}));
}

// Issue 24 item 11: finite values whose transfers would end past the simulated-time bound
// (or whose bytes per second overflow) are refused at their key and line, not blamed on the
// cost settings or reported without a key.
TEST(OffloadConfig, HugeOrTinyLinkValuesAreRefusedAtTheirKey) {
  auto tier = [](const std::string& fields) {
    return with_allocator("  prefix_cache: true\n  offload:\n    tiers:\n      - {kind: disk, capacity_gib: 4, " +
                          fields + "}\n");
  };
  EXPECT_TRUE(fails_at(tier("read_gbps: 1e308"), 6, "allocator.offload.tiers[0].read_gbps",
                       {"[0.001, 1e+06]", "found 1e+308"}));
  EXPECT_TRUE(fails_at(tier("write_gbps: 1e-300"), 6, "allocator.offload.tiers[0].write_gbps",
                       {"[0.001, 1e+06]", "found 1e-300"}));
  EXPECT_TRUE(fails_at(tier("latency_us: 1e306"), 6, "allocator.offload.tiers[0].latency_us",
                       {"[0, 1e+09]", "found 1e+306"}));
  EXPECT_NO_THROW(parse_experiment(YAML::Load(tier("read_gbps: 1e6, write_gbps: 0.001, latency_us: 1e9")), kFile));
}

}  // namespace
}  // namespace pagesim::sim
