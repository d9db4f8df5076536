#include "sim/scheduler/scheduler.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "allocator/pool/block_hash.h"
#include "sim/scheduler/scheduler_kinds.h"

namespace pagesim::sim {
namespace {

bool arrives_before(const Request* a, const Request* b) {
  return a->arrival_s != b->arrival_s ? a->arrival_s < b->arrival_s : a->id < b->id;
}

// Inserts r into `queue`, kept in arrival order, after the requests that do not arrive after
// it (upper_bound's place). Most come last (admitted in arrival order): that case reads one
// queued request, not the log2 of them a search reads, each a cold line in a fleet.
template <class Queue>
void insert_by_arrival(Queue& queue, Request* r) {
  if (queue.empty() || !arrives_before(r, queue.back())) queue.push_back(r);
  else queue.insert(std::upper_bound(queue.begin(), queue.end(), r, arrives_before), r);
}

}  // namespace

Scheduler::Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator)
    : Scheduler(settings, allocator, traits_of(settings.kind)) {}

Scheduler::Scheduler(const SchedulerSettings& settings, alloc::KvAllocator& allocator, const SchedulerTraits& traits)
    : settings_(settings), alloc_(allocator), traits_(traits) {
  // The experiment config checks these at parse time, naming the key and its line.
  assert(settings_.max_num_seqs >= 1);
  assert(settings_.max_num_batched_tokens >= 1);
  assert(settings_.watermark >= 0 && settings_.watermark < 1);
}

alloc::AdmitRequest Scheduler::admit_request(const Request& r, alloc::SeqId seq, std::int64_t chunk) const {
  alloc::AdmitRequest a;
  a.seq = seq;
  a.prompt_tokens = r.prompt_tokens;
  a.output_tokens = r.output_tokens;
  a.generated_tokens = r.generated;
  a.prompt_block_hashes = r.block_hashes;
  a.max_new_tokens = chunk;
  a.readmission = r.recomputes > 0;
  a.whole_block_hits = traits().whole_block_prefix_hits;
  a.encoder_tokens = settings_.encoder_tokens;
  return a;
}

bool Scheduler::can_ever_schedule(const Request& r, std::string* why, std::string* limiting_key) const {
  // The key is named on the way out only: this runs for every arrival on every replica.
  const auto limit = [limiting_key](std::string k) {
    if (limiting_key) *limiting_key = std::move(k);
    return false;
  };
  alloc::AdmitRequest a = admit_request(r, 0);
  a.generated_tokens = 0;
  if (!alloc_.can_ever_admit(a)) {
    const std::string setting = alloc_.limiting_setting(a);
    // A layer-group pool is sized in bytes (AllocatorSpec::pool_bytes), from kv.slots or GPU
    // memory: its capacity_slots() counts full-attention token equivalents (grouped) or bytes
    // (vattention), so the message names the unit by the setting.
    const bool bytes = setting == "pool_bytes";
    // vLLM's LoRA slots are a region of the pool no request can use: when the request would fit
    // the pool without it, the region is what keeps it out.
    const std::int64_t region =
        adapters_ && adapters_->settings().placement == LoraPlacement::kVllm ? adapters_->reserved_slots(false) : 0;
    const bool region_blocks = region > 0 && r.prompt_tokens + r.output_tokens <= alloc_.capacity_slots();
    *why = fmt::format("it never fits the KV pool of {} {} with allocator {} (prompt {} + output {} tokens){}",
                       alloc_.capacity_slots(), bytes ? "capacity units (allocator's own: bytes or token equivalents)" : "slots",
                       alloc_.name(), r.prompt_tokens, r.output_tokens,
                       region > 0 ? fmt::format(", of which {} hold LoRA's adapter slots (lora.max_loras = {})", region,
                                                adapters_->settings().max_loras)
                                  : std::string());
    if (region_blocks) return limit("lora.max_loras");
    return limit(setting == "capacity_slots" || bytes ? "kv.slots" : "allocator." + setting);
  }
  const std::int64_t worst = alloc_.max_group_slots(a, r.width());
  const std::int64_t headroom = headroom_slots(r);
  if (worst + headroom > alloc_.capacity_slots()) {
    *why = fmt::format("with {} sequence(s) it may hold {} slots, + {} the scheduler keeps free, more than the "
                       "pool's {} (allocator {})",
                       r.width(), worst, headroom, alloc_.capacity_slots(), alloc_.name());
    return limit("kv.slots");
  }
  if (const std::int64_t lora = adapters_ ? adapters_->reserved_slots(r.adapter >= 0) : 0;
      lora > 0 && worst + headroom + lora > alloc_.capacity_slots()) {
    const bool slots = adapters_->settings().placement == LoraPlacement::kVllm;
    *why = fmt::format("with {} sequence(s) it may hold {} slots, + {} the scheduler keeps free, + {} of LoRA "
                       "adapter weights ({}), more than the pool's {} (allocator {})",
                       r.width(), worst, headroom, lora, slots ? "vLLM's max_loras slots" : "its adapter's pages",
                       alloc_.capacity_slots(), alloc_.name());
    return limit(slots ? "lora.max_loras" : "lora.rank");
  }
  // A recompute re-prefills prompt + generated tokens in one iteration unless prefill is chunked.
  if (!traits().chunked_prefill && r.final_tokens() - 1 > settings_.max_num_batched_tokens) {
    *why = fmt::format("its prefill (up to {} tokens after a recompute) exceeds scheduler.max_num_batched_tokens = {}",
                       r.final_tokens() - 1, settings_.max_num_batched_tokens);
    return limit("scheduler.max_num_batched_tokens");
  }
  return true;
}

