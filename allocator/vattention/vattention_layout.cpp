#include "allocator/vattention/vattention_layout.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>

#include "allocator/allocator_error.h"

namespace pagesim::alloc {
namespace {

constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();

[[noreturn]] void bad_group(std::size_t index, const LayerGroup& g, const std::string& what) {
  throw AllocatorError("vattention layout: layer group " + std::to_string(index) + " (" +
                       std::string(to_string(g.kind)) + "): " + what);
}

[[noreturn]] void bad_setting(const std::string& field, const std::string& expected,
                              std::int64_t got) {
  throw AllocatorError("vattention layout: setting " + field + " must be " + expected + ", got " +
                       std::to_string(got));
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The layout of one group, checked. `max_tokens` sizes a token-indexed row.
VattentionGroupLayout lay_out(std::size_t index, const LayerGroup& g, std::int64_t page_bytes,
                              std::int64_t max_tokens) {
  if (g.layers < 1) bad_group(index, g, "layers must be >= 1, got " + std::to_string(g.layers));
  VattentionGroupLayout l;
  l.group = g;
  if (g.kind == LayerGroupKind::kRecurrent) {
    if (g.state_bytes < 1 || g.state_bytes % g.layers != 0) {
      bad_group(index, g, "state_bytes must be >= 1 and divisible by layers (" +
                              std::to_string(g.layers) + "), got " + std::to_string(g.state_bytes));
    }
    l.buffers = g.layers;
    l.fixed_bytes = g.state_bytes / g.layers;
  } else {
    if (g.kv_bytes_per_token < 1 || g.kv_bytes_per_token % (2 * std::int64_t{g.layers}) != 0) {
      bad_group(index, g,
                "kv_bytes_per_token must be >= 1 and divisible by 2 x layers (" +
                    std::to_string(2 * std::int64_t{g.layers}) + ": a K and a V buffer per layer), got " +
                    std::to_string(g.kv_bytes_per_token));
    }
    l.buffers = 2 * std::int64_t{g.layers};
    l.bytes_per_token = g.kv_bytes_per_token / l.buffers;
    const bool windowed = g.kind == LayerGroupKind::kSlidingWindow || g.kind == LayerGroupKind::kChunkedLocal;
    if (windowed && g.window_tokens < 1) {
      bad_group(index, g, "window_tokens must be >= 1, got " + std::to_string(g.window_tokens));
    }
    if (g.kind == LayerGroupKind::kCrossAttention) {
      if (g.encoder_tokens < 1) {
        bad_group(index, g, "encoder_tokens must be >= 1, got " + std::to_string(g.encoder_tokens));
      }
      if (g.encoder_tokens > kMaxInt64 / l.bytes_per_token) bad_group(index, g, "encoder keys overflow 64-bit bytes");
      l.fixed_bytes = g.encoder_tokens * l.bytes_per_token;
      l.bytes_per_token = 0;  // the row does not grow with the decoder's tokens
    } else if (max_tokens > (kMaxInt64 - page_bytes) / l.bytes_per_token) {
      bad_group(index, g, "a row of " + std::to_string(max_tokens) + " tokens overflows 64-bit bytes");
    }
  }
  if (l.fixed_bytes > kMaxInt64 - page_bytes) bad_group(index, g, "fixed bytes overflow 64 bits");
  l.max_pages = ceil_div(l.fixed_bytes + max_tokens * l.bytes_per_token, page_bytes);
  return l;
}

void check_page_bytes(std::int64_t page_bytes) {
  if (page_bytes < 1 || !std::has_single_bit(static_cast<std::uint64_t>(page_bytes))) {
    bad_setting("page_bytes", "a power of two (64KiB, 128KiB, 256KiB or 2MiB in the paper)", page_bytes);
  }
}

}  // namespace

VattentionLayout::VattentionLayout(const LayerGroups& groups, std::int64_t page_bytes,
                                   std::int64_t max_seq_len)
    : page_bytes_(page_bytes), max_seq_len_(max_seq_len) {
  check_page_bytes(page_bytes);
  if (max_seq_len < 1) bad_setting("max_seq_len", ">= 1", max_seq_len);
  if (groups.empty()) throw AllocatorError("vattention layout: the model has no layer group");
  groups_.reserve(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups_.push_back(lay_out(i, groups[i], page_bytes, max_seq_len));
    const VattentionGroupLayout& l = groups_.back();
    if (l.max_pages > (kMaxInt64 / page_bytes - max_request_pages_) / l.buffers) {
      throw AllocatorError("vattention layout: a request's virtual rows overflow 64-bit bytes");
    }
    max_request_pages_ += l.buffers * l.max_pages;
  }
}

std::int64_t VattentionLayout::request_pages(std::int64_t tokens) const {
  std::int64_t pages = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) pages += groups_[g].buffers * pages_per_buffer(g, tokens);
  return pages;
}

MemoryBreakdown VattentionLayout::classify(std::int64_t tokens) const {
  MemoryBreakdown b;
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const VattentionGroupLayout& l = groups_[g];
    const std::int64_t mapped = l.buffers * pages_per_buffer(g, tokens) * page_bytes_;
    const std::int64_t per_token = l.group.kv_bytes_per_token;  // all buffers of the group
    std::int64_t held = 0;  // bytes the buffers' data fills
    switch (l.group.kind) {
      case LayerGroupKind::kFull:
        b.token_states += tokens * per_token;
        held = tokens * per_token;
        break;
      case LayerGroupKind::kSlidingWindow: {
        // Keys [max(0, n + 1 - W), n) are attended by the next query (layer_group.h).
        const std::int64_t out = std::max<std::int64_t>(0, tokens + 1 - l.group.window_tokens);
        b.out_of_window += out * per_token;
        b.token_states += (tokens - out) * per_token;
        held = tokens * per_token;
        break;
      }
      case LayerGroupKind::kChunkedLocal: {
        const std::int64_t out = tokens / l.group.window_tokens * l.group.window_tokens;
        b.out_of_window += out * per_token;
        b.token_states += (tokens - out) * per_token;
        held = tokens * per_token;
        break;
      }
      case LayerGroupKind::kCrossAttention:
        held = l.buffers * l.fixed_bytes;
        b.token_states += held;
        break;
      case LayerGroupKind::kRecurrent:
        held = l.buffers * l.fixed_bytes;
        b.recurrent_state += held;
        break;
    }
    b.rounding += mapped - held;
  }
  return b;
}

std::int64_t worst_case_rounding_bytes(const LayerGroups& groups, std::int64_t page_bytes) {
  // Lengths are not bounded here: one token's row is enough to lay the groups out and check
  // them. A token-indexed buffer's fill n × b mod page takes every multiple of gcd(b, page)
  // as n runs over the integers, so its worst unfilled end is page − gcd(b, page).
  const VattentionLayout layout(groups, page_bytes, 1);
  std::int64_t worst = 0;
  for (const VattentionGroupLayout& l : layout.groups()) {
    const std::int64_t per_buffer =
        l.bytes_per_token > 0 ? page_bytes - std::gcd(l.bytes_per_token, page_bytes)
                              : l.max_pages * page_bytes - l.fixed_bytes;
    worst += l.buffers * per_buffer;
  }
  return worst;
}

std::string page_size_name(std::int64_t page_bytes) {
  if (page_bytes > 0 && page_bytes % (std::int64_t{1} << 20) == 0) return std::to_string(page_bytes >> 20) + "MiB";
  if (page_bytes > 0 && page_bytes % (std::int64_t{1} << 10) == 0) return std::to_string(page_bytes >> 10) + "KiB";
  return std::to_string(page_bytes) + "B";
}

}  // namespace pagesim::alloc
