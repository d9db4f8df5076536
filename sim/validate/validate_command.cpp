#include "sim/validate/validate_command.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <new>
#include <string>

#include <fmt/format.h>

#include "kernels/dtype.h"
#include "sim/validate/sampled_batch.h"
#include "sim/validate/validator.h"

namespace pagesim::sim {

namespace {

std::string format_error(double v) {
  if (std::isinf(v)) return "inf";
  return fmt::format("{:.3g}", v);
}

std::string result_text(const BatchCheck& c, const ValidatorSettings& s, const Tolerance& tol) {
  if (!c.error.empty()) return "FAIL (error: " + c.error + ")";
  if (c.passed) return "pass";
  const std::int64_t elements = c.query_tokens * s.num_q_heads * s.head_dim;
  std::string why = c.nonfinite > 0
                        ? fmt::format("{} of {} outputs non-finite", c.nonfinite, elements)
                        : fmt::format("{} of {} outputs beyond {:.3g} + {:.3g}*|ref|", c.violations, elements,
                                      tol.atol, tol.rtol);
  return fmt::format("FAIL ({}; worst: sequence {} = request {} seq {}, position {}, query head {})", why,
                     c.worst_sequence, c.worst_request, c.worst_seq, c.worst_position, c.worst_q_head);
}

}  // namespace

int run_validate_command(const ValidateOptions& options, const PagedAttentionBackends& backends, std::ostream& out,
                         std::ostream& err) {
  try {
    ValidatorSettings settings;
    settings.device = parse_validate_device(options.device, "--device");
    settings.dtype = parse_kv_dtype(options.dtype, "--dtype");
    settings.num_q_heads = options.num_q_heads;
    settings.num_kv_heads = options.num_kv_heads;
    settings.head_dim = options.head_dim;
    settings.atol = options.atol;
    settings.rtol = options.rtol;
    settings.seed = options.seed;

    const BatchFile file = read_batch_file(options.file);
    const Validator validator(settings, file.header, backends);
    const Tolerance tol = validator.tolerance();
    out << fmt::format("{}: allocator {}, experiment {}, block size {}, {} blocks, {} batches\n",
                       options.file.string(), file.header.allocator.empty() ? "?" : file.header.allocator,
                       file.header.experiment.empty() ? "?" : file.header.experiment, file.header.block_size,
                       file.header.num_blocks, file.batches.size());
    const std::string heads =
        file.header.latent()
            ? fmt::format("latent attention: {} query heads over latent rows of {} (value {}), {} cache",
                          settings.num_q_heads, file.header.latent_dim, file.header.value_dim,
                          kernels::dtype_name(settings.dtype))
            : fmt::format("{} query heads / {} KV heads, head_dim {}", settings.num_q_heads, settings.num_kv_heads,
                          settings.head_dim);
    out << fmt::format("device {}, {}, {}, seed {}; pass: |err| <= {:.3g} + {:.3g}*|ref|\n",
                       validate_device_name(settings.device), kernels::dtype_name(settings.dtype), heads,
                       settings.seed, tol.atol, tol.rtol);
    if (file.batches.empty()) {
      err << fmt::format("error: {} holds no batch: nothing to validate\n", options.file.string());
      return 1;
    }
    out << fmt::format("{:>6} {:>10} {:>6} {:>10} {:>8} {:>8} {:>12} {:>9}  {}\n", "batch", "iteration", "seqs",
                       "kv_tokens", "queries", "kind", "max_abs_err", "rel_err", "result");
    std::int64_t passed = 0;
    double worst = 0;
    std::int64_t index = 0;
    for (const SampledBatch& b : file.batches) {
      const BatchCheck c = validator.check(b, index++);
      if (c.passed) ++passed;
      const double shown = c.nonfinite > 0 ? std::numeric_limits<double>::infinity() : c.max_abs_error;
      if (c.error.empty()) worst = std::max(worst, shown);
      out << fmt::format("{:>6} {:>10} {:>6} {:>10} {:>8} {:>8} {:>12} {:>9}  {}\n", c.index, c.iteration,
                         c.sequences, c.kv_tokens, c.query_tokens, c.decode ? "decode" : "prefill",
                         c.error.empty() ? format_error(shown) : "-",
                         c.error.empty() ? format_error(c.relative_error()) : "-", result_text(c, settings, tol));
    }
    const auto total = static_cast<std::int64_t>(file.batches.size());
    out << fmt::format("summary: {} of {} batches pass ({} fail), max |err| {} on {}: {}\n", passed, total,
                       total - passed, format_error(worst), validate_device_name(settings.device),
                       passed == total ? "PASS" : "FAIL");
    return passed == total ? 0 : 1;
  } catch (const std::bad_alloc&) {
    throw;  // main names the command and its input
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace pagesim::sim
