#pragma once
// One writer per results file: a run holds an exclusive lock on "<results>.lock" for its whole
// life, up to and including the rename of "<results>.partial" and the final close. The lock is
// an open-file-description lock (fcntl F_OFD_SETLK) on that file, so the kernel (or the file
// server) drops it when the holder dies, kill -9 included: a lock left by a killed job never
// blocks anyone. The file holds who took it (host, pid, start time, command) for the message a
// second run gets. docs/running.md ("One writer per file") says what file systems must provide.
#include <string>

namespace qsweep::store {

class WriterLock {
 public:
  // Takes the lock for the results file `results_path`. Throws InputError naming the holder if
  // another run holds it, and StoreError if the lock file cannot be made or locked (a file
  // system without locks).
  WriterLock(const std::string& results_path, const std::string& command_line);
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  // Removes the lock file, then releases the lock.
  ~WriterLock();

  static std::string lock_path(const std::string& results_path) { return results_path + ".lock"; }

  // Who holds the lock of `results_path` ("" if nobody): for `qsweep status` and `verify`.
  static std::string holder(const std::string& results_path);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace qsweep::store
