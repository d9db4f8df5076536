#include "allocator/hetero/grouped_kv_allocator.h"

#include <algorithm>
#include <limits>
#include <string>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Pages of each table per large page; refuses pools whose page ids would not fit BlockId, and
// a single free queue over pages of several sizes.
std::vector<std::int64_t> pages_per_large(const KvLayout& l, bool single_free_queue) {
  std::vector<std::int64_t> per;
  std::int64_t most = 1;
  for (const TableGroup& t : l.tables) {
    per.push_back(l.large_page_bytes / t.page_bytes);
    most = std::max(most, per.back());
  }
  if (l.num_large_pages < 1)
    throw AllocatorError(l.policy + " allocator: the pool holds no page of " + std::to_string(l.large_page_bytes) + " bytes");
  if (l.num_large_pages > std::numeric_limits<BlockId>::max() / most)
    throw AllocatorError(l.policy + " allocator: " + std::to_string(l.num_large_pages) + " large pages of " +
                         std::to_string(most) + " pages exceed 32-bit page ids; use a larger block_size");
  if (single_free_queue && most > 1)
    throw AllocatorError(l.policy + " allocator: a single free-block queue needs pages of one size, but a large page of " +
                         std::to_string(l.large_page_bytes) + " bytes holds " + std::to_string(most) + " pages of a table");
  return per;
}

}  // namespace

bool GroupedKvAllocator::one_page_size(const KvLayout& layout) {
  return std::all_of(layout.tables.begin(), layout.tables.end(),
                     [&](const TableGroup& t) { return t.page_bytes == layout.large_page_bytes; });
}

GroupedKvAllocator::GroupedKvAllocator(LayerGroups groups, KvLayout layout, bool prefix_cache, EvictionKind eviction,
                                       bool single_free_queue)
    : groups_(std::move(groups)),
      layout_(std::move(layout)),
      prefix_cache_(prefix_cache),
      pool_(layout_.num_large_pages, pages_per_large(layout_, single_free_queue), eviction, single_free_queue) {
  if (eviction == EvictionKind::kLruProtectWaiting)
    throw AllocatorError(layout_.policy + " allocator: eviction lru_protect_waiting is not supported (no waiting-queue "
                         "bookkeeping); use lru, fifo or lfu");
  for (const TableGroup& t : layout_.tables) {
    has_state_ = has_state_ || t.kind == TableKind::kState;
    for (const TablePart& part : t.parts)
      if (part.group < 0 || static_cast<std::size_t>(part.group) >= groups_.size())
        throw AllocatorError(layout_.policy + " allocator: the layout names layer group " + std::to_string(part.group) +
                             " of " + std::to_string(groups_.size()) + "; build it from the same groups");
  }
}

std::string GroupedKvAllocator::name() const {
  std::string n = layout_.policy + (prefix_cache_ ? "+prefix(block=" : "(block=") + std::to_string(block_size());
  if (prefix_cache_) n += "," + pool_.eviction_name();
  if (pool_.single_free_queue()) n += ",one-free-queue";
  if (layout_.tables.size() > 1) n += ",tables=" + std::to_string(layout_.tables.size());
  return n + ")";
}

std::int64_t GroupedKvAllocator::capacity_slots() const {
  return capacity_bytes() / layout_.token_bytes / block_size() * block_size();
}

const GroupedKvAllocator::Sequence& GroupedKvAllocator::get(SeqId seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) throw AllocatorError(layout_.policy + " allocator: " + seq_name(seq) + " is not live");
  return it->second;
}

GroupedKvAllocator::Sequence& GroupedKvAllocator::get(SeqId seq) {
  return const_cast<Sequence&>(static_cast<const GroupedKvAllocator*>(this)->get(seq));
}

const std::vector<BlockId>& GroupedKvAllocator::table(SeqId seq, std::int32_t t) const {
  return get(seq).tables.at(static_cast<std::size_t>(t));
}

