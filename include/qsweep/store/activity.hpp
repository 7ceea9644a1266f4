#pragma once
// What a run is doing now, for `qsweep status` while it runs: rank 0 keeps "<results>.activity"
// up to date (rewritten whole, atomically, when it changes and at least every
// kActivityRefreshSeconds) and removes it at the end. Per rank: the tasks of the batch it is
// running and since when, and when rank 0 last heard from it (workers send a heartbeat while
// they compute). The file is trusted only while the run holds the writer lock: a killed run
// leaves a stale one, which `status` ignores.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qsweep::store {

inline constexpr double kActivityRefreshSeconds = 5.0;

struct RankActivity {
  int rank = 0;
  double heard = 0.0;                // last message from the rank (Unix seconds)
  double since = 0.0;                // start of the running batch; 0 when idle
  std::vector<std::uint64_t> tasks;  // task ids of the running batch; empty when idle
  friend bool operator==(const RankActivity&, const RankActivity&) = default;
};

struct Activity {
  double written = 0.0;  // Unix seconds
  std::vector<RankActivity> ranks;
  friend bool operator==(const Activity&, const Activity&) = default;
};

std::string activity_path(const std::string& results_path);
// Where it is written before it is renamed to activity_path.
std::string activity_temporary_path(const std::string& results_path);

// Writes the file whole (a new temporary file, never one found there, then rename). Returns ""
// or, if it cannot, why (with the errno text), leaving the old file: the activity is for display
// only and never stops a run.
std::string write_activity(const std::string& results_path, const Activity& activity);
// The activity written last, or nothing (no file, or not one this version reads).
std::optional<Activity> read_activity(const std::string& results_path);
// Removes the file; returns "" or why it could not.
std::string remove_activity(const std::string& results_path);

// Seconds since the Unix epoch, now.
double unix_seconds();

}  // namespace qsweep::store
