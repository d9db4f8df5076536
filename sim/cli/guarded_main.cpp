#include "sim/cli/guarded_main.h"

#include <exception>
#include <iostream>
#include <new>

namespace pagesim::sim::cli {

int guarded_main(CLI::App& app, CommandLine& cl, int argc, char** argv, const std::function<int()>& command) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help (code 0) or the usage error
    return code == 0 ? 0 : 2;
  }
  finish_parse(cl, argc, argv);
  try {
    return command();
  } catch (const std::bad_alloc&) {
    std::cerr << "pagesim: error: " << out_of_memory_message(argc, argv) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "pagesim: error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace pagesim::sim::cli