std::vector<BlockId> GroupedKvAllocator::block_table(SeqId seq) const {
  const Sequence& s = get(seq);
  std::size_t pick = layout_.tables.size();
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    const TableGroup& tg = layout_.tables[t];
    if (tg.kind != TableKind::kTokens) continue;
    if (pick == layout_.tables.size()) pick = t;
    if (tg.keep == LayerGroupKind::kFull) return s.tables[t];
  }
  return pick < s.tables.size() ? s.tables[pick] : std::vector<BlockId>{};
}

namespace {
// The index of the first kTokens table of `layout` that drops pages, or tables.size().
std::size_t windowed_table(const KvLayout& layout) {
  for (std::size_t t = 0; t < layout.tables.size(); ++t) {
    const TableGroup& tg = layout.tables[t];
    if (tg.kind == TableKind::kTokens && tg.keep != LayerGroupKind::kFull) return t;
  }
  return layout.tables.size();
}
}  // namespace

KvAllocator::KernelTable GroupedKvAllocator::kernel_table() const {
  const std::size_t t = windowed_table(layout_);
  if (t == layout_.tables.size()) return {};
  return {layout_.tables[t].keep, layout_.tables[t].window_tokens};
}

std::vector<BlockId> GroupedKvAllocator::kernel_block_table(SeqId seq) const {
  const std::size_t t = windowed_table(layout_);
  return t == layout_.tables.size() ? block_table(seq) : get(seq).tables[t];
}

std::int64_t GroupedKvAllocator::available_blocks() const {
  std::int64_t pages = pool_.free_large() + pool_.released_large() + pool_.num_evictable();
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) pages += pool_.free_pages(static_cast<std::int32_t>(t));
  return pages;
}

std::vector<std::int64_t> GroupedKvAllocator::group_blocks(SeqId seq) const {
  const Sequence& s = get(seq);
  std::vector<std::int64_t> kept;
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    if (layout_.tables[t].kind != TableKind::kTokens) continue;
    kept.push_back(static_cast<std::int64_t>(
        std::count_if(s.tables[t].begin(), s.tables[t].end(), [](BlockId p) { return p != kNoBlock; })));
  }
  return kept;
}

std::string GroupedKvAllocator::misuse_prefix(std::string_view) const { return layout_.policy + " allocator"; }

std::int64_t GroupedKvAllocator::count_hits(std::span<const BlockHash> hashes, std::int64_t limit,
                                            std::int64_t tokens) const {
  if (!prefix_cache_ || has_state_ || limit <= 0) return 0;
  const std::int64_t B = block_size();
  std::int64_t k_max = std::min<std::int64_t>(limit, static_cast<std::int64_t>(hashes.size()));
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    const TableGroup& tg = layout_.tables[t];
    if (tg.kind != TableKind::kTokens || tg.keep != LayerGroupKind::kFull) continue;
    std::int64_t run = 0;
    while (run < k_max && pool_.lookup(static_cast<std::int32_t>(t), hashes[static_cast<std::size_t>(run)]) != kNoBlock)
      ++run;
    k_max = run;
  }
  if (k_max == 0) return 0;
  // Windowed tables: present[i] prefix counts, so that each candidate length is O(1).
  std::vector<std::pair<std::size_t, std::vector<std::int64_t>>> present;
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    const TableGroup& tg = layout_.tables[t];
    if (tg.kind != TableKind::kTokens || tg.keep == LayerGroupKind::kFull) continue;
    std::vector<std::int64_t> count(static_cast<std::size_t>(k_max) + 1, 0);
    for (std::int64_t i = 0; i < k_max; ++i)
      count[static_cast<std::size_t>(i) + 1] =
          count[static_cast<std::size_t>(i)] +
          (pool_.lookup(static_cast<std::int32_t>(t), hashes[static_cast<std::size_t>(i)]) != kNoBlock ? 1 : 0);
    present.emplace_back(t, std::move(count));
  }
  for (std::int64_t k = k_max; k > 0; --k) {
    bool all = true;
    for (const auto& [t, count] : present) {
      const TableGroup& tg = layout_.tables[t];
      const std::int64_t lo = first_kept_token(tg.keep, tg.window_tokens, first_query(k, tokens)) / B;
      if (count[static_cast<std::size_t>(k)] - count[static_cast<std::size_t>(lo)] != k - lo) {
        all = false;
        break;
      }
    }
    if (all) return k;
  }
  return 0;
}

