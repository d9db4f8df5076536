#include "sim/scheduler/orca_scheduler.h"
#include "sim/scheduler/sarathi_scheduler.h"
#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/static_scheduler.h"
#include "sim/scheduler/vllm_scheduler.h"

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator) {
  switch (settings.kind) {
    case SchedulerKind::kStatic: return std::make_unique<StaticScheduler>(settings, allocator);
    case SchedulerKind::kOrca: return std::make_unique<OrcaScheduler>(settings, allocator);
    case SchedulerKind::kVllm: return std::make_unique<VllmScheduler>(settings, allocator);
    case SchedulerKind::kSarathi: return std::make_unique<SarathiScheduler>(settings, allocator);
  }
  throw std::invalid_argument("unknown scheduler kind");
}

}  // namespace pagesim::sim
