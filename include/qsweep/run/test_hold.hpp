#pragma once
// A testing hook (not a user feature): with QSWEEP_TEST_HOLD=DIR:ID[,ID...] in the environment,
// a compute thread that is about to run one of the listed tasks first announces it and then
// waits for the test to let it go, so a test can interrupt a run at a known moment instead of
// hoping that a sleep was long enough (docs/running.md, "Testing hooks"):
//   1. it opens the named pipe DIR/started for writing and writes "ID\n" (the open waits until
//      the test has the pipe open for reading);
//   2. it opens the named pipe DIR/release for reading and reads it to the end (waits until the
//      test has opened it for writing and closed it again);
//   3. it runs the task.
// A held task that is abandoned (stop now) stays blocked where it is, like any running task.
#include <cstdint>
#include <set>
#include <string>

namespace qsweep::run {

class TestHold {
 public:
  // No hold: every task runs at once.
  TestHold() = default;
  // Parses DIR:ID[,ID...]; an empty text means no hold. Error naming the variable if malformed.
  static TestHold parse(const std::string& text);
  // From QSWEEP_TEST_HOLD, read and parsed once per process (the first call).
  static const TestHold& from_environment();

  bool active() const { return !ids_.empty(); }
  bool holds(std::uint64_t task_id) const { return ids_.count(task_id) > 0; }
  const std::string& directory() const { return directory_; }
  const std::set<std::uint64_t>& ids() const { return ids_; }

  // Steps 1 and 2 above for `task_id` (returns at once if it is not listed). Error if a pipe
  // cannot be opened, written or read.
  void wait_for_release(std::uint64_t task_id) const;

 private:
  std::string directory_;
  std::set<std::uint64_t> ids_;
};

}  // namespace qsweep::run