GroupedKvAllocator::AdmitPlan GroupedKvAllocator::plan_admit(const AdmitRequest& req) const {
  const std::int64_t B = block_size();
  AdmitPlan p;
  std::int64_t limit = static_cast<std::int64_t>(req.prompt_block_hashes.size());
  if (req.whole_block_hits) limit = std::min(limit, (req.tokens_at_admission() - 1) / B);
  p.hits = count_hits(req.prompt_block_hashes, limit, req.tokens_at_admission());
  // At least one token is always computed: its logits produce the next token.
  p.cached_tokens = p.hits > 0 ? first_query(p.hits, req.tokens_at_admission()) : 0;
  p.held_tokens = req.held_tokens(p.cached_tokens);
  const std::size_t tables = layout_.tables.size();
  p.first_hit.assign(tables, 0);
  p.need.assign(tables, 0);
  for (std::size_t t = 0; t < tables; ++t) {
    const TableGroup& tg = layout_.tables[t];
    switch (tg.kind) {
      case TableKind::kTokens: {
        const std::int64_t lo = p.hits > 0 ? first_kept_token(tg.keep, tg.window_tokens, p.cached_tokens) / B : 0;
        p.first_hit[t] = lo;
        for (std::int64_t i = lo; i < p.hits; ++i)
          p.reused.push_back(pool_.lookup(static_cast<std::int32_t>(t), req.prompt_block_hashes[static_cast<std::size_t>(i)]));
        p.need[t] = pages_of(p.held_tokens) - p.hits;
        break;
      }
      case TableKind::kEncoder: p.need[t] = pages_of(req.encoder_tokens); break;
      case TableKind::kState: p.need[t] = ceil_div(tg.state_bytes, tg.page_bytes); break;
    }
  }
  return p;
}

std::vector<std::int64_t> GroupedKvAllocator::pages_to_admit(const AdmitRequest& req) const {
  check_admission(req, "pages_to_admit");
  return plan_admit(req).need;
}

bool GroupedKvAllocator::do_can_admit(const AdmitRequest& req) const {
  const AdmitPlan p = plan_admit(req);
  return pool_.plan(p.need, p.reused).feasible;
}

std::int64_t GroupedKvAllocator::peak_pages(std::size_t t, std::int64_t at_admission, std::int64_t final,
                                            std::int64_t encoder) const {
  const TableGroup& tg = layout_.tables[t];
  switch (tg.kind) {
    case TableKind::kTokens:
      if (tg.keep == LayerGroupKind::kFull) return pages_of(final);
      // The admission (all of it in every table), or a window plus the page being filled.
      return std::min(pages_of(final), std::max(pages_of(at_admission), pages_of(tg.window_tokens) + 1));
    case TableKind::kEncoder: return pages_of(encoder);
    case TableKind::kState: return ceil_div(tg.state_bytes, tg.page_bytes);
  }
  return 0;
}

bool GroupedKvAllocator::do_can_ever_admit(const AdmitRequest& req) const {
  std::int64_t large = 0;
  for (std::size_t t = 0; t < layout_.tables.size(); ++t)
    large += ceil_div(peak_pages(t, req.tokens_at_admission(), std::max(req.final_tokens(), req.tokens_at_admission()),
                                 req.encoder_tokens),
                      pool_.pages_per_large(static_cast<std::int32_t>(t)));
  return large <= layout_.num_large_pages;
}

