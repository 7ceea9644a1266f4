#pragma once
// One writer per results file: a run holds an exclusive lock on "<results>.lock" for its whole
// life, up to and including the rename of "<results>.partial" and the final close, and, while
// the results file exists, on the results file itself (one byte far beyond its data), so that a
// run that reaches the same file under another name (a hard link) is refused too. The locks are
// open-file-description locks (fcntl F_OFD_SETLK), so the kernel (or the file server) drops
// them when the holder dies, kill -9 included: a lock left by a killed job never blocks anyone.
// The lock file holds who took it (host, pid, start time, command) for the message a second run
// gets. docs/running.md ("One writer per file") says what file systems must provide.
#include <string>
#include <vector>

namespace qsweep::store {

class WriterLock {
 public:
  // Takes the lock for the results file `results_path` (a real_results_path, companions.hpp).
  // Throws InputError naming the holder if another run holds it (or only that another run holds
  // it, when that run reached the file under another name), and StoreError if the lock file
  // cannot be made or locked (a file system without locks).
  WriterLock(const std::string& results_path, const std::string& command_line);
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  // Removes the lock file, then releases the locks.
  ~WriterLock();

  // Holds the file at `path` too, before it is renamed to the results file (a file being
  // created, grown or merged), so that the results file is held from the moment it has its name.
  void hold(const std::string& path);

  static std::string lock_path(const std::string& results_path) { return results_path + ".lock"; }

  // Who holds the lock of the results file named `results_path`, under any name ("" if
  // nobody): for `qsweep status` and `verify`.
  static std::string holder(const std::string& results_path);

 private:
  std::string results_path_;
  std::string path_;
  int fd_ = -1;
  std::vector<int> held_;  // the results files held (hold)
};

}  // namespace qsweep::store
