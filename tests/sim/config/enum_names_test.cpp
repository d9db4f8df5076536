// enum_names.h: finding a value by name, the name of a value, the list for messages, at
// compile time too; and every name table a config reads lists distinct values under
// distinct, non-empty names (so find_enum and enum_name are inverse on it).
#include "sim/config/enum_names.h"

#include <gtest/gtest.h>

#include <set>
#include <string_view>
#include <utility>

#include "allocator/make_allocator.h"
#include "sim/beam/beam_model_settings.h"
#include "sim/cost/cost_model_factory.h"
#include "sim/scheduler/scheduler_settings.h"
#include "traces/workload_spec.h"

namespace pagesim::sim {
namespace {

enum class Shade { kLight, kDark, kUnlisted };

constexpr std::array<std::pair<Shade, std::string_view>, 2> kShadeNames = {{
    {Shade::kLight, "light"},
    {Shade::kDark, "dark"},
}};

// The helpers are constexpr where they return no std::string.
static_assert(find_enum(kShadeNames, "dark") == Shade::kDark);
static_assert(!find_enum(kShadeNames, "grey"));
static_assert(enum_name(kShadeNames, Shade::kLight) == "light");
static_assert(find_enum(kSchedulerKindNames, "sarathi") == SchedulerKind::kSarathi);
static_assert(find_enum(kSchedulerKindNames, "vllm-v1") == SchedulerKind::kVllmV1);
static_assert(enum_name(kSchedulerKindNames, SchedulerKind::kVllmV1) == "vllm-v1");

TEST(EnumNames, FindByName) {
  EXPECT_EQ(find_enum(kShadeNames, "light"), Shade::kLight);
  EXPECT_EQ(find_enum(kShadeNames, "dark"), Shade::kDark);
  EXPECT_FALSE(find_enum(kShadeNames, "Dark"));  // names match exactly
  EXPECT_FALSE(find_enum(kShadeNames, ""));
  EXPECT_EQ(find_enum(alloc::kPlacementKindNames, "first_fit"), alloc::PlacementKind::kFirstFit);
  EXPECT_FALSE(find_enum(alloc::kPlacementKindNames, "worst_fit"));
  EXPECT_EQ(find_enum(traces::kTraceFormatNames, "mooncake"), traces::TraceFormat::kMooncake);
}

TEST(EnumNames, NameOfValue) {
  EXPECT_EQ(enum_name(kShadeNames, Shade::kDark), "dark");
  EXPECT_EQ(enum_name(kShadeNames, Shade::kUnlisted), "?");
  EXPECT_EQ(enum_name(kCostModelKindNames, CostModelKind::profile), "profile");
}

TEST(EnumNames, ListForMessages) {
  EXPECT_EQ(enum_name_list(kShadeNames), "light, dark");
  EXPECT_EQ(enum_name_list(alloc::kPlacementKindNames), "buddy, first_fit, best_fit");
  EXPECT_EQ(enum_name_list(kCostModelKindNames), "roofline, constant, profile, operators");
  EXPECT_EQ(enum_name_list(traces::kTraceFormatNames), "auto, native, vidur, azure, mooncake, lengths, vllm-bench, inference-perf-requests");
  constexpr std::array<std::pair<Shade, std::string_view>, 0> kNone{};
  EXPECT_EQ(enum_name_list(kNone), "");
}

// Distinct values, distinct non-empty names, and each name found as its own value.
template <class E, std::size_t N>
void expect_one_to_one(const EnumNameTable<E, N>& names, const char* table) {
  std::set<E> values;
  std::set<std::string_view> seen;
  for (const auto& [value, name] : names) {
    EXPECT_FALSE(name.empty()) << table;
    EXPECT_TRUE(values.insert(value).second) << table << ": a value listed twice";
    EXPECT_TRUE(seen.insert(name).second) << table << ": '" << name << "' listed twice";
    EXPECT_EQ(find_enum(names, name), value) << table << ": " << name;
    EXPECT_EQ(enum_name(names, value), name) << table << ": " << name;
  }
}

TEST(EnumNames, EveryConfigTableIsOneToOne) {
  expect_one_to_one(alloc::kAllocatorKindNames, "kAllocatorKindNames");
  expect_one_to_one(alloc::kPlacementKindNames, "kPlacementKindNames");
  expect_one_to_one(alloc::kEvictionKindNames, "kEvictionKindNames");
  expect_one_to_one(traces::kWorkloadKindNames, "kWorkloadKindNames");
  expect_one_to_one(traces::kLengthsKindNames, "kLengthsKindNames");
  expect_one_to_one(traces::kWorkloadRngNames, "kWorkloadRngNames");
  expect_one_to_one(traces::kTraceFormatNames, "kTraceFormatNames");
  expect_one_to_one(traces::kArrivalKindNames, "kArrivalKindNames");
  expect_one_to_one(traces::kLengthKindNames, "kLengthKindNames");
  expect_one_to_one(kSchedulerKindNames, "kSchedulerKindNames");
  expect_one_to_one(kPreemptionModeNames, "kPreemptionModeNames");
  expect_one_to_one(kBeamModelNames, "kBeamModelNames");
  expect_one_to_one(kCostModelKindNames, "kCostModelKindNames");
}

}  // namespace
}  // namespace pagesim::sim