std::int64_t GroupedKvAllocator::do_max_group_slots(const AdmitRequest& req, std::int32_t width) const {
  const std::int64_t B = block_size();
  const std::int64_t final = req.prompt_tokens + std::max<std::int64_t>(req.output_tokens - 1, 0);
  std::int64_t bytes = 0;
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    const TableGroup& tg = layout_.tables[t];
    std::int64_t pages = 0;
    if (tg.kind == TableKind::kTokens && tg.keep == LayerGroupKind::kFull) {
      // Full prompt pages shared; each sequence its own copy of the partial one, grown.
      pages = req.prompt_tokens / B + width * pages_of(req.prompt_tokens % B + std::max<std::int64_t>(req.output_tokens - 1, 0));
    } else if (tg.kind == TableKind::kTokens) {
      pages = pages_of(req.prompt_tokens) + width * std::min(pages_of(final), pages_of(tg.window_tokens) + 1);
    } else if (tg.kind == TableKind::kEncoder) {
      pages = pages_of(req.encoder_tokens);
    } else {
      pages = width * ceil_div(tg.state_bytes, tg.page_bytes);
    }
    bytes += pages * tg.page_bytes;
  }
  return ceil_div(bytes, layout_.token_bytes);
}

BlockId GroupedKvAllocator::take(Sequence& s, std::size_t t, bool fresh_first) {
  const BlockId p = pool_.take(static_cast<std::int32_t>(t), s.hint[t], fresh_first);
  s.hint[t] = pool_.large_of(p);
  ++logical_pages_;
  return p;
}

void GroupedKvAllocator::drop_out_of_window(Sequence& s) {
  const std::int64_t B = block_size();
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    const TableGroup& tg = layout_.tables[t];
    if (tg.kind != TableKind::kTokens || tg.keep == LayerGroupKind::kFull) continue;
    auto& tab = s.tables[t];
    const std::int64_t first = std::min<std::int64_t>(first_kept_token(tg.keep, tg.window_tokens, s.attended_from) / B,
                                                      static_cast<std::int64_t>(tab.size()));
    // Entries below the previous first kept page are kNoBlock already.
    std::int64_t lo = first;
    while (lo > 0 && tab[static_cast<std::size_t>(lo - 1)] != kNoBlock) --lo;
    for (std::int64_t i = lo; i < first; ++i) {  // oldest first: they become LRU victims first
      pool_.release(tab[static_cast<std::size_t>(i)]);
      tab[static_cast<std::size_t>(i)] = kNoBlock;
      --logical_pages_;
    }
  }
}

AdmitResult GroupedKvAllocator::do_admit(const AdmitRequest& req) {
  const AdmitPlan p = plan_admit(req);
  const LargePagePool::Plan room = pool_.plan(p.need, p.reused);
  if (!room.feasible) return {};
  const std::int64_t B = block_size();
  const std::int64_t n = p.held_tokens;
  const std::size_t tables = layout_.tables.size();
  Sequence s;
  s.tokens = n;
  // This step's queries start at the first token not served by the hit; the plan kept the
  // pages a query there attends (plan_admit), which is where the drops start from.
  s.attended_from = p.cached_tokens;
  s.final_tokens = std::max(req.final_tokens(), req.tokens_at_admission());
  s.encoder_tokens = req.encoder_tokens;
  s.tables.resize(tables);
  s.hint.assign(tables, -1);
  // Hits first, so that taking fresh pages can evict none of them.
  for (std::size_t t = 0; t < tables; ++t) {
    if (layout_.tables[t].kind != TableKind::kTokens) continue;
    s.tables[t].assign(static_cast<std::size_t>(pages_of(n)), kNoBlock);
    for (std::int64_t i = p.first_hit[t]; i < p.hits; ++i) {
      const BlockId pg =
          pool_.lookup(static_cast<std::int32_t>(t), req.prompt_block_hashes[static_cast<std::size_t>(i)]);
      pool_.reuse(pg);
      s.tables[t][static_cast<std::size_t>(i)] = pg;
      ++logical_pages_;
    }
  }
  const bool caching = prefix_cache_ && !has_state_;
  const auto n_hashes = static_cast<std::int64_t>(req.prompt_block_hashes.size());
  const std::int64_t hashed_now = std::min(n_hashes, n / B);
  for (std::size_t t = 0; t < tables; ++t) {
    const TableGroup& tg = layout_.tables[t];
    auto& tab = s.tables[t];
    switch (tg.kind) {
      case TableKind::kTokens:
        for (std::int64_t i = p.hits; i < pages_of(n); ++i) {
          const BlockId pg = take(s, t, room.fresh_first);
          pool_.set_filled(pg, std::min(B, n - i * B));
          if (caching && i < hashed_now) pool_.cache(pg, req.prompt_block_hashes[static_cast<std::size_t>(i)]);
          tab[static_cast<std::size_t>(i)] = pg;
        }
        break;
      case TableKind::kEncoder:
        for (std::int64_t i = 0; i < p.need[t]; ++i) {
          const BlockId pg = take(s, t, room.fresh_first);
          pool_.set_filled(pg, std::min(B, req.encoder_tokens - i * B));
          tab.push_back(pg);
        }
        break;
      case TableKind::kState:
        for (std::int64_t i = 0; i < p.need[t]; ++i) {
          const BlockId pg = take(s, t, room.fresh_first);
          pool_.set_filled(pg, std::min(tg.page_bytes, tg.state_bytes - i * tg.page_bytes));
          tab.push_back(pg);
        }
        break;
    }
  }
  if (caching && hashed_now < n_hashes) {
    s.prompt_hashes.assign(req.prompt_block_hashes.begin(), req.prompt_block_hashes.end());
    s.hashed_blocks = static_cast<std::size_t>(hashed_now);
  }
  drop_out_of_window(s);
  if (prefix_cache_) {
    if (req.readmission) {
      prefix_stats_.readmission_hit_tokens += p.cached_tokens;
    } else if (!req.received) {
      prefix_stats_.prompt_tokens += req.prompt_tokens;
      prefix_stats_.hit_tokens += p.cached_tokens;
      prefix_stats_.hit_blocks += p.hits;
      prefix_stats_.miss_blocks += n_hashes - p.hits;
    }
  }
  seqs_.emplace(req.seq, std::move(s));
  return {.admitted = true, .cached_tokens = p.cached_tokens, .held_tokens = n};
}

