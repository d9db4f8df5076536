#include "allocator/radix/radix_allocator.h"

#include <algorithm>
#include <limits>
#include <cassert>
#include <unordered_set>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

constexpr std::string_view kName = "radix allocator";  // how its messages begin

[[noreturn]] void misuse(const std::string& what) { throw AllocatorError(std::string(kName) + ": " + what); }

}  // namespace

RadixAllocator::RadixAllocator(const RadixAllocatorSettings& settings)
    : page_size_(settings.page_size), tree_(std::max<std::int64_t>(settings.num_pages, 0)) {
  if (settings.num_pages <= 0)
    throw AllocatorError("radix allocator: num_pages must be >= 1, got " + std::to_string(settings.num_pages));
  if (settings.page_size < 1)
    throw AllocatorError("radix allocator: page_size must be >= 1 token, got " + std::to_string(settings.page_size));
}

std::string RadixAllocator::name() const { return "radix(page=" + std::to_string(page_size_) + ")"; }

const RadixAllocator::Sequence& RadixAllocator::get(SeqId seq) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) misuse(seq_name(seq) + " is not live");
  return it->second;
}

RadixAllocator::Sequence& RadixAllocator::get(SeqId seq) {
  return const_cast<Sequence&>(static_cast<const RadixAllocator*>(this)->get(seq));
}

std::string RadixAllocator::misuse_prefix(std::string_view) const { return std::string(kName); }

void RadixAllocator::check_prompt_keys(const AdmitRequest& req) const {
  if (static_cast<std::int64_t>(req.prompt_block_hashes.size()) > req.prompt_tokens / page_size_)
    misuse(seq_name(req.seq) + ": " + std::to_string(req.prompt_block_hashes.size()) + " prompt page keys for only " +
           std::to_string(req.prompt_tokens / page_size_) + " full prompt pages");
}

std::int64_t RadixAllocator::hit_pages(const AdmitRequest& req, std::int64_t max_hit_pages) const {
  // At least the last token is computed, so that the model has logits to sample from
  // (SGLang schedule_batch.py, Req._compute_max_prefix_len: input_len - 1), and the match
  // is cut to whole pages of those tokens (RadixCache.match_prefix with page_size > 1).
  return std::min({tree_.match(req.prompt_block_hashes), max_hit_pages, (req.tokens_at_admission() - 1) / page_size_});
}

std::int64_t RadixAllocator::pages_needed(const AdmitRequest& req, std::int64_t max_hit_pages) const {
  const std::int64_t hits = hit_pages(req, max_hit_pages);
  // Every hit is held: held_tokens >= cached + 1 (hit_pages leaves the last token out). A
  // later page that settle_prompt_pages swaps for a tree page only lowers the cost.
  return pages_for(req.held_tokens(hits * page_size_)) - hits + tree_.unreferenced_in_path(req.prompt_block_hashes, hits);
}

bool RadixAllocator::do_can_admit(const AdmitRequest& req) const {
  check_prompt_keys(req);
  return pages_needed(req, std::numeric_limits<std::int64_t>::max()) <= tree_.num_available();
}

bool RadixAllocator::do_can_ever_admit(const AdmitRequest& req) const {
  return pages_for(req.final_tokens()) <= tree_.num_pages();
}

std::int64_t RadixAllocator::do_max_group_slots(const AdmitRequest& req, std::int32_t width) const {
  // Each sequence may hold its own copy of every page (fork copies private pages): an
  // upper bound, exact for width 1.
  const std::int64_t longest = std::max(req.final_tokens() - 1, req.tokens_at_admission());
  return width * pages_for(longest) * page_size_;
}

std::int64_t RadixAllocator::cached_prefix_tokens(std::span<const BlockHash> prompt_block_hashes) const {
  return tree_.match(prompt_block_hashes) * page_size_;
}

AdmitResult RadixAllocator::do_admit(const AdmitRequest& req) {
  check_prompt_keys(req);
  return admit_checked(req, std::numeric_limits<std::int64_t>::max());
}

void RadixAllocator::settle_prompt_pages(Sequence& s) {
  const auto full = std::min(s.prompt_keys.size(), static_cast<std::size_t>(s.tokens / page_size_));
  for (auto i = static_cast<std::size_t>(s.tree_pages); i < full; ++i, ++s.tree_pages) {
    const BlockId parent = i == 0 ? RadixTree::kRoot : s.table[i - 1];
    const BlockHash key = s.prompt_keys[i];
    const BlockId mine = s.table[i];
    const BlockId cached = tree_.child(parent, key);
    if (cached == kNoBlock) {
      tree_.insert(mine, parent, key);
      continue;
    }
    // Another sequence inserted this page first (SGLang's in-batch duplicate): as SGLang's
    // insert does, the table takes the tree's page and the computed copy is freed, so the
    // rest of the prompt can still join the tree below it.
    if (tree_.ref(cached) == 0) {
      ++owned_pages_;
      token_states_ += page_size_;
    }
    tree_.lock(cached);
    tree_.touch(cached);
    tree_.release(mine);
    --owned_pages_;
    token_states_ -= page_size_;
    s.table[i] = cached;
  }
  if (s.tree_pages == static_cast<std::int64_t>(s.prompt_keys.size())) s.prompt_keys = {};  // nothing left to insert
}

