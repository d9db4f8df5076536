#include <stdexcept>
#include <string>

#include "sim/scheduler/orca_scheduler.h"
#include "sim/scheduler/sarathi_scheduler.h"
#include "sim/scheduler/sglang_scheduler.h"
#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/static_scheduler.h"
#include "sim/scheduler/vllm_scheduler.h"
#include "sim/scheduler/vllm_v1_scheduler.h"
#include "sim/scheduler/vllm_v0_scheduler.h"

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator) {
  switch (settings.kind) {
    case SchedulerKind::kStatic: return std::make_unique<StaticScheduler>(settings, allocator);
    case SchedulerKind::kOrca: return std::make_unique<OrcaScheduler>(settings, allocator);
    // vllm-v1 needs only KvAllocator operations: over a paged pool the overload below builds
    // it; here it runs over a layer-group pool (traits_of(kVllmV1).runs_on_layer_group_pools).
    case SchedulerKind::kVllmV1: return std::make_unique<VllmV1Scheduler>(settings, allocator);
    case SchedulerKind::kVllm:
    case SchedulerKind::kVllmV0:
    case SchedulerKind::kSarathi: break;
    case SchedulerKind::kSglang:
      throw std::invalid_argument("scheduler.kind 'sglang' needs the radix allocator (allocator.kind: radix), got " +
                                  allocator.name());
  }
  throw std::invalid_argument("scheduler.kind '" + std::string(to_string(settings.kind)) +
                              "' needs a paged allocator (allocator.kind: paged), got " + allocator.name());
}

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, alloc::PagedAllocator& allocator) {
  switch (settings.kind) {
    case SchedulerKind::kVllm: return std::make_unique<VllmScheduler>(settings, allocator);
    case SchedulerKind::kSarathi: return std::make_unique<SarathiScheduler>(settings, allocator);
    case SchedulerKind::kVllmV1: return std::make_unique<VllmV1Scheduler>(settings, allocator);
    case SchedulerKind::kVllmV0: return std::make_unique<VllmV0Scheduler>(settings, allocator);
    case SchedulerKind::kStatic:
    case SchedulerKind::kOrca:
    case SchedulerKind::kSglang: break;
  }
  return make_scheduler(settings, static_cast<alloc::KvAllocator&>(allocator));
}

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, alloc::RadixAllocator& allocator) {
  if (settings.kind == SchedulerKind::kSglang) return std::make_unique<SglangScheduler>(settings, allocator);
  return make_scheduler(settings, static_cast<alloc::KvAllocator&>(allocator));
}

}  // namespace pagesim::sim
