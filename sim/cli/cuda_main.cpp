// pagesim-cuda: the commands of pagesim that need CUDA, in their own executable so that
// pagesim links no CUDA library (cuda_handoff.h). pagesim hands these over unchanged:
//   pagesim validate BATCHES.jsonl --device cuda [--heads H --kv-heads K --head-dim D --dtype T]
//   pagesim profile --device cuda --model PRESET [--out FILE] [grid options]
// Run directly, it takes the same arguments (validate with --device cpu as well). The options
// are pagesim's own (command_line.h); errors print one line and exit with status 1 (2 for
// usage), as pagesim's do.
#include <iostream>

#include <CLI/CLI.hpp>

#include "sim/cli/command_line.h"
#include "sim/cli/guarded_main.h"
#include "sim/profile/profile_command.h"
#include "sim/validate/cpu_paged_attention.h"
#include "sim/validate/cuda_paged_attention.h"
#include "sim/validate/validate_command.h"
#include "sim/validate/validate_path.h"

int main(int argc, char** argv) {
  using namespace pagesim;
  CLI::App app{"pagesim-cuda: the CUDA commands of pagesim (validate --device cuda, profile), which pagesim "
               "hands over to this executable"};
  app.require_subcommand(1);
  sim::cli::CommandLine cl;
  auto* validate = sim::cli::add_validate_command(app, cl);
  auto* profile = sim::cli::add_profile_command(app, cl);

  return sim::cli::guarded_main(app, cl, argc, argv, [&]() -> int {
    if (*validate) {
      // Both backends: --device cpu runs here as in pagesim, --device cuda on the GPU.
      const sim::CpuPagedAttention cpu;
      const sim::CudaPagedAttention cuda;
      return sim::run_validate_path(cl.validate, sim::PagedAttentionBackends{.cpu = &cpu, .cuda = &cuda},
                                       std::cout, std::cerr);
    }
    if (*profile) return sim::run_profile_command(cl.profile, std::cout, std::cerr);
    return 0;
  });
}