AdmitResult RadixAllocator::admit_checked(const AdmitRequest& req, std::int64_t max_hit_pages) {
  if (pages_needed(req, max_hit_pages) > tree_.num_available()) return {};
  const std::span<const BlockHash> keys = req.prompt_block_hashes;
  const std::int64_t hits = hit_pages(req, max_hit_pages);
  const std::int64_t cached = hits * page_size_;
  const std::int64_t tokens = req.held_tokens(cached);
  tree_.tick();
  Sequence s;
  s.tokens = tokens;
  // Lock the hits first, so that taking fresh pages below cannot evict them.
  BlockId node = RadixTree::kRoot;
  for (std::int64_t i = 0; i < hits; ++i) {
    node = tree_.child(node, keys[static_cast<std::size_t>(i)]);
    if (tree_.ref(node) == 0) {
      ++owned_pages_;
      token_states_ += page_size_;
    }
    tree_.lock(node);
    tree_.touch(node);
    s.table.push_back(node);
  }
  if (hits > 0) tree_.split_after(node);  // match_prefix splits the node where the match ends
  s.tree_pages = hits;
  const std::int64_t n_pages = pages_for(tokens);
  while (static_cast<std::int64_t>(s.table.size()) < n_pages) {
    s.table.push_back(tree_.take());
    ++owned_pages_;
  }
  token_states_ += tokens - cached;
  logical_pages_ += n_pages;
  // Full prompt pages held now join the tree at once; those of later chunks as append()
  // fills them, so the keys are kept until then.
  s.prompt_keys.assign(keys.begin(), keys.end());
  settle_prompt_pages(s);
  if (req.readmission) {
    prefix_.readmission_hit_tokens += cached;
  } else if (!req.received) {
    prefix_.prompt_tokens += req.prompt_tokens;
    prefix_.hit_tokens += cached;
    prefix_.hit_blocks += hits;
    prefix_.miss_blocks += static_cast<std::int64_t>(keys.size()) - hits;
  }
  seqs_.emplace(req.seq, std::move(s));
  return {.admitted = true, .cached_tokens = cached, .held_tokens = tokens};
}

std::int64_t RadixAllocator::pages_to_append(SeqId seq, std::int64_t n) const {
  const Sequence& s = get(seq);
  return pages_for(s.tokens + n) - static_cast<std::int64_t>(s.table.size());
}

bool RadixAllocator::can_append(SeqId seq, std::int64_t n) const {
  return pages_to_append(seq, n) <= tree_.num_available();
}

bool RadixAllocator::can_append_all(std::span<const SeqHandle> group, std::int64_t n) const {
  std::int64_t need = 0;
  for (const SeqHandle& s : group) need += pages_to_append(s.id, n);
  return need <= tree_.num_available();
}

bool RadixAllocator::append(SeqId seq, std::int64_t n) {
  if (!can_append(seq, n)) return false;
  Sequence& s = get(seq);
  tree_.tick();
  const std::int64_t n_pages = pages_for(s.tokens + n);
  logical_pages_ += n_pages - static_cast<std::int64_t>(s.table.size());
  while (static_cast<std::int64_t>(s.table.size()) < n_pages) {
    s.table.push_back(tree_.take());
    ++owned_pages_;
  }
  s.tokens += n;
  token_states_ += n;
  if (!s.prompt_keys.empty()) settle_prompt_pages(s);
  return true;
}

bool RadixAllocator::fork(SeqId parent, SeqId child) {
  if (seqs_.count(child)) misuse(seq_name(child) + " is already live");
  const Sequence& p = get(parent);
  const std::int64_t private_pages = static_cast<std::int64_t>(p.table.size()) - p.tree_pages;
  if (private_pages > tree_.num_available()) return false;
  Sequence c;
  c.tokens = p.tokens;
  c.tree_pages = p.tree_pages;
  c.table.reserve(p.table.size());
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(p.table.size()); ++i) {
    const BlockId src = p.table[static_cast<std::size_t>(i)];
    if (i < p.tree_pages) {
      tree_.lock(src);  // held by the parent: no change of class
      c.table.push_back(src);
      continue;
    }
    const BlockId dst = tree_.take();
    ++owned_pages_;
    token_states_ += std::min<std::int64_t>(page_size_, p.tokens - i * page_size_);
    pending_copies_.push_back({src, dst});
    c.table.push_back(dst);
  }
  logical_pages_ += static_cast<std::int64_t>(c.table.size());
  seqs_.emplace(child, std::move(c));
  return true;
}