std::vector<std::int64_t> GroupedKvAllocator::pages_to_append(SeqId seq, std::int64_t n) const {
  const Sequence& s = get(seq);
  if (n < 0) throw AllocatorError(layout_.policy + " allocator: " + seq_name(seq) + ": cannot append " + std::to_string(n) + " tokens");
  std::vector<std::int64_t> need(layout_.tables.size(), 0);
  if (n == 0) return need;
  const bool partial_last = s.tokens % block_size() != 0;
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    if (layout_.tables[t].kind != TableKind::kTokens) continue;
    const bool cow = partial_last && pool_.ref_count(s.tables[t].back()) > 1;
    need[t] = (cow ? 1 : 0) + pages_of(s.tokens + n) - pages_of(s.tokens);
  }
  return need;
}

bool GroupedKvAllocator::can_append(SeqId seq, std::int64_t n) const {
  return pool_.plan(pages_to_append(seq, n), {}).feasible;
}

bool GroupedKvAllocator::can_append_all(std::span<const SeqHandle> group, std::int64_t n) const {
  // Summed as if each grew alone (conservative where they share a partly filled page).
  std::vector<std::int64_t> need(layout_.tables.size(), 0);
  for (const SeqHandle& s : group) {
    const auto one = pages_to_append(s.id, n);
    for (std::size_t t = 0; t < need.size(); ++t) need[t] += one[t];
  }
  return pool_.plan(need, {}).feasible;
}

bool GroupedKvAllocator::cache_computed_blocks(SeqId seq, std::span<const BlockHash> keys) {
  if (!prefix_cache_ || has_state_) return false;  // a recurrent group's state is never hit
  const Sequence& s = get(seq);
  const std::size_t full = std::min(keys.size(), static_cast<std::size_t>(s.tokens / block_size()));
  for (std::size_t i = 0; i < full; ++i)
    for (std::size_t t = 0; t < layout_.tables.size(); ++t)
      if (layout_.tables[t].kind == TableKind::kTokens && s.tables[t][i] != kNoBlock && !pool_.cached(s.tables[t][i]))
        pool_.cache(s.tables[t][i], keys[i]);
  return true;
}

