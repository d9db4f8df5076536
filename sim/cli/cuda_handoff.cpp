#include "sim/cli/cuda_handoff.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

namespace pagesim::sim::cli {

std::filesystem::path cuda_executable_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / kCudaExecutableName;
}

std::string exec_cuda_executable(const std::filesystem::path& executable, const std::string& command,
                                 const std::string& alternative, char** argv) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::execv(executable.c_str(), argv);
  const int error = errno;  // execv returned: it failed
  const std::string tail = alternative.empty() ? "" : "; " + alternative;
  if (error == ENOENT) {
#if PAGESIM_HAVE_CUDA
    const std::string how = fmt::format("build the {0} target (`cmake --build BUILD_DIR --target {0}`) and keep it "
                                        "beside pagesim",
                                        kCudaExecutableName);
#else
    const std::string how = fmt::format(
        "this pagesim was built without CUDA (nvcc not found or PAGESIM_ENABLE_CUDA=OFF); configure with "
        "-DPAGESIM_ENABLE_CUDA=ON where nvcc is installed and build the {} target",
        kCudaExecutableName);
#endif
    return fmt::format("{} runs in {}, expected beside this pagesim at {}, which does not exist: {}{}", command,
                       kCudaExecutableName, executable.string(), how, tail);
  }
  return fmt::format("{} runs in {}, which could not be started: {}{}", command, executable.string(),
                     std::strerror(error), tail);
}

}  // namespace pagesim::sim::cli