void Scheduler::add_request(Request* r) {
  r->state = RequestState::kWaiting;
  waiting_.push_back(r);
  alloc_.hold_pending_prefix(r->block_hashes);
}

void Scheduler::begin_iteration(IterationPlan& plan) {
  plan.clear();
  for (Request* r : preempted_now_) r->preempted_now = false;
  preempted_now_.clear();
}

void Scheduler::free_seq(alloc::SeqId seq) {
  alloc_.free(seq);
  if (observer_) observer_->on_freed(seq);
}

void Scheduler::insert_running(Request* r) {
  r->state = RequestState::kRunning;
  insert_by_arrival(running_, r);
  running_seqs_ += static_cast<std::int64_t>(r->seqs.size());
}

void Scheduler::insert_swapped(Request* r) {
  r->state = RequestState::kSwapped;
  insert_by_arrival(swapped_, r);
}

void Scheduler::preempt_running(Request* r, IterationPlan& plan) {
  running_.erase(std::find(running_.begin(), running_.end(), r));
  preempt(r, plan);
}

void Scheduler::requeue_preempted_at_back(std::size_t n) {
  assert(n <= waiting_.size());
  // preempt() pushed each to the front: the first n are the newest first.
  const auto end = waiting_.begin() + static_cast<std::ptrdiff_t>(n);
  std::reverse(waiting_.begin(), end);
  std::rotate(waiting_.begin(), end, waiting_.end());
}

bool Scheduler::admit(Request* r, double now, std::int64_t max_new_tokens, IterationPlan& plan) {
  const std::int64_t total = r->prompt_tokens + r->generated;
  const auto seq = static_cast<alloc::SeqId>(new_seq_id());
  const alloc::AdmitRequest a = admit_request(*r, seq, max_new_tokens);
  // The adapter first: its pages must not be what the KV's blocks evict.
  const bool pins = adapters_ && r->adapter >= 0 && !r->adapter_pinned;
  if (pins) {
    if (adapter_blocked(r) || !fits_with_adapter(a, r)) return false;
    adapters_->pin(r->adapter);
    r->adapter_pinned = true;
  }
  alloc::AdmitResult res = allocate_admission(a, *r);
  if (!res.admitted) {
    if (pins) unpin_adapter(r);
    return false;
  }
  r->seqs.assign(1, alloc_.handle(seq));
  if (observer_) observer_->on_admitted(*r, seq);
  r->to_prefill = total;
  r->prefilled = res.cached_tokens;
  if (a.readmission)
    r->readmission_cached_tokens += res.cached_tokens;
  else
    r->cached_tokens = res.cached_tokens;
  if (r->generated > 0) r->recomputed_tokens += total - res.cached_tokens;
  if (r->first_scheduled_s < 0) r->first_scheduled_s = now;
  const std::int64_t held = res.held_tokens;
  plan.prefills.push_back({r, held - res.cached_tokens, res.cached_tokens, held == total, /*admitted=*/true});
  insert_running(r);
  return true;
}