void GroupedKvAllocator::cache_filled_prompt_blocks(Sequence& s) {
  const std::size_t full = std::min(s.prompt_hashes.size(), static_cast<std::size_t>(s.tokens / block_size()));
  for (; s.hashed_blocks < full; ++s.hashed_blocks)
    for (std::size_t t = 0; t < layout_.tables.size(); ++t)
      if (layout_.tables[t].kind == TableKind::kTokens && s.tables[t][s.hashed_blocks] != kNoBlock)
        pool_.cache(s.tables[t][s.hashed_blocks], s.prompt_hashes[s.hashed_blocks]);
  if (s.hashed_blocks == s.prompt_hashes.size()) {
    s.prompt_hashes = {};
    s.hashed_blocks = 0;
  }
}

bool GroupedKvAllocator::append(SeqId seq, std::int64_t n) {
  const std::vector<std::int64_t> need = pages_to_append(seq, n);
  if (n == 0) return true;
  const LargePagePool::Plan room = pool_.plan(need, {});
  if (!room.feasible) return false;
  Sequence& s = get(seq);
  const std::int64_t B = block_size();
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    if (layout_.tables[t].kind != TableKind::kTokens) continue;
    auto& tab = s.tables[t];
    std::int64_t left = n;
    const std::int64_t room_in_last = (B - s.tokens % B) % B;
    if (room_in_last > 0) {
      BlockId last = tab.back();
      if (pool_.ref_count(last) > 1) {  // copy-on-write: the first write to a shared page
        const BlockId copy = take(s, t, room.fresh_first);
        pool_.set_filled(copy, pool_.filled(last));
        pending_copies_.push_back({last, copy});
        pool_.release(last);
        --logical_pages_;
        tab.back() = last = copy;
      }
      const std::int64_t w = std::min(room_in_last, left);
      pool_.set_filled(last, pool_.filled(last) + w);
      left -= w;
    }
    while (left > 0) {
      const BlockId pg = take(s, t, room.fresh_first);
      const std::int64_t w = std::min(B, left);
      pool_.set_filled(pg, w);
      tab.push_back(pg);
      left -= w;
    }
  }
  s.attended_from = s.tokens;  // this step's first query is the first new token
  s.tokens += n;
  s.final_tokens = std::max(s.final_tokens, s.tokens);
  if (!s.prompt_hashes.empty()) cache_filled_prompt_blocks(s);
  drop_out_of_window(s);
  return true;
}

bool GroupedKvAllocator::fork(SeqId parent, SeqId child) {
  const Sequence& p = get(parent);
  if (seqs_.count(child)) throw AllocatorError(layout_.policy + " allocator: fork target " + seq_name(child) + " is already live");
  std::vector<std::int64_t> need(layout_.tables.size(), 0);
  for (std::size_t t = 0; t < layout_.tables.size(); ++t)
    if (layout_.tables[t].kind == TableKind::kState) need[t] = static_cast<std::int64_t>(p.tables[t].size());
  const LargePagePool::Plan room = pool_.plan(need, {});
  if (!room.feasible) return false;
  Sequence c = p;
  c.prompt_hashes = {};  // the parent caches its prompt's pages; the child shares them
  c.hashed_blocks = 0;
  for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
    for (BlockId& pg : c.tables[t]) {
      if (pg == kNoBlock) continue;
      if (layout_.tables[t].kind != TableKind::kState) {
        pool_.add_ref(pg);
        ++logical_pages_;
        continue;
      }
      const BlockId copy = take(c, t, room.fresh_first);  // each sequence has its own state
      pool_.set_filled(copy, pool_.filled(pg));
      pending_copies_.push_back({pg, copy});
      pg = copy;
    }
  }
  seqs_.emplace(child, std::move(c));
  return true;
}

void GroupedKvAllocator::free(SeqId seq) {
  Sequence& s = get(seq);
  for (auto& tab : s.tables) {
    // Last pages first: with LRU the deepest prefix pages are evicted before their parents.
    for (auto it = tab.rbegin(); it != tab.rend(); ++it) {
      if (*it == kNoBlock) continue;
      pool_.release(*it);
      --logical_pages_;
    }
  }
  seqs_.erase(seq);
}