void RadixAllocator::free(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) misuse(seq_name(seq) + " is not live (double free?)");
  const Sequence& s = it->second;
  tree_.tick();
  // Releasing a cached prefix counts as an access (SGLang cache_finished_req re-inserts
  // the request's tokens, refreshing last_access_time along the path).
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(s.table.size()); ++i) {
    const BlockId p = s.table[static_cast<std::size_t>(i)];
    if (i < s.tree_pages) {
      tree_.touch(p);
      if (tree_.ref(p) == 1) {
        --owned_pages_;
        token_states_ -= page_size_;
      }
    } else {
      --owned_pages_;
      token_states_ -= std::min<std::int64_t>(page_size_, s.tokens - i * page_size_);
    }
    tree_.release(p);
  }
  logical_pages_ -= static_cast<std::int64_t>(s.table.size());
  seqs_.erase(it);
}

MemoryBreakdown RadixAllocator::breakdown() const {
  MemoryBreakdown b;
  b.token_states = token_states_;
  b.rounding = owned_pages_ * page_size_ - token_states_;
  b.free = (tree_.num_pages() - owned_pages_) * page_size_;
  b.cached_free = tree_.num_unreferenced() * page_size_;
  return b;
}

AllocatorStats RadixAllocator::stats() const {
  AllocatorStats st;
  st.logical_blocks = logical_pages_;
  st.physical_blocks = owned_pages_;
  st.pending_copies = static_cast<std::int64_t>(pending_copies_.size());
  st.prefix = prefix_;
  st.prefix.evictions = tree_.evictions();
  return st;
}

std::vector<BlockMove> RadixAllocator::take_pending_copies() {
  std::vector<BlockMove> out;
  out.swap(pending_copies_);
  return out;
}

void RadixAllocator::validate() const {
  auto broken = [](const std::string& what) { throw InvariantViolation("radix allocator: " + what); };
  std::vector<const std::vector<BlockId>*> tables;
  tables.reserve(seqs_.size());
  std::unordered_set<BlockId> counted;
  std::int64_t tokens = 0, logical = 0;
  for (const auto& [id, s] : seqs_) {
    tables.push_back(&s.table);
    const std::string name = seq_name(id);
    if (static_cast<std::int64_t>(s.table.size()) != pages_for(s.tokens))
      broken(name + " holds " + std::to_string(s.tokens) + " tokens in " + std::to_string(s.table.size()) + " pages");
    logical += static_cast<std::int64_t>(s.table.size());
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(s.table.size()); ++i) {
      const BlockId p = s.table[static_cast<std::size_t>(i)];
      const bool tree = i < s.tree_pages;
      if (tree_.in_tree(p) != tree)
        broken(name + ": page " + std::to_string(p) + " at index " + std::to_string(i) +
               (tree ? " should be a tree page" : " should be private"));
      if (tree && tree_.parent(p) != (i == 0 ? RadixTree::kRoot : s.table[static_cast<std::size_t>(i - 1)]))
        broken(name + ": tree page " + std::to_string(p) + " is not the child of the page before it");
      if (counted.insert(p).second)
        tokens += tree ? page_size_ : std::min<std::int64_t>(page_size_, s.tokens - i * page_size_);
    }
    if (!s.prompt_keys.empty() &&
        s.tree_pages != std::min(static_cast<std::int64_t>(s.prompt_keys.size()), s.tokens / page_size_))
      broken(name + " has " + std::to_string(s.tree_pages) + " tree pages, expected its full keyed prompt pages (" +
             std::to_string(s.prompt_keys.size()) + " keys, " + std::to_string(s.tokens) + " tokens)");
  }
  tree_.validate(tables);
  const auto owned = static_cast<std::int64_t>(counted.size());
  if (owned != owned_pages_) broken("owned pages " + std::to_string(owned_pages_) + " != " + std::to_string(owned));
  if (owned + tree_.num_free() + tree_.num_unreferenced() != tree_.num_pages())
    broken("owned + free + cached-but-free pages != num_pages");
  if (tokens != token_states_) broken("token_states " + std::to_string(token_states_) + " != " + std::to_string(tokens));
  if (logical != logical_pages_) broken("logical pages " + std::to_string(logical_pages_) + " != " + std::to_string(logical));
  if (breakdown().total() != capacity_slots()) broken("breakdown classes do not sum to capacity");
}

}  // namespace pagesim::alloc
