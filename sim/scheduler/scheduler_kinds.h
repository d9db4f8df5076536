// The built-in scheduler kinds: one descriptor per scheduler.kind (scheduler_kind.h), each
// defined in its policy's header. A new policy registers with one line in kSchedulerKinds
// (beside its enum value and name in scheduler_settings.h). A constant table, never mutated:
// code that needs other kinds (tests' example kinds) passes its own table to the generic
// functions (make_scheduler; sim/config/kind_rules.h).
#pragma once

#include <array>
#include <string_view>

#include "sim/scheduler/orca_scheduler.h"
#include "sim/scheduler/sarathi_scheduler.h"
#include "sim/scheduler/scheduler_kind.h"
#include "sim/scheduler/scheduler_settings.h"
#include "sim/scheduler/sglang_scheduler.h"
#include "sim/scheduler/static_scheduler.h"
#include "sim/scheduler/vllm_scheduler.h"
#include "sim/scheduler/vllm_v0_scheduler.h"
#include "sim/scheduler/vllm_v1_scheduler.h"

namespace pagesim::sim {

// In the order of kSchedulerKindNames (the order `pagesim presets` lists them in).
inline constexpr std::array kSchedulerKinds = {
    kStaticSchedulerKind, kOrcaSchedulerKind,   kVllmSchedulerKind,   kSarathiSchedulerKind,
    kVllmV1SchedulerKind, kVllmV0SchedulerKind, kSglangSchedulerKind,
};

static_assert([] {
  if (kSchedulerKinds.size() != kSchedulerKindNames.size()) return false;
  for (std::size_t i = 0; i < kSchedulerKinds.size(); ++i)
    if (kSchedulerKinds[i].kind != kSchedulerKindNames[i].first || kSchedulerKinds[i].name != kSchedulerKindNames[i].second ||
        kSchedulerKinds[i].allocators.empty() || kSchedulerKinds[i].build == nullptr)
      return false;
  return true;
}(), "kSchedulerKinds: one complete descriptor per scheduler kind, in the order of kSchedulerKindNames");

// The traits of a built-in kind; default traits for a kind outside the table.
constexpr SchedulerTraits traits_of(SchedulerKind kind) {
  const SchedulerDescriptor* d = find_scheduler_kind(kSchedulerKinds, kind);
  return d != nullptr ? d->traits : SchedulerTraits{};
}

// The system whose rules a built-in kind follows, in a line (`pagesim presets`); "?" for a
// kind outside the table.
constexpr std::string_view describe(SchedulerKind kind) {
  const SchedulerDescriptor* d = find_scheduler_kind(kSchedulerKinds, kind);
  return d != nullptr ? d->summary : "?";
}

}  // namespace pagesim::sim
