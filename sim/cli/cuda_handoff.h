// The seam between `pagesim` and `pagesim-cuda`. The commands that need the GPU —
// `validate --device cuda` and `profile` — live in a second executable, built only with
// CUDA and placed beside pagesim, so that pagesim itself links no CUDA library and a CPU
// command (run, trace, validate --device cpu) never loads cudart or cuBLAS (about 200 MiB
// mapped and 0.1 s of start-up otherwise). pagesim parses the command line first (usage
// errors and --help stay its own), then replaces itself with pagesim-cuda, passing the
// argument vector unchanged: same options, same output, same exit status.
// Stateless; the functions touch only the calling process.
#pragma once

#include <filesystem>
#include <string>

namespace pagesim::sim::cli {

// The file name of the CUDA executable; sim/CMakeLists.txt builds the target of this name
// into the folder that holds pagesim.
inline constexpr const char* kCudaExecutableName = "pagesim-cuda";

// Where the CUDA executable of the running program is: beside it (the folder of
// /proc/self/exe). Throws std::filesystem::filesystem_error if /proc/self/exe cannot be read.
std::filesystem::path cuda_executable_path();

// Replaces this process with `executable`, given `argv` unchanged (argv[0] included, so
// messages and the profile's recorded command read as the user typed them). Flushes the
// standard streams first. Returns only when the exec fails, with a one-line message naming
// `command` (e.g. "validate --device cuda"), the executable and why: when it is missing,
// how to build it, then `alternative` (e.g. "or use --device cpu") if not empty.
// REQUIRES: argv is null-terminated (as main's is).
std::string exec_cuda_executable(const std::filesystem::path& executable, const std::string& command,
                                 const std::string& alternative, char** argv);

}  // namespace pagesim::sim::cli
