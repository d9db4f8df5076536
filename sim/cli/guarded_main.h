// guarded_main: what both executables, pagesim and pagesim-cuda, do around their commands.
// It parses argv with CLI11 (help exits 0, a usage error 2: CLI11's own codes, 105 and up,
// are not pagesim's), finishes the command line (finish_parse), runs `command`, and turns
// anything it throws into one line on stderr, "pagesim: error: ...", and exit status 1 (out
// of memory names the settings to lower: out_of_memory_message). Returns the exit status.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "sim/cli/command_line.h"

namespace pagesim::sim::cli {

int guarded_main(CLI::App& app, CommandLine& cl, int argc, char** argv, const std::function<int()>& command);

}  // namespace pagesim::sim::cli
