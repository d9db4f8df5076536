// PagedAttentionBackend: the seam between the Validator (validator.h) and the device that
// computes paged attention. The Validator builds a batch's queries, paged K/V cache and
// block table in host memory and hands them to one backend; it never knows how the backend
// computes. Two implementations:
//   CpuPagedAttention   (cpu_paged_attention.h)   kernels::reference_paged_attention, in
//                                                 pagesim_validate, so every program has it;
//   CudaPagedAttention  (cuda_paged_attention.h)  the CUDA kernels, in pagesim_validate_cuda,
//                                                 linked only into pagesim-cuda and its tests.
// A program's main owns its backends and passes them down as PagedAttentionBackends: which
// devices a program can validate on is decided by what it links and gives, not by a
// compile-time switch in this folder.
//
// Backends are immutable. The CPU one may run on several threads at once; the CUDA one uses
// the current device, one caller at a time.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "kernels/attention_args.h"
#include "kernels/dtype.h"
#include "kernels/latent_args.h"

namespace pagesim::sim {

// A setting the validator cannot run with (unknown device or dtype, no backend for the
// device, no GPU, a head or block size the CUDA kernels do not support). The message names
// the setting and what was expected.
class ValidateError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ValidateDevice : std::uint8_t {
  kCpu,   // kernels::reference_paged_attention (any block size >= 1, any head size)
  kCuda,  // kernels::paged_decode / paged_prefill (limits.h block and head sizes)
};

// "cpu" / "cuda"; throws ValidateError naming `what` otherwise.
ValidateDevice parse_validate_device(std::string_view name, std::string_view what);
const char* validate_device_name(ValidateDevice d);

class PagedAttentionBackend {
 public:
  virtual ~PagedAttentionBackend() = default;

  // The device run() computes on.
  virtual ValidateDevice device() const = 0;

  // Throws ValidateError, naming the value and what is expected, when this backend cannot
  // run batches of `block_size` tokens per block and `head_dim` elements per head, or cannot
  // run here at all (no usable device). Returns normally otherwise.
  virtual void check_supported(std::int32_t block_size, std::int32_t head_dim) const = 0;

  // The element type run() writes args.out in, for queries and K/V stored as `input`.
  virtual kernels::DType output_dtype(kernels::DType input) const = 0;

  // Computes paged attention into args.out: decode when args.query_starts is empty, else
  // prefill, `max_query_len` being the batch's largest query_len. Synchronous. Throws
  // kernels::KernelError on bad arguments or a device error.
  // REQUIRES: every view of `args` points at dense host memory; args.out has the dtype
  // output_dtype(args.query.dtype); check_supported passed for the cache's geometry.
  virtual void run(const kernels::PagedAttentionArgs& args, std::int32_t max_query_len) const = 0;

  // Latent (MLA) batches, kernels/latent_args.h: throws ValidateError, naming the value and
  // what is expected, when this backend cannot run a latent cache of `cache` elements with
  // `query` queries, rows of latent_dim whose first value_dim are the value, in blocks of
  // block_size tokens (or cannot run here at all).
  virtual void check_supported_latent(std::int32_t block_size, std::int32_t latent_dim, std::int32_t value_dim,
                                      kernels::DType query, kernels::DType cache) const = 0;
  // Computes absorbed MLA into args.out (dtype output_dtype(args.query.dtype)), as run().
  // REQUIRES: dense host memory; check_supported_latent passed.
  virtual void run_latent(const kernels::LatentAttentionArgs& args, std::int32_t max_query_len) const = 0;
};

// The backends a program offers `pagesim validate`, one per device; non-owning (main owns
// them, and they must outlive every Validator built from this). A null entry: the program
// has no backend for that device (pagesim and CPU-only builds have no CUDA one).
struct PagedAttentionBackends {
  const PagedAttentionBackend* cpu = nullptr;
  const PagedAttentionBackend* cuda = nullptr;

  // The backend for `device`. Throws ValidateError when there is none; for cuda the message
  // says the program was built without CUDA and to use --device cpu.
  const PagedAttentionBackend& get(ValidateDevice device) const;
};

}  // namespace pagesim::sim
