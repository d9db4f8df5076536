// KernelError: the one error channel of kernels/.
//
// Thrown at the boundary of every public kernels/ function (CPU reference, planners, CUDA
// launchers) when the caller passes something unsupported or inconsistent — a head size,
// dtype or block size the kernels were not built for, tensors whose shapes disagree, a
// misaligned pointer — and when the CUDA runtime reports an error. The message names the
// function, the argument (or CUDA call) and what was expected. Kernels never crash on such
// input: validation happens on the host before any launch.
#pragma once

#include <stdexcept>
#include <string>

namespace pagesim::kernels {

class KernelError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace pagesim::kernels
