// Input paths: where the files an experiment names (a trace, a lengths file, a cost profile,
// operator tables, a calibration file) are found, and how a run names them.
//
// A relative path is looked up, in order:
//   1. in the experiment file's folder; for a value given on the command line (--set) or an
//      experiment that is not a file (a YAML string or dict from Python), in the working
//      directory instead (experiment_dir());
//   2. in pagesim's bundled data: traces/data/ of bundled_root(), then that root itself, so
//      "traces/data/sharegpt_opt_lengths.csv" as the bundled experiments write it is found
//      from any folder. bundled_root() is $PAGESIM_DATA_DIR when set (the installed
//      package's `pagesim` command and `import pagesim` set it to <pkg>/data), else the data
//      folder of the installed package this executable runs from (<pkg>/bin/pagesim beside
//      <pkg>/data/PAGESIM_DATA), else the source tree pagesim was built from.
// The first that exists wins; an absolute path is used as is. A found path is kept in its
// portable form: relative to bundled_root() when it lies inside it (the bundled data: the
// same text on every machine, from every folder, installed or built), else absolute. config.resolved.yaml,
// summary.json and error messages show that form; input_file() gives the file to open.
// Stateless functions; they read the file system, the working directory and $PAGESIM_DATA_DIR.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace pagesim::sim {

// The name of the file that marks an installed package's data folder (python/CMakeLists.txt).
inline constexpr const char* kBundledDataMarker = "PAGESIM_DATA";

// The bundled data's root (absolute, lexically normal; see above): the installed package's
// data folder, or the source tree of this build.
std::filesystem::path bundled_root();

// The folder relative paths of `file` resolve against (step 1): its parent folder when
// `file` names an existing regular file, else the working directory ("<dict>", "<string>").
std::filesystem::path experiment_dir(const std::string& file);

// What kind of path an experiment key names.
enum class InputKind { kFile, kFolder };

// The folders step 1 and 2 try for a relative path from `base_dir`, in order.
std::vector<std::filesystem::path> input_search_folders(const std::filesystem::path& base_dir);

// The portable form of `written` (see above), or nullopt when no folder holds it (an
// absolute path that does not exist included). REQUIRES: !written.empty().
std::optional<std::string> find_input(const std::string& written, const std::filesystem::path& base_dir, InputKind kind);

// The file to open for a portable path: bundled_root() / `portable` when it is relative and
// exists there, else `portable` itself (absolute, or a config made in code: relative to the
// working directory).
std::filesystem::path input_file(const std::string& portable);

// "expected an existing file, found 'x' (looked in A, B and C)": the message of an error on
// the key that named `written`, which find_input() did not find from `base_dir`.
std::string input_not_found(const std::string& written, const std::filesystem::path& base_dir, InputKind kind);

}  // namespace pagesim::sim
