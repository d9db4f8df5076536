#include "sim/metrics/step_recorder.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace pagesim::sim {
namespace {

using Pairs = std::vector<std::pair<std::uint64_t, std::int64_t>>;

void append_pairs(std::string& line, Pairs pairs) {
  std::sort(pairs.begin(), pairs.end());
  line += '[';
  for (std::size_t i = 0; i < pairs.size(); ++i)
    fmt::format_to(std::back_inserter(line), "{}[{}, {}]", i ? ", " : "", pairs[i].first, pairs[i].second);
  line += ']';
}

void append_ids(std::string& line, const std::vector<std::uint64_t>& ids) {
  line += '[';
  for (std::size_t i = 0; i < ids.size(); ++i) fmt::format_to(std::back_inserter(line), "{}{}", i ? ", " : "", ids[i]);
  line += ']';
}

}  // namespace

StepRecorder::StepRecorder(const StepRecordHeader& header, std::ostream& out,
                           std::vector<const alloc::KvAllocator*> allocators)
    : out_(out), allocators_(std::move(allocators)), steps_(allocators_.size(), 0), held_(allocators_.size()) {
  assert(!allocators_.empty());
  const alloc::KvAllocator& a = *allocators_.front();
  nlohmann::ordered_json h;
  h["format"] = "pagesim-engine-steps";
  h["format_version"] = 1;
  h["engine"] = "pagesim";
  h["engine_version"] = header.engine_version;
  h["scenario"] = header.scenario;
  h["pool_blocks"] = a.available_blocks();  // an empty pool: what requests can own
  h["block_size"] = a.block_size();
  h["replicas"] = allocators_.size();
  out_ << h.dump() << '\n';
}

void StepRecorder::on_arrival(const Request& r) { live_.push_back(&r); }

void StepRecorder::on_request_finished(const Request& r) {
  live_.erase(std::find(live_.begin(), live_.end(), &r));
  // The step that produced its last token: the newest held step of its replica that ended by
  // then (a step planned while the finishing one ran, under async scheduling, ends later).
  auto& held = held_[static_cast<std::size_t>(r.replica)];
  for (auto it = held.rbegin(); it != held.rend(); ++it) {
    if (it->end_s <= r.finish_s) {
      it->finished.push_back(r.id);
      return;
    }
  }
  assert(false && "a finished request's step is held until its replica's next step");
}

void StepRecorder::on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) {
  flush(replica, s.start_s, /*all=*/false);
  if (!plan.has_compute() && plan.preempted.empty()) return;
  Pairs scheduled, admitted;
  for (const PrefillWork& w : plan.prefills) {
    scheduled.emplace_back(w.request->id, w.new_tokens);
    if (w.admitted) admitted.emplace_back(w.request->id, w.cached_before);
  }
  for (const Request* r : plan.decodes) {
    const std::int64_t tokens = r->spec_step ? 1 + r->spec_proposed : static_cast<std::int64_t>(r->seqs.size());
    scheduled.emplace_back(r->id, tokens);
  }
  const alloc::KvAllocator& a = *allocators_[static_cast<std::size_t>(replica)];
  Step step;
  step.replica = replica;
  step.end_s = s.start_s + s.duration_s;
  std::string& line = step.head;
  fmt::format_to(std::back_inserter(line), "{{\"step\": {}, \"t\": {}", steps_[static_cast<std::size_t>(replica)]++,
                 s.start_s);
  if (allocators_.size() > 1) fmt::format_to(std::back_inserter(line), ", \"replica\": {}", replica);
  line += ", \"scheduled\": ";
  append_pairs(line, std::move(scheduled));
  line += ", \"new\": ";
  append_pairs(line, std::move(admitted));
  std::vector<std::uint64_t> preempted;
  for (const Request* r : plan.preempted) preempted.push_back(r->id);
  line += ", \"preempted\": ";
  append_ids(line, preempted);

  std::string& tail = step.tail;
  fmt::format_to(std::back_inserter(tail), ", \"free_blocks\": {}, \"blocks\": [", a.available_blocks());
  std::vector<const Request*> running;
  for (const Request* r : live_)
    // Running, or finished with its memory not yet back (asynchronous scheduling retires a
    // finished request after the next plan, as vLLM keeps it in self.running until then).
    if (r->replica == replica && !r->seqs.empty() &&
        (r->state == RequestState::kRunning || r->state == RequestState::kFinished))
      running.push_back(r);
  std::sort(running.begin(), running.end(), [](const Request* x, const Request* y) { return x->id < y->id; });
  for (std::size_t i = 0; i < running.size(); ++i) {
    std::vector<std::int64_t> groups;
    for (const alloc::SeqHandle& h : running[i]->seqs) {
      const std::vector<std::int64_t> g = a.group_blocks(h.id);
      if (groups.empty()) groups.assign(g.size(), 0);
      for (std::size_t k = 0; k < g.size(); ++k) groups[k] += g[k];
    }
    fmt::format_to(std::back_inserter(tail), "{}[{}", i ? ", " : "", running[i]->id);
    for (const std::int64_t n : groups) fmt::format_to(std::back_inserter(tail), ", {}", n);
    tail += ']';
  }
  tail += "]}\n";
  held_[static_cast<std::size_t>(replica)].push_back(std::move(step));
}

void StepRecorder::flush(std::int32_t replica, double now, bool all) {
  auto& held = held_[static_cast<std::size_t>(replica)];
  // A step that ended at `now` may still learn of finished requests: asynchronous scheduling
  // retires them after the plan starting then.
  while (!held.empty() && (all || held.front().end_s < now)) {
    Step& s = held.front();
    std::sort(s.finished.begin(), s.finished.end());
    out_ << s.head << ", \"finished\": ";
    std::string ids;
    append_ids(ids, s.finished);
    out_ << ids << s.tail;
    held.pop_front();
  }
}

void StepRecorder::finish() {
  for (std::size_t p = 0; p < held_.size(); ++p) flush(static_cast<std::int32_t>(p), 0, /*all=*/true);
}

}  // namespace pagesim::sim