bool Scheduler::append_group_slots(Request* r) {
  if (!alloc_.can_append_all({r->seqs.data(), r->seqs.size()}, 1)) return false;
  for (const alloc::SeqHandle& s : r->seqs) {
    [[maybe_unused]] const bool ok = alloc_.grow(s, 1);
    assert(ok && "can_append_all promised room for every sequence");
  }
  return true;
}

bool Scheduler::try_swap_out(Request*, IterationPlan&) { return false; }

alloc::AdmitResult Scheduler::allocate_admission(const alloc::AdmitRequest& a, const Request&) {
  return alloc_.admit(a);
}

void Scheduler::reorder_waiting(const std::function<bool(const Request*, const Request*)>& before) {
  std::stable_sort(waiting_.begin(), waiting_.end(), before);
}

std::int64_t Scheduler::headroom_slots(const Request&) const { return 0; }

void Scheduler::preempt(Request* r, IterationPlan& plan) {
  ++preemptions_total_;
  running_seqs_ -= static_cast<std::int64_t>(r->seqs.size());
  r->preempted_now = true;
  r->spec_step = false;  // a step's pending proposals go with its memory
  r->spec_proposed = r->spec_accepted = r->spec_emitted = 0;
  preempted_now_.push_back(r);
  plan.preempted.push_back(r);
  ++r->preemptions;
  if (try_swap_out(r, plan)) {
    insert_swapped(r);
    return;
  }
  // Recompute: everything is freed; the request later re-prefills prompt + generated tokens
  // as one sequence and forks back to its width (see fork_to_width).
  if (traits().caches_preempted_blocks && r->seqs.size() == 1 && alloc_.caches_prefixes())
    cache_computed_blocks(*r);
  for (const alloc::SeqHandle& s : r->seqs) free_seq(s.id);
  r->seqs.clear();
  unpin_adapter(r);
  r->to_prefill = r->prefilled = 0;
  ++r->recomputes;
  ++plan.recompute_preemptions;
  r->state = RequestState::kWaiting;
  waiting_.push_front(r);
  alloc_.hold_pending_prefix(r->block_hashes);
}

void Scheduler::cache_computed_blocks(Request& r) {
  const alloc::SeqId seq = r.seqs.front().id;
  const std::int64_t full = alloc_.sequence_tokens(seq) / alloc_.block_size();
  // The blocks past the trace's keys hold the request's own tokens (its generated ones, or a
  // prompt without hash ids), which no other request shares: keys of its id alone, salted
  // apart from trace ids.
  constexpr std::uint64_t kOwnTokens = 0x6f776e2d746f6b73ULL;  // "own-toks"
  std::vector<alloc::BlockHash> keys = r.block_hashes;
  alloc::BlockHash h = keys.empty() ? alloc::kRootBlockHash : keys.back();
  for (auto j = static_cast<std::int64_t>(keys.size()); j < full; ++j) {
    h = alloc::chain_block_hash(h, kOwnTokens ^ r.id, static_cast<std::uint64_t>(j));
    keys.push_back(h);
  }
  if (alloc_.cache_computed_blocks(seq, keys)) r.block_hashes = std::move(keys);
}

std::vector<Request*> Scheduler::grow_running_or_recompute(IterationPlan& plan) {
  std::vector<Request*> kept = spare_running(), preempted;
  kept.reserve(running_.size());
  for (Request* r : running_) {
    if (append_slots(r)) {
      kept.push_back(r);
      add_decode(r, plan);
    } else {
      preempt(r, plan);
      preempted.push_back(r);
    }
  }
  set_running(std::move(kept));
  // Each preemption went to the front of waiting_, oldest first: restore arrival order.
  std::reverse(waiting_.begin(), waiting_.begin() + plan.recompute_preemptions);
  return preempted;
}

