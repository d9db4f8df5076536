#include "sim/metrics/timeline.h"

#include <algorithm>
#include <cmath>
#include <cassert>
#include <iterator>

#include <fmt/format.h>

#include "allocator/memory_breakdown.h"
#include "sim/core/iteration_plan.h"

namespace pagesim::sim {
namespace {

// Simulated seconds as whole nanoseconds, written as trace microseconds with three decimals.
// Durations are differences of rounded instants, so an iteration's slice ends exactly where
// the next one (starting at its end) begins: viewers nest slices that overlap by even 1 ns.
std::int64_t ns(double seconds) { return std::llround(seconds * 1e9); }
std::string us_of_ns(std::int64_t n) { return fmt::format("{}.{:03}", n / 1000, n % 1000); }
std::string us(double seconds) { return us_of_ns(ns(seconds)); }

}  // namespace

TimelineWriter::TimelineWriter(const TimelineSettings& settings, std::ostream& out,
                               std::vector<const alloc::KvAllocator*> allocators)
    : settings_(settings), out_(out), allocators_(std::move(allocators)), lanes_(allocators_.size()) {
  assert(!allocators_.empty() && settings_.stride >= 1);
  out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (std::size_t i = 0; i < allocators_.size(); ++i) {
    const int pid = static_cast<int>(i) + 1;
    begin_event();
    out_ << fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"replica {}"}}}})", pid,
                        i);
    begin_event();
    out_ << fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"tid":0,"args":{{"sort_index":{}}}}})",
                        pid, pid);
    begin_event();
    out_ << fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":1,"args":{{"name":"iterations"}}}})", pid);
    begin_event();
    out_ << fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":1,"args":{{"sort_index":1}}}})", pid);
  }
}

const char* TimelineWriter::phase_name(Phase p) {
  switch (p) {
    case Phase::kQueued: return "queued";
    case Phase::kPrefill: return "prefill";
    case Phase::kDecode: return "decode";
    case Phase::kPreempted: return "preempted";
    case Phase::kSwapped: return "swapped";
    case Phase::kTransferQueued: return "transfer_queued";
    case Phase::kKvTransfer: return "kv_transfer";
  }
  return "?";
}

void TimelineWriter::begin_event() {
  if (!first_event_) out_ << ",\n";
  first_event_ = false;
}

void TimelineWriter::lane_event(char ph, const char* name, const Followed& f, const std::string& ts) {
  begin_event();
  out_ << fmt::format(R"({{"ph":"{}","cat":"request","name":"{}","pid":{},"tid":{},"ts":{}}})", ph, name, f.pid, f.tid,
                      ts);
}

void TimelineWriter::begin_request(Followed& f, const Request& r, std::int32_t pid, double t) {
  // The lowest lane free by t: freed lanes are reused, so the pool stays as small as the
  // replica's peak of requests at once.
  std::vector<std::int64_t>& lanes = lanes_.at(static_cast<std::size_t>(pid - 1));
  const std::int64_t now = ns(t);
  std::size_t lane = 0;
  while (lane < lanes.size() && (lanes[lane] == kBusy || lanes[lane] > now)) ++lane;
  const std::int32_t tid = static_cast<std::int32_t>(lane) + kFirstLaneTid;
  if (lane == lanes.size()) {
    lanes.push_back(kBusy);
    begin_event();
    out_ << fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"requests {}"}}}})", pid,
                        tid, lane);
    begin_event();
    out_ << fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid,
                        tid, tid);
  }
  lanes[lane] = kBusy;
  f.pid = pid;
  f.tid = tid;
  begin_event();
  out_ << fmt::format(
      R"({{"ph":"B","cat":"request","name":"request {}","pid":{},"tid":{},"ts":{},"args":{{"prompt_tokens":{},"output_tokens":{},"n":{},"beam_width":{},"lane":{}}}}})",
      r.id, pid, tid, us(t), r.prompt_tokens, r.output_tokens, r.n, r.beam_width, lane);
}

void TimelineWriter::close_phase(const Followed& f, double t) {
  if (ns(t) <= ns(f.phase_start_s)) return;
  lane_event('B', phase_name(f.phase), f, us(f.phase_start_s));
  lane_event('E', phase_name(f.phase), f, us(t));
}

void TimelineWriter::end_request(const Followed& f, double t) {
  close_phase(f, t);
  lane_event('E', fmt::format("request {}", f.request->id).c_str(), f, us(t));
  std::int64_t& lane = lanes_.at(static_cast<std::size_t>(f.pid - 1)).at(static_cast<std::size_t>(f.tid - kFirstLaneTid));
  assert(lane == kBusy);
  lane = ns(t);
}

void TimelineWriter::on_arrival(const Request& r) {
  if (!in_window(r.arrival_s)) return;
  Followed f;
  f.request = &r;
  f.phase_start_s = r.arrival_s;
  begin_request(f, r, r.replica + 1, r.arrival_s);
  queued_.emplace(r.id, f);
}

TimelineWriter::Followed* TimelineWriter::active(const Request& r) {
  auto it = active_.find(r.id);
  return it == active_.end() ? nullptr : &it->second;
}

void TimelineWriter::on_handed_off(const Request& r) {
  if (Followed* f = active(r)) set_phase(*f, Phase::kTransferQueued, r.first_token_s);
}

void TimelineWriter::on_transfer_started(const Request& r, std::int32_t) {
  if (Followed* f = active(r)) set_phase(*f, Phase::kKvTransfer, r.transfer_start_s);
}

