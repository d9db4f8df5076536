#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include "sim/scheduler/scheduler.h"
#include "sim/scheduler/scheduler_kinds.h"

namespace pagesim::sim {

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, PoolRef pool,
                                          std::span<const SchedulerDescriptor> kinds) {
  const SchedulerDescriptor* d = find_scheduler_kind(kinds, settings.kind);
  if (d == nullptr)
    throw std::invalid_argument("scheduler.kind '" + std::string(to_string(settings.kind)) +
                                "' has no descriptor among the kinds given");
  if (!pool.offers(d->drives))
    throw std::invalid_argument("scheduler.kind '" + std::string(d->name) + "' needs " +
                                std::string(pool_phrase(d->drives)) + ", got " + pool.any().name());
  return d->build(settings, pool);
}

std::unique_ptr<Scheduler> make_scheduler(const SchedulerSettings& settings, PoolRef pool) {
  return make_scheduler(settings, pool, kSchedulerKinds);
}

}  // namespace pagesim::sim