void Scheduler::admit_fcfs(double now, IterationPlan& plan, std::int64_t batched_tokens) {
  while (!waiting_.empty()) {
    Request* r = waiting_.front();
    if (r->preempted_now) break;
    const std::int64_t tokens = r->prompt_tokens + r->generated;
    if (batched_tokens + tokens > settings_.max_num_batched_tokens) break;
    if (running_seqs_ + r->width() > settings_.max_num_seqs) break;
    if (!alloc_.can_admit(admit_request(*r, 0))) break;
    pop_waiting();
    [[maybe_unused]] const bool admitted = admit(r, now, std::numeric_limits<std::int64_t>::max(), plan);
    assert(admitted && "can_admit promised room");
    batched_tokens += tokens;
  }
}

void Scheduler::on_finished(Request* r) {
  for (const alloc::SeqHandle& s : r->seqs) free_seq(s.id);
  running_seqs_ -= static_cast<std::int64_t>(r->seqs.size());
  r->seqs.clear();
  unpin_adapter(r);
  running_.erase(std::find(running_.begin(), running_.end(), r));
}

void Scheduler::retire(Request* r) {
  unpin_adapter(r);
  running_.erase(std::find(running_.begin(), running_.end(), r));
  retired_.push_back(r);
}

std::vector<Request*> Scheduler::release_retired() {
  for (Request* r : retired_) {
    for (const alloc::SeqHandle& s : r->seqs) free_seq(s.id);
    running_seqs_ -= static_cast<std::int64_t>(r->seqs.size());
    r->seqs.clear();
  }
  return std::exchange(retired_, {});
}

void Scheduler::hand_off(Request* r) {
  running_.erase(std::find(running_.begin(), running_.end(), r));
  running_seqs_ -= static_cast<std::int64_t>(r->seqs.size());
  in_transfer_.push_back({r, std::vector<alloc::SeqHandle>(r->seqs.begin(), r->seqs.end())});
  r->seqs.clear();
}

std::vector<Scheduler::InTransfer>::iterator Scheduler::find_in_transfer(const Request* r) {
  auto it = std::find_if(in_transfer_.begin(), in_transfer_.end(), [r](const InTransfer& t) { return t.request == r; });
  assert(it != in_transfer_.end() && "the request holds no KV in transfer here");
  return it;
}

void Scheduler::release_handed_off(const Request* r) {
  auto it = find_in_transfer(r);
  for (const alloc::SeqHandle& s : it->seqs) free_seq(s.id);
  in_transfer_.erase(it);
}

bool Scheduler::reserve_hand_in(const Request* r) {
  alloc::AdmitRequest a;
  a.seq = static_cast<alloc::SeqId>(next_seq_);
  a.prompt_tokens = r->prompt_tokens;
  a.output_tokens = r->output_tokens;
  a.received = true;  // admitted once already, on its prefill replica
  if (!alloc_.admit(a).admitted) return false;
  ++next_seq_;
  if (observer_) observer_->on_admitted(*r, a.seq);
  in_transfer_.push_back({r, {alloc_.handle(a.seq)}});
  return true;
}

void Scheduler::take_handed_in(Request* r) {
  auto it = find_in_transfer(r);
  r->seqs.assign(it->seqs.begin(), it->seqs.end());
  in_transfer_.erase(it);
  r->to_prefill = r->prefilled = 0;
  insert_running(r);
}

bool Scheduler::fork_to_width(Request* r) {
  const std::size_t first_new = r->seqs.size();
  while (r->seqs.size() < static_cast<std::size_t>(r->width())) {
    auto child = static_cast<alloc::SeqId>(new_seq_id());
    if (!alloc_.fork(r->seqs.front().id, child)) {
      // No room for another copy (contiguous ranges): undo and recompute later.
      for (std::size_t i = first_new; i < r->seqs.size(); ++i) free_seq(r->seqs[i].id);
      running_seqs_ -= static_cast<std::int64_t>(r->seqs.size() - first_new);
      r->seqs.resize(first_new);
      IterationPlan scratch;
      preempt_running(r, scratch);
      r->preempted_now = false;  // preempted between iterations: it blocks no admission
      return false;
    }
    if (observer_) observer_->on_forked(*r, r->seqs.front().id, child);
    r->seqs.push_back(alloc_.handle(child));
    ++running_seqs_;
  }
  return true;
}