std::int64_t GroupedKvAllocator::cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const {
  // The prompt's length is unknown here: its queries are taken to start after the hit.
  const auto blocks = static_cast<std::int64_t>(prompt_block_hashes.size());
  return count_hits(prompt_block_hashes, blocks, std::numeric_limits<std::int64_t>::max()) * block_size();
}

AllocatorStats GroupedKvAllocator::stats() const {
  AllocatorStats st;
  st.logical_blocks = logical_pages_;
  st.physical_blocks = pool_.referenced_pages();
  st.pending_copies = static_cast<std::int64_t>(pending_copies_.size());
  if (prefix_cache_) {
    st.prefix = prefix_stats_;
    st.prefix.evictions = pool_.evictions();
  }
  return st;
}

std::vector<BlockMove> GroupedKvAllocator::take_pending_copies() {
  std::vector<BlockMove> out;
  out.swap(pending_copies_);
  return out;
}

MemoryBreakdown GroupedKvAllocator::breakdown() const {
  const std::int64_t B = block_size();
  const auto ids = static_cast<std::size_t>(pool_.id_space());
  if (stamp_.size() != ids) {
    stamp_.assign(ids, 0);
    min_len_.assign(ids, 0);
  }
  // A page shared by sequences of different lengths keeps what its shortest holder attends.
  const std::uint64_t seen = ++generation_;
  for (const auto& [id, s] : seqs_)
    for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
      if (layout_.tables[t].kind != TableKind::kTokens) continue;
      for (BlockId pg : s.tables[t]) {
        if (pg == kNoBlock) continue;
        const auto i = static_cast<std::size_t>(pg);
        if (stamp_[i] != seen) {
          stamp_[i] = seen;
          min_len_[i] = s.tokens;
        } else {
          min_len_[i] = std::min(min_len_[i], s.tokens);
        }
      }
    }
  const std::uint64_t counted = ++generation_;
  MemoryBreakdown b;
  for (const auto& [id, s] : seqs_) {
    for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
      const TableGroup& tg = layout_.tables[t];
      for (std::size_t i = 0; i < s.tables[t].size(); ++i) {
        const BlockId pg = s.tables[t][i];
        if (pg == kNoBlock || stamp_[static_cast<std::size_t>(pg)] == counted) continue;
        stamp_[static_cast<std::size_t>(pg)] = counted;
        const std::int64_t f = pool_.filled(pg);
        if (tg.kind == TableKind::kState) {
          b.recurrent_state += f;
          b.rounding += tg.page_bytes - f;
          continue;
        }
        std::int64_t room = 0;
        for (const TablePart& part : tg.parts) {
          room += part.room_bytes;
          const LayerGroup& g = groups_[static_cast<std::size_t>(part.group)];
          const bool encoder = tg.kind == TableKind::kEncoder;
          const bool stores = encoder ? g.kind == LayerGroupKind::kCrossAttention
                                      : g.kind != LayerGroupKind::kCrossAttention && g.kind != LayerGroupKind::kRecurrent;
          if (!stores) {
            b.unused_layers += f * part.room_bytes;
            continue;
          }
          std::int64_t out = 0;
          if (!encoder) {
            const std::int64_t first = first_kept_token(g.kind, g.window_tokens, min_len_[static_cast<std::size_t>(pg)]);
            out = std::clamp<std::int64_t>(first - static_cast<std::int64_t>(i) * B, 0, f);
          }
          b.token_states += (f - out) * part.kv_bytes;
          b.out_of_window += out * part.kv_bytes;
          b.rounding += f * (part.room_bytes - part.kv_bytes);
        }
        b.rounding += (B - f) * room + (tg.page_bytes - B * room);
      }
    }
  }
  b.free = capacity_bytes() - b.allocated();
  for (std::size_t t = 0; t < layout_.tables.size(); ++t)
    b.cached_free += pool_.unreferenced_cached(static_cast<std::int32_t>(t)) * layout_.tables[t].page_bytes;
  return b;
}

