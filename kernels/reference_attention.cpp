#include "kernels/reference_attention.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/arg_check.h"
#include "kernels/element_access.h"
#include "kernels/kv_layout.h"

namespace pagesim::kernels {

namespace {

using detail::require;
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A tile of one sequence's queries for one KV head: `len` consecutive queries with all
// `group` query heads of the KV head. Row r = g * len + i holds the tile's query i (logical
// position pos0 + i) for head kv_head * group + g.
struct QueryTile {
  std::int64_t query_row0 = 0;  // row of the tile's first query in args.query and args.out
  std::int64_t pos0 = 0;        // its logical position (kv_len - query_len + index in the sequence)
  std::int32_t len = 0;
  std::int32_t kv_head = 0;
  std::int32_t group = 0;       // G = num_q_heads / num_kv_heads

  Eigen::Index rows() const { return static_cast<Eigen::Index>(group) * len; }
  std::int64_t position(Eigen::Index r) const { return pos0 + r % len; }
  std::int64_t q_head(Eigen::Index r) const { return static_cast<std::int64_t>(kv_head) * group + r / len; }
  // Keys [first_key, end_key) hold every key some query of the tile sees.
  std::int64_t first_key(const AttentionMask& mask) const {
    return std::max<std::int64_t>(0, mask.first_visible_key(pos0));
  }
  std::int64_t end_key() const { return pos0 + len; }  // past the last query's own position
};

// Calls f(tile) for the query tiles of a sequence's query rows [row0, row0 + query_len) and
// KV head kv_head, in order: each holds up to reference_tile::kQueryRows rows.
template <class F>
void for_each_query_tile(std::int64_t row0, std::int32_t query_len, std::int32_t kv_len, std::int32_t kv_head,
                         std::int32_t group, F f) {
  const std::int32_t per_tile = std::max<std::int32_t>(1, reference_tile::kQueryRows / group);
  for (std::int32_t i = 0; i < query_len; i += per_tile) {
    f(QueryTile{row0 + i, static_cast<std::int64_t>(kv_len) - query_len + i, std::min(per_tile, query_len - i),
                kv_head, group});
  }
}

std::int32_t read_i32(const TensorView& v, std::int64_t i) { return v.as<const std::int32_t>()[i]; }

// The queries of tile t into q (t.rows() x head_dim).
void load_queries(const TensorView& query, const QueryTile& t, std::int32_t head_dim, Matrix& q) {
  q.resize(t.rows(), head_dim);
  for (Eigen::Index r = 0; r < t.rows(); ++r) {
    const std::int64_t base = (t.query_row0 + r % t.len) * query.stride[0] + t.q_head(r) * query.stride[1];
    load_elements(query, base, head_dim, &q(r, 0));
  }
}

// Columns [lo, hi) of a score tile that a query sees (lo == hi: none). For every mask kind
// the keys a query sees are one run, so one interval per row describes the mask.
struct Columns {
  Eigen::Index lo = 0;
  Eigen::Index hi = 0;
};

// For each row of the score tile s (keys [key0, key0 + s.cols()) against the queries of t):
// the columns its query sees under the causal limit and `mask`, into cols; adds ALiBi to
// them. Columns outside stay as they are: callers treat them as -inf.
void mask_and_bias(Matrix& s, const QueryTile& t, std::int64_t key0, const TensorView& alibi,
                   const AttentionMask& mask, std::vector<Columns>& cols) {
  cols.resize(static_cast<std::size_t>(s.rows()));
  for (Eigen::Index r = 0; r < s.rows(); ++r) {
    const std::int64_t pos = t.position(r);
    const std::int64_t hi = std::clamp<std::int64_t>(pos + 1 - key0, 0, s.cols());
    const std::int64_t lo = std::clamp<std::int64_t>(mask.first_visible_key(pos) - key0, 0, hi);
    cols[static_cast<std::size_t>(r)] = {lo, hi};
    const double slope = alibi.empty() ? 0.0 : alibi.as<const float>()[t.q_head(r)];
    if (slope == 0.0) continue;
    for (std::int64_t c = lo; c < hi; ++c) s(r, c) += slope * static_cast<double>(key0 + c - pos);
  }
}

// Writes the rows of o (already normalised) to the output rows of tile t.
void store_output(const TensorView& out, const QueryTile& t, const Matrix& o) {
  for (Eigen::Index r = 0; r < o.rows(); ++r) {
    const std::int64_t base = (t.query_row0 + r % t.len) * out.stride[0] + t.q_head(r) * out.stride[1];
    for (Eigen::Index d = 0; d < o.cols(); ++d) store_element(out, base + d, o(r, d));
  }
}

// Divides each row of acc by its softmax denominator; a row whose query saw no key is zero.
void normalise(Matrix& acc, const Vector& l) {
  for (Eigen::Index r = 0; r < acc.rows(); ++r) {
    if (l(r) > 0) acc.row(r) /= l(r); else acc.row(r).setZero();
  }
}

// Query rows of sequence s: decode has one per sequence.
void query_range(const TensorView& query_starts, std::int32_t s, std::int64_t& row0,
                 std::int32_t& len) {
  if (query_starts.empty()) {
    row0 = s;
    len = 1;
  } else {
    row0 = read_i32(query_starts, s);
    len = read_i32(query_starts, s + 1) - read_i32(query_starts, s);
  }
}

// Host-side content checks common to paged and dense: query_starts well formed, query_len <=
// kv_len (decode: any kv_len >= 0). kv_len(s) gives each sequence's length.
template <class KvLen>
void check_queries_content(const TensorView& query_starts, const AttentionShape& shape,
                           KvLen kv_len, const char* fn) {
  if (!query_starts.empty()) {
    require(read_i32(query_starts, 0) == 0, fn, "query_starts[0] must be 0");
    require(read_i32(query_starts, shape.num_seqs) == shape.num_query_tokens, fn,
            [&] { return "query_starts[num_seqs] must equal query.shape[0] = " +
                std::to_string(shape.num_query_tokens) + ", got " +
                std::to_string(read_i32(query_starts, shape.num_seqs)); });
  }
  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    const std::int32_t len = kv_len(s);
    require(len >= 0, fn, [&] { return "sequence " + std::to_string(s) + " has kv_len " + std::to_string(len); });
    if (query_starts.empty()) continue;
    const std::int32_t q = read_i32(query_starts, s + 1) - read_i32(query_starts, s);
    require(q >= 0 && q <= len, fn,
            [&] { return "sequence " + std::to_string(s) + ": query_len " + std::to_string(q) +
                " must be in [0, kv_len = " + std::to_string(len) + "]"; });
  }
}

}  // namespace