void Scheduler::reshape_beams(Request* r, const std::vector<std::int32_t>& parents) {
  std::vector<std::int32_t> picks(r->seqs.size(), 0);
  for (std::int32_t p : parents) ++picks[static_cast<std::size_t>(p)];
  SeqHandles next;
  next.reserve(parents.size());
  // Free the dead beams first so that their blocks are back before any copy-on-write.
  for (std::size_t i = 0; i < r->seqs.size(); ++i)
    if (picks[i] == 0) free_seq(r->seqs[i].id);
  for (std::size_t i = 0; i < r->seqs.size(); ++i) {
    if (picks[i] == 0) continue;
    next.push_back(r->seqs[i]);
    for (std::int32_t k = 1; k < picks[i]; ++k) {
      auto child = static_cast<alloc::SeqId>(new_seq_id());
      if (!alloc_.fork(r->seqs[i].id, child)) throw SimulationError("beam fork failed: beam search needs a paged allocator");
      if (observer_) observer_->on_forked(*r, r->seqs[i].id, child);
      next.push_back(alloc_.handle(child));
    }
  }
  running_seqs_ += static_cast<std::int64_t>(next.size()) - static_cast<std::int64_t>(r->seqs.size());
  r->seqs = std::move(next);
}

void Scheduler::validate() const {
  auto broken = [](const std::string& what) { throw std::logic_error("scheduler invariant broken: " + what); };
  std::unordered_set<const Request*> seen;
  auto check_queue = [&](const auto& queue, RequestState state, const char* name, bool holds_seqs) {
    for (const Request* r : queue) {
      if (!seen.insert(r).second) broken(fmt::format("request {} is queued twice (found again in {})", r->id, name));
      if (r->state != state) broken(fmt::format("request {} is in the {} queue in another state", r->id, name));
      if (holds_seqs == r->seqs.empty())
        broken(fmt::format("request {} in the {} queue holds {} sequences", r->id, name, r->seqs.size()));
    }
  };
  check_queue(waiting_, RequestState::kWaiting, "waiting", false);
  check_queue(running_, RequestState::kRunning, "running", true);
  check_queue(swapped_, RequestState::kSwapped, "swapped", true);
  std::int64_t running_seqs = 0, held = 0;
  for (const Request* r : running_) running_seqs += static_cast<std::int64_t>(r->seqs.size());
  for (const Request* r : retired_) {
    if (!seen.insert(r).second) broken(fmt::format("request {} is retired and queued at once", r->id));
    if (r->state != RequestState::kFinished || r->seqs.empty())
      broken(fmt::format("retired request {} is not finished holding its sequences", r->id));
    running_seqs += static_cast<std::int64_t>(r->seqs.size());
  }
  held = running_seqs;
  for (const Request* r : swapped_) held += static_cast<std::int64_t>(r->seqs.size());
  for (const InTransfer& t : in_transfer_) {
    if (!seen.insert(t.request).second)
      broken(fmt::format("request {} is queued and in transfer at once", t.request->id));
    if (t.seqs.empty()) broken(fmt::format("request {} is in transfer holding no sequences", t.request->id));
    held += static_cast<std::int64_t>(t.seqs.size());
  }
  if (running_seqs != running_seqs_)
    broken(fmt::format("running sequence count {} != {} sequences of running and retired requests", running_seqs_,
                       running_seqs));
  if (held != alloc_.num_sequences())
    broken(fmt::format("requests hold {} sequences, the allocator {}", held, alloc_.num_sequences()));
  if (!std::is_sorted(running_.begin(), running_.end(), arrives_before)) broken("running queue out of arrival order");
  if (!std::is_sorted(swapped_.begin(), swapped_.end(), arrives_before)) broken("swapped queue out of arrival order");
}

}  // namespace pagesim::sim
