#include "kernels/reference_attention.h"

#include <Eigen/Dense>
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

// One sequence's part of the problem as the reference works on it: the rows of its queries
// for one KV head group. Row r = g * query_len + i holds query i of head kv_head * G + g.
struct SeqGroup {
  std::int64_t query_row0 = 0;  // first query row of the sequence in the batch
  std::int32_t query_len = 0;
  std::int32_t kv_len = 0;
  std::int32_t kv_head = 0;
  std::int32_t group = 0;  // G = num_q_heads / num_kv_heads
};

std::int32_t read_i32(const TensorView& v, std::int64_t i) { return v.as<const std::int32_t>()[i]; }

// Rows x head_dim matrix of queries of `sg`.
Matrix load_queries(const TensorView& query, const SeqGroup& sg, std::int32_t head_dim) {
  Matrix q(static_cast<Eigen::Index>(sg.group) * sg.query_len, head_dim);
  for (std::int32_t g = 0; g < sg.group; ++g) {
    const std::int64_t head = static_cast<std::int64_t>(sg.kv_head) * sg.group + g;
    for (std::int32_t i = 0; i < sg.query_len; ++i) {
      const std::int64_t base = (sg.query_row0 + i) * query.stride[0] + head * query.stride[1];
      for (std::int32_t d = 0; d < head_dim; ++d) {
        q(g * sg.query_len + i, d) = load_element(query, base + d);
      }
    }
  }
  return q;
}

// `rows` rows of head_dim elements, row j at element offset base + j * row_stride.
Matrix load_rows(const TensorView& t, std::int64_t base, std::int64_t row_stride, std::int64_t rows,
                 std::int32_t head_dim) {
  Matrix m(rows, head_dim);
  for (std::int64_t j = 0; j < rows; ++j) {
    for (std::int32_t d = 0; d < head_dim; ++d) m(j, d) = load_element(t, base + j * row_stride + d);
  }
  return m;
}

// Adds the mask (causal, and the window or chunk of `mask`) and ALiBi to scores of keys
// [key0, key0 + cols) for the rows of sg.
void mask_and_bias(Matrix& s, const SeqGroup& sg, std::int64_t key0, const TensorView& alibi,
                   const AttentionMask& mask) {
  for (Eigen::Index r = 0; r < s.rows(); ++r) {
    const std::int32_t g = static_cast<std::int32_t>(r / sg.query_len);
    const std::int64_t pos = sg.kv_len - sg.query_len + r % sg.query_len;
    const double slope =
        alibi.empty() ? 0.0 : alibi.as<const float>()[static_cast<std::int64_t>(sg.kv_head) * sg.group + g];
    for (Eigen::Index c = 0; c < s.cols(); ++c) {
      const std::int64_t key = key0 + c;
      if (!mask.visible(key, pos)) {
        s(r, c) = kNegInf;
      } else if (slope != 0.0) {
        s(r, c) += slope * static_cast<double>(key - pos);
      }
    }
  }
}

// Writes rows of `o` (already normalised) to the output rows of sg.
void store_output(const TensorView& out, const SeqGroup& sg, const Matrix& o) {
  for (std::int32_t g = 0; g < sg.group; ++g) {
    const std::int64_t head = static_cast<std::int64_t>(sg.kv_head) * sg.group + g;
    for (std::int32_t i = 0; i < sg.query_len; ++i) {
      const std::int64_t base = (sg.query_row0 + i) * out.stride[0] + head * out.stride[1];
      for (Eigen::Index d = 0; d < o.cols(); ++d) store_element(out, base + d, o(g * sg.query_len + i, d));
    }
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

  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    SeqGroup sg;
    query_range(a.query_starts, s, sg.query_row0, sg.query_len);
    sg.kv_len = kv_len(s);
    sg.group = shape.group_size();
    if (sg.query_len == 0) continue;
    for (sg.kv_head = 0; sg.kv_head < shape.num_kv_heads; ++sg.kv_head) {
      const Matrix q = load_queries(a.query, sg, shape.head_dim) * static_cast<double>(a.scale);
      const Eigen::Index rows = q.rows();
      Vector m = Vector::Constant(rows, kNegInf);
      Vector l = Vector::Zero(rows);
      Matrix acc = Matrix::Zero(rows, shape.head_dim);
      const BlockRange read = attended_blocks(a.mask, sg.kv_len, sg.query_len, geo.block_size);
      for (std::int64_t key0 = read.first * geo.block_size; key0 < sg.kv_len; key0 += geo.block_size) {
        const std::int64_t n = std::min<std::int64_t>(geo.block_size, sg.kv_len - key0);
        const std::int64_t base = geo.offset(table.physical_block(s, key0 / geo.block_size), sg.kv_head, 0);
        const Matrix k = load_rows(a.k_cache, base, geo.slot_stride, n, shape.head_dim);
        const Matrix v = load_rows(a.v_cache, base, geo.slot_stride, n, shape.head_dim);
        Matrix sc = q * k.transpose();
        mask_and_bias(sc, sg, key0, a.alibi_slopes, a.mask);
        for (Eigen::Index r = 0; r < rows; ++r) {
          const double m_new = std::max(m(r), sc.row(r).maxCoeff());
          if (m_new == kNegInf) continue;  // no visible key yet
          const double alpha = std::exp(m(r) - m_new);
          double row_sum = 0;
          for (Eigen::Index c = 0; c < sc.cols(); ++c) {
            sc(r, c) = std::exp(sc(r, c) - m_new);
            row_sum += sc(r, c);
          }
          l(r) = l(r) * alpha + row_sum;
          acc.row(r) = acc.row(r) * alpha + sc.row(r) * v;
          m(r) = m_new;
        }
      }
      for (Eigen::Index r = 0; r < rows; ++r) {
        if (l(r) > 0) acc.row(r) /= l(r); else acc.row(r).setZero();
      }
      store_output(a.out, sg, acc);
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

  for (std::int32_t s = 0; s < shape.num_seqs; ++s) {
    SeqGroup sg;
    query_range(a.query_starts, s, sg.query_row0, sg.query_len);
    sg.kv_len = kv_len(s);
    sg.group = shape.group_size();
    if (sg.query_len == 0) continue;
    for (sg.kv_head = 0; sg.kv_head < shape.num_kv_heads; ++sg.kv_head) {
      const Matrix q = load_queries(a.query, sg, shape.head_dim);
      const std::int64_t base = read_i32(a.kv_starts, s) * a.keys.stride[0] + sg.kv_head * a.keys.stride[1];
      const Matrix k = load_rows(a.keys, base, a.keys.stride[0], sg.kv_len, shape.head_dim);
      const std::int64_t vbase = read_i32(a.kv_starts, s) * a.values.stride[0] + sg.kv_head * a.values.stride[1];
      const Matrix v = load_rows(a.values, vbase, a.values.stride[0], sg.kv_len, shape.head_dim);
      Matrix p = (q * k.transpose()) * static_cast<double>(a.scale);
      mask_and_bias(p, sg, 0, a.alibi_slopes, a.mask);
      Matrix o = Matrix::Zero(q.rows(), shape.head_dim);
      for (Eigen::Index r = 0; r < p.rows(); ++r) {
        if (p.cols() == 0) continue;
        const double mx = p.row(r).maxCoeff();
        if (mx == kNegInf) continue;
        p.row(r) = (p.row(r).array() - mx).exp().matrix();
        const double sum = p.row(r).sum();
        o.row(r) = (p.row(r) * v) / sum;
      }
      store_output(a.out, sg, o);
    }
  }
}

}  // namespace pagesim::kernels