void reference_paged_attention(const PagedAttentionArgs& a) {
  const char* fn = "reference_paged_attention";
  const AttentionShape shape = check_paged_attention_args(a, fn, Backend::kReference);
  const KvCacheGeometry geo = kv_cache_geometry(a.k_cache, fn);
  const BlockTableView table{a.block_table.as<const std::int32_t>(), a.block_table.stride[0]};
  const std::int64_t table_cols = a.block_table.shape[1];
  auto kv_len = [&](std::int32_t s) { return read_i32(a.kv_lens, s); };
  check_queries_content(a.query_starts, shape, kv_len, fn);
  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    const std::int64_t blocks = (static_cast<std::int64_t>(kv_len(s)) + geo.block_size - 1) / geo.block_size;
    require(blocks <= table_cols, fn,
            [&] { return "sequence " + std::to_string(s) + ": kv_len " + std::to_string(kv_len(s)) + " needs " +
                std::to_string(blocks) + " blocks; block_table has " + std::to_string(table_cols) +
                " columns"; });
    // Only the blocks some query attends are read (a window lets earlier ones be freed).
    std::int64_t row0 = 0;
    std::int32_t qlen = 0;
    query_range(a.query_starts, s, row0, qlen);
    const BlockRange read =
        a.mask.causal() ? BlockRange{0, blocks} : attended_blocks(a.mask, kv_len(s), qlen, geo.block_size);
    for (std::int64_t b = read.first; b < read.end; ++b) {
      const std::int32_t id = table.physical_block(s, b);
      require(id >= 0 && id < geo.num_blocks, fn,
              [&] { return "block_table[" + std::to_string(s) + "][" + std::to_string(b) + "] = " +
                  std::to_string(id) + " is not in [0, " + std::to_string(geo.num_blocks) + ")"; });
    }
  }

  // Scratch of one query tile against one key tile: its size does not depend on the lengths.
  Matrix q, k, v, sc, acc;
  Vector m, l, alpha;
  std::vector<Columns> cols;
  const std::int32_t d = shape.head_dim;
  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    std::int64_t row0 = 0;
    std::int32_t qlen = 0;
    query_range(a.query_starts, s, row0, qlen);
    for (std::int32_t h = 0; h < shape.num_kv_heads; ++h) {
      for_each_query_tile(row0, qlen, kv_len(s), h, shape.group_size(), [&](const QueryTile& t) {
        load_queries(a.query, t, d, q);
        q *= static_cast<double>(a.scale);
        const Eigen::Index rows = t.rows();
        m.setConstant(rows, kNegInf);
        l.setZero(rows);
        alpha.resize(rows);
        acc.setZero(rows, d);
        // Online softmax over key tiles from the first key the tile sees (never before the
        // sequence's attended blocks); key j is in slot j % B of block block_table[s][j / B].
        for (std::int64_t key0 = t.first_key(a.mask); key0 < t.end_key(); key0 += reference_tile::kKeys) {
          const std::int64_t n = std::min<std::int64_t>(reference_tile::kKeys, t.end_key() - key0);
          k.resize(n, d);
          v.resize(n, d);
          for (std::int64_t j = 0; j < n; ++j) {
            const std::int64_t key = key0 + j;
            const std::int64_t base = geo.offset(table.physical_block(s, key / geo.block_size), h, key % geo.block_size);
            load_elements(a.k_cache, base, d, &k(j, 0));
            load_elements(a.v_cache, base, d, &v(j, 0));
          }
          sc.noalias() = q * k.transpose();
          mask_and_bias(sc, t, key0, a.alibi_slopes, a.mask, cols);
          for (Eigen::Index r = 0; r < rows; ++r) {
            const Columns c = cols[static_cast<std::size_t>(r)];
            auto row = sc.row(r);
            if (c.lo == c.hi) {  // no visible key in this tile
              row.setZero();
              alpha(r) = 1;
              continue;
            }
            auto seen = row.segment(c.lo, c.hi - c.lo);
            const double m_new = std::max(m(r), seen.maxCoeff());
            alpha(r) = std::exp(m(r) - m_new);  // 0 before the first visible key
            seen = (seen.array() - m_new).exp().matrix();
            row.head(c.lo).setZero();
            row.tail(n - c.hi).setZero();
            l(r) = l(r) * alpha(r) + seen.sum();
            m(r) = m_new;
          }
          acc.array().colwise() *= alpha.array();
          acc.noalias() += sc * v;
        }
        normalise(acc, l);
        store_output(a.out, t, acc);
      });
    }
  }
}

