#pragma once
// The messages between rank 0 and the other ranks of a run, and what both sides share: the
// reports of batches, non-blocking sends and the back-off of their polling loops. Internal to
// run/ (runner.cpp, coordinator.cpp, worker.cpp).
#include <algorithm>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <utility>
#include <vector>

#include "qsweep/run/mpi.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/run/scheduler.hpp"

namespace qsweep::run {

using std::chrono::microseconds;

inline constexpr microseconds kMinPause{50};          // idle loops back off from here ...
inline constexpr microseconds kMaxPause{5000};        // ... to here (never a busy wait)
inline constexpr std::size_t kFailuresPerReport = 8;  // messages carried back to rank 0
// After a batch whose tasks needed at least this much memory, freed memory is given back to the
// system before the rank's resident size is measured as its baseline.
inline constexpr double kReleaseAfterBytes = 64.0 * (1 << 20);

// rank 0 -> worker: kWork (Batch with seq), kSpan (a task the rank runs with others, once it has
// nothing else to run), kStop (StopMode as int), kFinish (last message).
// worker -> rank 0: kReport (one per batch or span received, in any order), kStopRequest (the
// worker got a signal itself), kHeartbeat (every kHeartbeatSeconds, for `qsweep status`), kFinished
// (the answer to kFinish, its last message: rank 0 reads everything before it, so no message
// is left unreceived).
enum Tag : int {
  kWork = 1,
  kStop = 2,
  kFinish = 3,
  kReport = 4,
  kStopRequest = 5,
  kHeartbeat = 6,
  kFinished = 7,
  kSpan = 8
};
inline constexpr double kHeartbeatSeconds = 5.0;

struct WorkOrder {
  std::uint64_t seq = 0;
  Batch batch;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // clang-format off
    ar & seq & batch;
    // clang-format on
  }
};

// A task for several ranks together (spans.hpp): each member gets the same order; the first
// member leads (writes the task's attempts and row, and reports it).
struct SpanOrder {
  std::uint64_t seq = 0;
  std::uint64_t id = 0;
  std::int32_t attempts = 0;  // this time included
  std::vector<int> members;   // ranks of the run's communicator, the leader first
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // clang-format off
    ar & seq & id & attempts & members;
    // clang-format on
  }
};

// What became of one batch. Tasks not counted in done/failed/unstable were not run (stop).
struct Report {
  std::uint64_t seq = 0;
  std::uint64_t tasks = 0;
  std::uint64_t done = 0, failed = 0, unstable = 0;
  std::uint64_t warned = 0;  // finished with a warning (a simulate interval not to be trusted, ...)
  double wall_seconds = 0.0;
  std::vector<std::pair<std::uint64_t, std::string>> failures;  // (task id, message), the first few
  // The worker's resident bytes after writing the batch, before its next batch started (its
  // baseline for the memory ledger); 0: not measured.
  double resident_bytes = 0.0;

  std::uint64_t finished() const { return done + failed + unstable; }
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // clang-format off
    ar & seq & tasks & done & failed & unstable & warned & wall_seconds & failures & resident_bytes;
    // clang-format on
  }
};

// The report of a batch of `tasks` tasks none of which ran (yet).
Report empty_report(std::uint64_t seq, std::uint64_t tasks);
// The report of a batch that was not run (a stop).
Report not_run(const WorkOrder& order);
// Counts a finished task into its batch's report.
void tally(Report& report, const FinishedTask& task);

// Non-blocking sends whose buffers live until the send completes.
class Outbox {
 public:
  explicit Outbox(const Comm& comm) : comm_(comm) {}
  template <class T>
  void send(int dest, int tag, const T& value) {
    requests_.push_back(comm_.isend(dest, tag, value));
  }
  void poll() {
    requests_.remove_if([](SendRequest& request) { return request.test(); });
  }
  // Only at the end of a run: every message sent is received by protocol, so this is short.
  void wait_all() {
    for (SendRequest& request : requests_) request.wait();
    requests_.clear();
  }

 private:
  const Comm& comm_;
  std::list<SendRequest> requests_;
};

// Backoff for loops that wait for something to happen, up to `longest` (at most kMaxPause).
class Pause {
 public:
  microseconds next(bool something_happened, microseconds longest = kMaxPause) {
    current_ = something_happened ? kMinPause : std::min({current_ * 2, longest, kMaxPause});
    return current_;
  }

 private:
  microseconds current_ = kMinPause;
};

}  // namespace qsweep::run
