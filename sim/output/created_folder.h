// CreatedFolder: a folder a run makes for its results, and takes back if the run fails.
//
// The constructor creates the folder and any missing parents; unless keep() was called, the
// destructor removes those it created (deepest first) that are empty by then — so a run that
// fails, or is stopped, before writing a result leaves no empty folder behind, while files
// anyone put there, and folders that existed before, stay. Not copyable; one thread.
#pragma once

#include <filesystem>
#include <vector>

namespace pagesim::sim {

class CreatedFolder {
 public:
  // Throws std::filesystem::filesystem_error if the folder cannot be created.
  explicit CreatedFolder(const std::filesystem::path& dir);
  ~CreatedFolder();
  CreatedFolder(const CreatedFolder&) = delete;
  CreatedFolder& operator=(const CreatedFolder&) = delete;

  // The run succeeded: the destructor removes nothing.
  void keep() { keep_ = true; }

 private:
  std::vector<std::filesystem::path> created_;  // deepest first
  bool keep_ = false;
};

}  // namespace pagesim::sim