void reference_dense_attention(const DenseAttentionArgs& a) {
  const char* fn = "reference_dense_attention";
  const AttentionShape shape = check_dense_attention_args(a, fn);
  require(read_i32(a.kv_starts, 0) == 0, fn, "kv_starts[0] must be 0");
  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    require(read_i32(a.kv_starts, s + 1) >= read_i32(a.kv_starts, s), fn,
            [&] { return "kv_starts must be non-decreasing (at sequence " + std::to_string(s) + ")"; });
  }
  require(read_i32(a.kv_starts, shape.num_seqs) <= a.keys.shape[0], fn,
          [&] { return "kv_starts[num_seqs] = " + std::to_string(read_i32(a.kv_starts, shape.num_seqs)) +
              " exceeds keys.shape[0] = " + std::to_string(a.keys.shape[0]); });
  auto kv_len = [&](std::int32_t s) { return read_i32(a.kv_starts, s + 1) - read_i32(a.kv_starts, s); };
  check_queries_content(a.query_starts, shape, kv_len, fn);

  // Scratch of one query tile against one key tile: its size does not depend on the lengths.
  Matrix q, k, v, p, acc;
  Vector m, l;
  std::vector<Columns> cols;
  const std::int32_t d = shape.head_dim;
  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    std::int64_t row0 = 0;
    std::int32_t qlen = 0;
    query_range(a.query_starts, s, row0, qlen);
    const std::int64_t first_row = read_i32(a.kv_starts, s);
    for (std::int32_t h = 0; h < shape.num_kv_heads; ++h) {
      // Rows [key0, key0 + n) of the sequence's keys or values, head h, into dst.
      auto load_rows = [&](const TensorView& t, std::int64_t key0, std::int64_t n, Matrix& dst) {
        dst.resize(n, d);
        for (std::int64_t j = 0; j < n; ++j) {
          load_elements(t, (first_row + key0 + j) * t.stride[0] + h * t.stride[1], d, &dst(j, 0));
        }
      };
      for_each_query_tile(row0, qlen, kv_len(s), h, shape.group_size(), [&](const QueryTile& t) {
        load_queries(a.query, t, d, q);
        const Eigen::Index rows = t.rows();
        // The scores of keys [key0, key0 + n) into p, their visible columns into cols.
        auto scores = [&](std::int64_t key0, std::int64_t n) {
          load_rows(a.keys, key0, n, k);
          p.noalias() = (q * k.transpose()) * static_cast<double>(a.scale);
          mask_and_bias(p, t, key0, a.alibi_slopes, a.mask, cols);
        };
        // Pass 1: each row's largest visible score.
        m.setConstant(rows, kNegInf);
        for (std::int64_t key0 = t.first_key(a.mask); key0 < t.end_key(); key0 += reference_tile::kKeys) {
          scores(key0, std::min<std::int64_t>(reference_tile::kKeys, t.end_key() - key0));
          for (Eigen::Index r = 0; r < rows; ++r) {
            const Columns c = cols[static_cast<std::size_t>(r)];
            if (c.lo < c.hi) m(r) = std::max(m(r), p.row(r).segment(c.lo, c.hi - c.lo).maxCoeff());
          }
        }
        // Pass 2: exp(score - max), its sum, and the weighted sum of values.
        l.setZero(rows);
        acc.setZero(rows, d);
        for (std::int64_t key0 = t.first_key(a.mask); key0 < t.end_key(); key0 += reference_tile::kKeys) {
          const std::int64_t n = std::min<std::int64_t>(reference_tile::kKeys, t.end_key() - key0);
          scores(key0, n);
          load_rows(a.values, key0, n, v);
          for (Eigen::Index r = 0; r < rows; ++r) {
            const Columns c = cols[static_cast<std::size_t>(r)];
            auto row = p.row(r);
            auto seen = row.segment(c.lo, c.hi - c.lo);
            seen = (seen.array() - m(r)).exp().matrix();
            row.head(c.lo).setZero();
            row.tail(n - c.hi).setZero();
            l(r) += seen.sum();
          }
          acc.noalias() += p * v;
        }
        normalise(acc, l);
        store_output(a.out, t, acc);
      });
    }
  }
}

}  // namespace pagesim::kernels