void GroupedKvAllocator::validate() const {
  auto broken = [&](const std::string& what) { throw InvariantViolation(layout_.policy + " allocator: " + what); };
  const std::int64_t B = block_size();
  std::vector<std::int32_t> refs(static_cast<std::size_t>(pool_.id_space()), 0);
  std::int64_t logical = 0;
  for (const auto& [id, s] : seqs_) {
    if (s.tables.size() != layout_.tables.size()) broken(seq_name(id) + " has the wrong number of tables");
    for (std::size_t t = 0; t < layout_.tables.size(); ++t) {
      const TableGroup& tg = layout_.tables[t];
      const auto& tab = s.tables[t];
      const std::string where = seq_name(id) + " table " + std::to_string(t);
      std::int64_t entries = 0, first = 0;
      switch (tg.kind) {
        case TableKind::kTokens:
          entries = pages_of(s.tokens);
          first = first_kept_token(tg.keep, tg.window_tokens, s.attended_from) / B;
          break;
        case TableKind::kEncoder: entries = pages_of(s.encoder_tokens); break;
        case TableKind::kState: entries = ceil_div(tg.state_bytes, tg.page_bytes); break;
      }
      if (static_cast<std::int64_t>(tab.size()) != entries)
        broken(where + " has " + std::to_string(tab.size()) + " entries, expected " + std::to_string(entries));
      for (std::size_t i = 0; i < tab.size(); ++i) {
        const BlockId pg = tab[i];
        const auto idx = static_cast<std::int64_t>(i);
        if ((pg == kNoBlock) != (idx < first))
          broken(where + " entry " + std::to_string(i) + (pg == kNoBlock ? " is dropped" : " is held") +
                 " but the first kept page is " + std::to_string(first));
        if (pg == kNoBlock) continue;
        if (pg < 0 || pg >= pool_.id_space() || pool_.table_of(pg) != static_cast<std::int32_t>(t))
          broken(where + " refers to page " + std::to_string(pg) + " of another table or none");
        ++refs[static_cast<std::size_t>(pg)];
        ++logical;
        std::int64_t expect = 0;
        switch (tg.kind) {
          case TableKind::kTokens: expect = std::min(B, s.tokens - idx * B); break;
          case TableKind::kEncoder: expect = std::min(B, s.encoder_tokens - idx * B); break;
          case TableKind::kState: expect = std::min(tg.page_bytes, tg.state_bytes - idx * tg.page_bytes); break;
        }
        if (pool_.filled(pg) != expect)
          broken(where + " entry " + std::to_string(i) + ": page " + std::to_string(pg) + " has filled " +
                 std::to_string(pool_.filled(pg)) + ", expected " + std::to_string(expect));
      }
    }
    if (!s.prompt_hashes.empty() &&
        s.hashed_blocks != std::min(s.prompt_hashes.size(), static_cast<std::size_t>(s.tokens / B)))
      broken(seq_name(id) + " has cached " + std::to_string(s.hashed_blocks) + " prompt blocks of " +
             std::to_string(s.prompt_hashes.size()) + " holding " + std::to_string(s.tokens) + " tokens");
  }
  if (logical != logical_pages_)
    broken("logical page counter " + std::to_string(logical_pages_) + " != " + std::to_string(logical));
  pool_.validate(refs);
  std::int64_t referenced_bytes = 0;
  for (std::size_t p = 0; p < refs.size(); ++p)
    if (refs[p] > 0)
      referenced_bytes += layout_.tables[static_cast<std::size_t>(pool_.table_of(static_cast<BlockId>(p)))].page_bytes;
  const MemoryBreakdown br = breakdown();
  if (br.total() != capacity_bytes() || br.allocated() != referenced_bytes || br.free < 0 || br.cached_free > br.free)
    broken("breakdown allocates " + std::to_string(br.allocated()) + " of " + std::to_string(br.total()) +
           " bytes (cached_free " + std::to_string(br.cached_free) + "); referenced pages hold " +
           std::to_string(referenced_bytes) + " of capacity " + std::to_string(capacity_bytes()));
  for (const auto& f : kMemoryBreakdownFields)
    if (br.*f.member < 0) broken("breakdown class " + std::string(f.name) + " is negative");
  for (const auto& f : kLayerClassFields)
    if (br.*f.member < 0) broken("breakdown class " + std::string(f.name) + " is negative");
}

}  // namespace pagesim::alloc