void TimelineWriter::on_transfer_ended(const Request& r) {
  Followed* f = active(r);
  if (!f) return;
  // The slice on the prefill replica ends with the transfer; the request goes on as a slice
  // on a lane of the decode replica, decoding (or back in its waiting queue, when forking
  // to its width there failed).
  end_request(*f, r.transfer_end_s);
  f->phase = r.state == RequestState::kWaiting ? Phase::kPreempted : Phase::kDecode;
  f->phase_start_s = r.transfer_end_s;
  begin_request(*f, r, r.replica + 1, r.transfer_end_s);
}

void TimelineWriter::set_phase(Followed& f, Phase p, double t) {
  if (f.phase == p) return;
  close_phase(f, t);
  f.phase = p;
  f.phase_start_s = t;
}

void TimelineWriter::on_iteration(const IterationSample& s, const IterationPlan& plan) {
  on_replica_iteration(0, s, plan);
}

void TimelineWriter::on_replica_iteration(std::int32_t replica, const IterationSample& s, const IterationPlan& plan) {
  const double t = s.start_s;
  ++stamp_;
  // The batch's requests are computing; the rest of this replica's followed requests show
  // where the scheduler left them (preempted ones are back in a queue).
  auto batched = [&](const Request* r, Phase p) {
    auto it = active_.find(r->id);
    if (it == active_.end()) {
      auto q = queued_.find(r->id);
      if (q == queued_.end()) return;  // arrived outside the window
      it = active_.emplace(r->id, q->second).first;
      queued_.erase(q);
    }
    it->second.in_batch = stamp_;
    set_phase(it->second, p, t);
  };
  for (const PrefillWork& w : plan.prefills) batched(w.request, Phase::kPrefill);
  for (const Request* r : plan.decodes) batched(r, Phase::kDecode);
  for (auto& [id, f] : active_) {
    const Request& r = *f.request;
    if (f.in_batch == stamp_ || r.replica != replica) continue;
    if (r.state == RequestState::kSwapped) set_phase(f, Phase::kSwapped, t);
    else if (r.state == RequestState::kWaiting && f.phase != Phase::kQueued) set_phase(f, Phase::kPreempted, t);
  }
  if (s.index % settings_.stride == 0 && in_window(t)) write_iteration(replica, s);
}

void TimelineWriter::write_iteration(std::int32_t replica, const IterationSample& s) {
  const int pid = replica + 1;
  const std::string ts = us(s.start_s);
  begin_event();
  out_ << fmt::format(
      R"({{"ph":"X","name":"iteration","pid":{},"tid":1,"ts":{},"dur":{},"args":{{"index":{},"batch_requests":{},"batch_seqs":{},"prefill_tokens":{},"decode_tokens":{},"duration_ms":{}}}}})",
      pid, ts, us_of_ns(ns(s.start_s + s.duration_s) - ns(s.start_s)), s.index, s.batch_requests, s.batch_seqs,
      s.prefill_tokens, s.decode_tokens, s.duration_s * 1e3);
  std::string memory;
  for (const auto& f : alloc::kMemoryBreakdownFields)
    memory += fmt::format("{}\"{}\":{}", memory.empty() ? "" : ",", f.name, s.memory.*f.member);
  const bool layers = std::any_of(std::begin(alloc::kLayerClassFields), std::end(alloc::kLayerClassFields),
                                  [&](const auto& f) { return s.memory.*f.member != 0; });
  if (layers)
    for (const auto& f : alloc::kLayerClassFields) memory += fmt::format(",\"{}\":{}", f.name, s.memory.*f.member);
  begin_event();
  out_ << fmt::format(R"({{"ph":"C","name":"memory","pid":{},"tid":0,"ts":{},"args":{{{}}}}})", pid, ts, memory);
  begin_event();
  out_ << fmt::format(
      R"({{"ph":"C","name":"queues","pid":{},"tid":0,"ts":{},"args":{{"waiting":{},"running":{},"swapped":{}}}}})",
      pid, ts, s.waiting, s.running, s.swapped);
  const alloc::KvAllocator& a = *allocators_.at(static_cast<std::size_t>(replica));
  if (a.caches_prefixes()) {
    const alloc::PrefixCacheStats p = a.stats().prefix;
    begin_event();
    out_ << fmt::format(
        R"({{"ph":"C","name":"prefix","pid":{},"tid":0,"ts":{},"args":{{"prompt_tokens":{},"hit_tokens":{}}}}})", pid,
        ts, p.prompt_tokens, p.hit_tokens);
  }
  ++iterations_written_;
  if (settings_.max_iterations > 0 && iterations_written_ >= settings_.max_iterations) open_ = false;
}

void TimelineWriter::on_request_finished(const Request& r) {
  auto& map = active_.count(r.id) ? active_ : queued_;
  auto it = map.find(r.id);
  if (it == map.end()) return;
  end_request(it->second, r.finish_s);
  map.erase(it);
}

void TimelineWriter::finish(double now_s) {
  // In id order, so that the file does not depend on the hash map's iteration order.
  std::vector<Followed> open;
  for (const auto* map : {&queued_, &active_})
    for (const auto& [id, f] : *map) open.push_back(f);
  std::sort(open.begin(), open.end(), [](const Followed& a, const Followed& b) { return a.request->id < b.request->id; });
  for (const Followed& f : open) end_request(f, now_s);
  queued_.clear();
  active_.clear();
  out_ << "\n]}\n";
}

}  // namespace pagesim::sim
