#include "qsweep/run/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <list>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_set>

#include "qsweep/common/exit_codes.hpp"
#include "qsweep/common/printable.hpp"
#include "qsweep/exact/lattice_array.hpp"
#include "qsweep/run/combine.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/run/scheduler.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/run/spans.hpp"
#include "qsweep/store/activity.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/verify.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/select.hpp"

namespace qsweep::run {
namespace {

using std::chrono::microseconds;

// --- tuning -----------------------------------------------------------------------------------
constexpr double kBatchSeconds = 0.05;         // aim of one batch's measured run time
constexpr std::size_t kMaxBatchTasks = 1024;   // rows per HDF5 write call (docs/running.md)
constexpr std::size_t kBatchesInFlight = 2;    // per worker: one running, one waiting
constexpr microseconds kMinPause{50};          // idle loops back off from here ...
constexpr microseconds kMaxPause{5000};        // ... to here (never a busy wait)
constexpr std::size_t kFailuresPerReport = 8;  // messages carried back to rank 0
constexpr std::size_t kFailuresPrinted = 20;   // printed by rank 0, then only counted
constexpr double kTerminalRefreshSeconds = 0.5;
// After a batch whose tasks needed at least this much memory, freed memory is given back to the
// system before the rank's resident size is measured as its baseline.
constexpr double kReleaseAfterBytes = 64.0 * (1 << 20);

// --- protocol ---------------------------------------------------------------------------------
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
constexpr double kHeartbeatSeconds = 5.0;

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

Report empty_report(std::uint64_t seq, std::uint64_t tasks) {
  Report report;
  report.seq = seq;
  report.tasks = tasks;
  return report;
}

Report not_run(const WorkOrder& order) { return empty_report(order.seq, order.batch.ids.size()); }

// Counts a finished task into its batch's report.
void tally(Report& report, const FinishedTask& task) {
  report.wall_seconds += task.outcome.wall_seconds;
  if (!task.outcome.warning.empty()) ++report.warned;
  switch (task.outcome.status) {
    case TaskStatus::done:
      ++report.done;
      break;
    case TaskStatus::unstable:
      ++report.unstable;
      break;
    case TaskStatus::failed:
      ++report.failed;
      if (report.failures.size() < kFailuresPerReport) {
        report.failures.emplace_back(task.id,
                                     store::fit_text(task.outcome.error, sweep::kErrorWidth - 1));
      }
      break;
    case TaskStatus::pending:
      break;
  }
}

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

// --- agreement on input errors ----------------------------------------------------------------

// Runs `check` on rank 0. An InputError it throws is rethrown on every rank, the same message.
template <class Check>
void agree_on_rank0(const Comm& comm, Check&& check) {
  std::string error;
  if (comm.rank() == 0) {
    try {
      check();
    } catch (const InputError& e) {
      error = e.what();
      if (error.empty()) error = "bad input";
    }
  }
  comm.broadcast(error, 0);
  if (!error.empty()) throw AgreedInputError(error);
}

// --- the work side of a rank ------------------------------------------------------------------

// Runs the batches given to this rank on its engine and writes their rows.
class Workbench {
 public:
  Workbench(const sweep::Plan& plan, store::ResultsFile& file, const TaskFunction& run_task,
            int rank)
      : plan_(plan), file_(file), engine_(run_task, rank) {}

  void add(WorkOrder order) {
    queue_.push_back(std::move(order));
    start_next();
  }

  // When the running batch is complete: writes its rows and returns its report, then starts the
  // next batch.
  std::optional<Report> poll() {
    std::optional<Report> report;
    if (engine_.busy() && engine_.wait(microseconds(0))) {
      {
        std::vector<FinishedTask> finished = engine_.take();
        report = write(finished);
      }
      // The report returns the batch's memory to the ledger: the exact engine's kept block must
      // not outlive it unless the next batch starts with a task that takes it over.
      if (stopped_ || queue_.empty() || !next_may_reuse_kept_block()) exact::release_kept_block();
      // Before the next batch starts: what this rank holds without a task.
      double largest = 0.0;
      for (const std::uint64_t id : running_.batch.ids)
        largest = std::max(largest, plan_.tasks.estimate(id).memory);
      if (largest >= kReleaseAfterBytes) release_free_memory();
      report->resident_bytes = resident_bytes();
    }
    start_next();
    return report;
  }

  // Sleeps up to `timeout`, waking early when the running batch completes.
  void wait(microseconds timeout) {
    if (engine_.busy()) {
      engine_.wait(timeout);
    } else {
      std::this_thread::sleep_for(timeout);
    }
  }

  // Waiting batches are reported as not run; with StopMode::now the running batch is abandoned
  // too (what it finished is written, the rest stays pending).
  std::vector<Report> stop(StopMode mode) {
    stopped_ = true;
    std::vector<Report> reports;
    if (mode == StopMode::now && engine_.busy()) {
      std::vector<FinishedTask> finished = engine_.abandon();
      reports.push_back(write(finished));
    }
    for (const WorkOrder& order : queue_) reports.push_back(not_run(order));
    queue_.clear();
    return reports;
  }

  bool idle() const { return !engine_.busy() && queue_.empty(); }

  bool next_may_reuse_kept_block() const {
    const std::uint64_t first = queue_.front().batch.ids.front();
    return may_reuse_kept_block(plan_.tasks.method(first), plan_.tasks.estimate(first).memory);
  }
  bool left_task_running() const { return engine_.left_task_running(); }

 private:
  void start_next() {
    if (stopped_ || engine_.busy() || queue_.empty()) return;
    running_ = std::move(queue_.front());
    queue_.pop_front();
    // Attempts first: a kill from here on shows these tasks as handed out and not finished.
    file_.write_attempts(running_.batch.ids, running_.batch.attempts);
    std::vector<sweep::Task> tasks;
    tasks.reserve(running_.batch.ids.size());
    for (const std::uint64_t id : running_.batch.ids) tasks.push_back(plan_.tasks.at(id));
    engine_.start(std::move(tasks));
  }

  Report write(std::vector<FinishedTask>& finished) {
    write_finished(file_, plan_, finished);
    Report report = empty_report(running_.seq, running_.batch.ids.size());
    for (const FinishedTask& task : finished) tally(report, task);
    return report;
  }

  const sweep::Plan& plan_;
  store::ResultsFile& file_;
  Engine engine_;
  std::deque<WorkOrder> queue_;
  WorkOrder running_;
  bool stopped_ = false;
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

// --- rank 0 -----------------------------------------------------------------------------------

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct StartState {
  std::vector<std::uint64_t> todo;
  std::vector<std::int32_t> attempts;   // per task
  ProgressCounts counts;                // before this run
  std::map<std::uint64_t, Span> spans;  // the tasks that run on several ranks (spans.hpp)
};

// A task that spans ranks, waiting for them.
struct WaitingSpan {
  std::uint64_t id = 0;
  std::int32_t attempts = 0;  // before this run's
  double cost = 0.0;
};

// Takes the tasks that span ranks (`spans`) out of `start.todo`, biggest estimated cost first.
std::deque<WaitingSpan> take_spanning(const sweep::Plan& plan,
                                      const std::map<std::uint64_t, Span>& spans,
                                      StartState& start) {
  std::deque<WaitingSpan> spanning;
  std::erase_if(start.todo, [&](std::uint64_t id) {
    if (!spans.contains(id)) return false;
    spanning.push_back({id, start.attempts.at(id), scheduling_cost(plan.tasks.estimate(id))});
    return true;
  });
  std::stable_sort(spanning.begin(), spanning.end(),
                   [](const WaitingSpan& a, const WaitingSpan& b) { return a.cost > b.cost; });
  return spanning;
}

class Coordinator {
 public:
  Coordinator(const Comm& comm, const sweep::Plan& plan, const std::string& path,
              const RunOptions& options, StartState start, Workbench* local,
              const SignalWatch& signals, NodeMap nodes)
      : comm_(comm),
        plan_(plan),
        path_(path),
        options_(options),
        signals_(signals),
        local_(local),
        spans_(std::move(start.spans)),
        spanning_(take_spanning(plan, spans_, start)),  // after spans_
        scheduler_(plan, std::move(start.todo), std::move(start.attempts)),
        ledger_(std::move(nodes)),
        sizer_(kBatchSeconds, kMaxBatchTasks),
        counts_(start.counts),
        cost_todo_(scheduler_.remaining_cost() + spanning_cost()),
        outbox_(comm),
        progress_(stderr, options.progress_in_place,
                  options.progress_in_place ? kTerminalRefreshSeconds : options.progress_seconds,
                  cost_todo_, Progress::Clock::now(), options.progress_early_lines) {
    const double now = store::unix_seconds();
    if (local_ != nullptr) slots_.push_back(Slot{0, {}, now, 0.0});
    for (int rank = 1; rank < comm.size(); ++rank) slots_.push_back(Slot{rank, {}, now, 0.0});
  }
  Coordinator(const Coordinator&) = delete;
  Coordinator& operator=(const Coordinator&) = delete;
  ~Coordinator() {
    if (const std::string error = store::remove_activity(path_); !error.empty())
      std::fprintf(stderr, "qsweep: warning: %s; remove it by hand\n", error.c_str());
  }

  // Runs until every task is finished or a stop is complete; returns the exit code.
  int run() {
    const auto start = std::chrono::steady_clock::now();
    Pause pause;
    for (;;) {
      bool event = false;
      while (const std::optional<Envelope> envelope = comm_.iprobe()) {
        event = true;
        receive(*envelope);
      }
      if (local_ != nullptr) {
        if (std::optional<Report> report = local_->poll()) {
          on_report(slot_of(0), *report);
          event = true;
        }
      }
      if (signals_.requested() > mode_) request_stop(signals_.requested());
      if (mode_ == StopMode::none) event = dispatch() || event;
      if (all_answered() && (mode_ != StopMode::none || (scheduler_.empty() && spanning_.empty())))
        break;
      outbox_.poll();
      if (options_.progress_seconds >= 0) {
        progress_.update(counts_, finished_this_run_, cost_done_ + running_credit_now(),
                         Progress::Clock::now());
      }
      write_activity(event);
      const microseconds wait = pause.next(event, longest_pause());
      if (local_ != nullptr) {
        local_->wait(wait);
      } else {
        std::this_thread::sleep_for(wait);
      }
    }
    for (const Slot& slot : slots_) {
      if (slot.rank != 0) outbox_.send(slot.rank, kFinish, 0);
    }
    for (int left = comm_.size() - 1; left > 0;) {
      const std::optional<Envelope> envelope = comm_.iprobe();
      if (!envelope) {
        std::this_thread::sleep_for(pause.next(false));
        continue;
      }
      if (envelope->tag == kReport)
        throw std::logic_error("a report after the end from rank " +
                               std::to_string(envelope->source));
      comm_.recv<int>(*envelope);  // kFinished, or a heartbeat or stop request before it
      if (envelope->tag == kFinished) --left;
    }
    outbox_.wait_all();
    work_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return finish();
  }

 private:
  struct HandedOut {
    std::uint64_t seq;
    double cost;  // estimated (of a span: on its leader; 0 on the others)
    std::vector<std::uint64_t> ids;
    bool span = false;  // a task that spans ranks
  };
  struct Slot {
    int rank;
    std::vector<HandedOut> outstanding;  // in the order the rank runs them
    double heard;                        // last message from the rank (Unix seconds)
    double since;                        // when the first outstanding batch started (about)
    bool reserved = false;               // held for the next task that spans ranks
    bool spanning = false;               // running a task with other ranks
    // Seconds between the rank's reports while it had a batch waiting (0 until measured) and
    // when the last report came (steady clock seconds).
    double report_period = 0.0;
    double last_report = 0.0;
  };

  // A rank whose batches are short would run out of work while rank 0 sleeps a whole back-off
  // (its waiting batch ends before the report of the running one is read): rank 0 sleeps at
  // most a quarter of the shortest period between reports of a busy rank.
  microseconds longest_pause() const {
    double shortest = 0.0;
    for (const Slot& slot : slots_) {
      if (slot.outstanding.empty() || slot.report_period <= 0.0) continue;
      if (shortest == 0.0 || slot.report_period < shortest) shortest = slot.report_period;
    }
    if (shortest == 0.0) return kMaxPause;
    return std::clamp(
        std::chrono::duration_cast<microseconds>(std::chrono::duration<double>(shortest / 4.0)),
        kMinPause, kMaxPause);
  }

  double spanning_cost() const {
    double cost = 0.0;
    for (const WaitingSpan& waiting : spanning_) cost += waiting.cost;
    return cost;
  }

  Slot& slot_of(int rank) {
    for (Slot& slot : slots_) {
      if (slot.rank == rank) return slot;
    }
    throw std::logic_error("message from a rank that is not a worker: " + std::to_string(rank));
  }

  bool all_answered() const {
    return std::all_of(slots_.begin(), slots_.end(),
                       [](const Slot& slot) { return slot.outstanding.empty(); });
  }

  // The cost of the running batches to count as done for the ETA (progress.hpp).
  double running_credit_now() const {
    if (!sizer_.calibrated()) return 0.0;
    const double now = store::unix_seconds();
    double credit = 0.0;
    for (const Slot& slot : slots_) {
      if (slot.outstanding.empty()) continue;
      credit += running_credit(slot.outstanding.front().cost, now - slot.since,
                               sizer_.seconds_per_cost());
    }
    return credit;
  }

  // "<results>.activity" for `qsweep status`: when something changed (at most once a second)
  // and at least every kActivityRefreshSeconds.
  void write_activity(bool changed) {
    const double now = store::unix_seconds();
    const double age = now - activity_written_;
    if (age < (changed || activity_stale_ ? 1.0 : store::kActivityRefreshSeconds)) {
      activity_stale_ = activity_stale_ || changed;
      return;
    }
    store::Activity activity;
    activity.written = now;
    for (Slot& slot : slots_) {
      if (slot.rank == 0) slot.heard = now;
      store::RankActivity& rank = activity.ranks.emplace_back();
      rank.rank = slot.rank;
      rank.heard = slot.heard;
      if (!slot.outstanding.empty()) {
        rank.since = slot.since;
        rank.tasks = slot.outstanding.front().ids;
      }
    }
    // Said once: `qsweep status` then shows no activity, the run goes on.
    if (const std::string error = store::write_activity(path_, activity);
        !error.empty() && !activity_warned_) {
      std::fprintf(stderr, "qsweep: warning: %s; qsweep status will not show what the ranks do\n",
                   error.c_str());
      activity_warned_ = true;
    }
    activity_written_ = now;
    activity_stale_ = false;
  }

  void receive(const Envelope& envelope) {
    const int source = envelope.source;
    slot_of(source).heard = store::unix_seconds();
    switch (envelope.tag) {
      case kReport:
        on_report(slot_of(source), comm_.recv<Report>(envelope));
        break;
      case kHeartbeat:
        comm_.recv<int>(envelope);
        break;
      case kStopRequest:
        request_stop(static_cast<StopMode>(comm_.recv<int>(envelope)));
        break;
      default:
        throw std::logic_error("unexpected message tag " + std::to_string(envelope.tag) +
                               " from rank " + std::to_string(source));
    }
  }

  bool dispatch() {
    bool sent = start_span();
    std::optional<MemoryWait> refused;
    const int workers = static_cast<int>(slots_.size());
    for (Slot& slot : slots_) {
      if (slot.reserved || slot.spanning) continue;
      while (slot.outstanding.size() < kBatchesInFlight && !scheduler_.empty()) {
        // The next batch must fit beside what the rank's node holds (memory.hpp).
        const double head = scheduler_.next_memory();
        const double room = ledger_.room_for(slot.rank, head);
        Batch batch = scheduler_.next(sizer_.budget(scheduler_.remaining_cost(), workers),
                                      sizer_.max_tasks(), room);
        if (batch.ids.empty()) {
          refused = {slot.rank, head, room};
          break;
        }
        WorkOrder order{next_seq_++, std::move(batch)};
        if (slot.outstanding.empty()) slot.since = store::unix_seconds();
        slot.outstanding.push_back({order.seq, scheduler_.cost_of(order.batch), order.batch.ids});
        ledger_.hand_out(slot.rank, order.seq, scheduler_.memory_of(order.batch));
        if (slot.rank == 0) {
          local_->add(std::move(order));
        } else {
          outbox_.send(slot.rank, kWork, order);
        }
        sent = true;
      }
    }
    if (refused && !sent) report_memory_wait(*refused);
    return sent;
  }

  // Holds ranks for the next task that spans ranks and starts it once they have run what they
  // had and their nodes have room for it; ordinary batches go on around it on the other ranks.
  bool start_span() {
    if (spanning_.empty()) return false;
    const WaitingSpan& next = spanning_.front();
    const Span& span = spans_.at(next.id);
    if (!reserve(span.ranks)) return false;
    std::vector<Slot*> group;
    for (Slot& slot : slots_) {
      if (!slot.reserved) continue;
      if (!slot.outstanding.empty()) return false;
      group.push_back(&slot);
    }
    const std::uint64_t seq = next_seq_;
    for (std::size_t charged = 0; charged < group.size(); ++charged) {
      const int rank = group[charged]->rank;
      const double room = ledger_.room_for(rank, span.memory);
      if (room < span.memory) {
        for (std::size_t i = 0; i < charged; ++i) ledger_.returned(group[i]->rank, seq);
        report_memory_wait({rank, span.memory, room});
        return false;
      }
      ledger_.hand_out(rank, seq, span.memory);
    }
    SpanOrder order{next_seq_++, next.id, next.attempts + 1, {}};
    for (const Slot* slot : group) order.members.push_back(slot->rank);
    const double now = store::unix_seconds();
    for (Slot* slot : group) {
      const bool leads = slot->rank == order.members.front();
      slot->outstanding.push_back({order.seq, leads ? next.cost : 0.0, {next.id}, true});
      slot->since = now;
      slot->reserved = false;
      slot->spanning = true;
      outbox_.send(slot->rank, kSpan, order);
    }
    spanning_.pop_front();
    return true;
  }

  // Marks `ranks` ranks for the next task that spans ranks (once; they keep the mark until it
  // starts): ranks of one node where one has enough, else the least busy of the nodes with most.
  // Rank 0 never takes part: it coordinates. False while too few ranks are free of other spans.
  bool reserve(int ranks) {
    const auto wanted = static_cast<std::size_t>(ranks);
    if (std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.reserved; }) > 0)
      return true;
    std::map<int, std::vector<Slot*>> free_by_node;
    std::size_t free = 0;
    for (Slot& slot : slots_) {
      if (slot.rank == 0 || slot.spanning) continue;
      free_by_node[ledger_.node_of(slot.rank)].push_back(&slot);
      ++free;
    }
    if (free < wanted) return false;
    const auto busy = [](const Slot* a, const Slot* b) {
      return a->outstanding.size() < b->outstanding.size();
    };
    std::vector<std::vector<Slot*>> nodes;
    for (auto& [node, node_slots] : free_by_node) {
      std::stable_sort(node_slots.begin(), node_slots.end(), busy);
      nodes.push_back(node_slots);
    }
    // One node that has enough: the one whose `wanted` least busy ranks have least outstanding.
    const auto load = [&](const std::vector<Slot*>& node) {
      std::size_t batches = 0;
      for (std::size_t i = 0; i < wanted; ++i) batches += node[i]->outstanding.size();
      return batches;
    };
    std::vector<Slot*>* chosen = nullptr;
    for (auto& node : nodes) {
      if (node.size() >= wanted && (chosen == nullptr || load(node) < load(*chosen)))
        chosen = &node;
    }
    std::vector<Slot*> group;
    if (chosen != nullptr) {
      group.assign(chosen->begin(), chosen->begin() + static_cast<std::ptrdiff_t>(wanted));
    } else {
      std::stable_sort(nodes.begin(), nodes.end(),
                       [](const auto& a, const auto& b) { return a.size() > b.size(); });
      for (const auto& node : nodes)
        for (Slot* slot : node)
          if (group.size() < wanted) group.push_back(slot);
    }
    for (Slot* slot : group) slot->reserved = true;
    return true;
  }

  void on_report(Slot& slot, const Report& report) {
    const auto it = std::find_if(slot.outstanding.begin(), slot.outstanding.end(),
                                 [&](const auto& entry) { return entry.seq == report.seq; });
    if (it == slot.outstanding.end()) {
      throw std::logic_error("report for an unknown batch from rank " + std::to_string(slot.rank));
    }
    const double cost = it->cost;
    const bool span = it->span;
    const double now = steady_seconds();
    if (slot.outstanding.size() > 1 && slot.last_report > 0.0) {  // busy since its last report
      const double period = now - slot.last_report;
      slot.report_period =
          slot.report_period > 0.0 ? 0.75 * slot.report_period + 0.25 * period : period;
    }
    slot.last_report = now;
    if (it == slot.outstanding.begin()) slot.since = store::unix_seconds();  // the next starts
    slot.outstanding.erase(it);
    if (span) slot.spanning = false;
    ledger_.returned(slot.rank, report.seq);
    if (report.resident_bytes > 0.0) ledger_.set_baseline(slot.rank, report.resident_bytes);
    if (local_ == nullptr) ledger_.set_baseline(0, resident_bytes());  // coordinating only
    // A span's time on several ranks says nothing about a batch on one.
    if (report.finished() == report.tasks && report.tasks > 0 && !span) {
      sizer_.observe(cost, report.wall_seconds);
    }
    if (report.tasks > 0) {
      cost_done_ +=
          cost * static_cast<double>(report.finished()) / static_cast<double>(report.tasks);
    }
    counts_.done += report.done;
    counts_.failed += report.failed;
    counts_.unstable += report.unstable;
    counts_.warned += report.warned;
    finished_this_run_ += report.finished();
    for (const auto& [id, message] : report.failures) {
      if (failures_printed_ < kFailuresPrinted) {
        progress_.message("qsweep: task " + std::to_string(id) + " (" +
                          std::string(qsweep::name_of(plan_.tasks.method(id))) + ", rank " +
                          std::to_string(slot.rank) + ") failed: " + message);
      } else if (failures_printed_ == kFailuresPrinted) {
        progress_.message("qsweep: further failures are not printed; see `qsweep status`");
      }
      ++failures_printed_;
    }
  }

  struct MemoryWait {
    int rank;
    double needed, room;
  };

  // Once per run: says why ranks idle while tasks remain.
  void report_memory_wait(const MemoryWait& waiting) {
    if (memory_wait_reported_) return;
    memory_wait_reported_ = true;
    const int rank = waiting.rank;
    const double needed = waiting.needed, room = waiting.room;
    const int node = ledger_.node_of(rank);
    progress_.message(fmt::format(
        "qsweep: the next task needs an estimated {} and node {} ({}) has {} of its {} free: "
        "ranks there idle until running tasks end (docs/running.md, \"Memory\")",
        sweep::memory_text(needed), node, ledger_.nodes().ranks_text(node),
        sweep::memory_text(std::max(room, 0.0)), sweep::memory_text(ledger_.budget_of(rank))));
  }

  void request_stop(StopMode mode) {
    if (mode <= mode_) return;
    mode_ = mode;
    progress_.message(mode == StopMode::drain
                          ? "qsweep: stop requested: no new tasks, letting running tasks finish"
                          : "qsweep: stop requested: abandoning running tasks (they stay pending)");
    for (const Slot& slot : slots_) {
      if (slot.rank != 0) outbox_.send(slot.rank, kStop, static_cast<int>(mode));
    }
    if (local_ != nullptr) {
      for (const Report& report : local_->stop(mode)) on_report(slot_of(0), report);
    }
  }

  int finish() {
    if (options_.progress_seconds >= 0) {
      progress_.finish(counts_, finished_this_run_, cost_done_, Progress::Clock::now());
    }
    const std::uint64_t pending = counts_.total - counts_.finished();
    if (pending > 0) {
      progress_.message("qsweep: stopped with " + std::to_string(pending) +
                        " tasks pending; continue with --resume");
      return exit_code::incomplete;
    }
    if (counts_.warned > 0) {
      progress_.message("qsweep: " + std::to_string(counts_.warned) +
                        " tasks of this run finished with a warning (a simulate row's flags say "
                        "which interval not to trust); `qsweep status` lists them");
    }
    if (counts_.failed > 0) {
      progress_.message("qsweep: " + std::to_string(counts_.failed) +
                        " tasks failed; `qsweep status` lists them, --resume runs them again");
      return exit_code::tasks_failed;
    }
    return exit_code::ok;
  }

 public:
  const ProgressCounts& counts() const { return counts_; }
  double work_seconds() const { return work_seconds_; }

 private:
  const Comm& comm_;
  const sweep::Plan& plan_;
  const std::string& path_;
  const RunOptions& options_;
  const SignalWatch& signals_;
  Workbench* local_;
  const std::map<std::uint64_t, Span> spans_;
  std::deque<WaitingSpan> spanning_;  // the tasks that span ranks, not started yet, in order
  Scheduler scheduler_;
  MemoryLedger ledger_;
  bool memory_wait_reported_ = false;
  BatchSizer sizer_;
  ProgressCounts counts_;
  double cost_todo_;
  double cost_done_ = 0.0;
  double work_seconds_ = 0.0;
  std::uint64_t finished_this_run_ = 0;
  std::size_t failures_printed_ = 0;
  std::uint64_t next_seq_ = 0;
  StopMode mode_ = StopMode::none;
  std::vector<Slot> slots_;
  double activity_written_ = 0.0;
  bool activity_stale_ = false;   // changed since it was written
  bool activity_warned_ = false;  // that it cannot be written
  Outbox outbox_;
  Progress progress_;
};

// --- ranks > 0 --------------------------------------------------------------------------------

// What a member of a task that spans ranks needs besides its order.
struct SpanContext {
  const sweep::Plan& plan;
  store::ResultsFile& file;
  const SpanningTaskFunction& run_spanning;
};

// MPI_Comm_create_group tells concurrent creations apart by tag (at least this many exist).
constexpr std::uint64_t kGroupTags = 32768;

// This rank's part of a task that spans ranks, on the main thread (the members call MPI
// together; rank 0 sends it only to ranks with nothing else to run). Collective over the members:
// all of them run it or, when one of them is stopping, none does (the task stays pending).
// `stop_now` keeps the rank answering while the task runs and abandons it (pending) once it
// returns true on any member.
Report run_span(const Comm& comm, const SpanOrder& order, bool stopping, const SpanContext& with,
                const exact_mpi::StopCheck& stop_now) {
  const Comm group = comm.create_group(order.members, static_cast<int>(order.seq % kGroupTags));
  const bool leads = comm.rank() == order.members.front();
  Report report = empty_report(order.seq, leads ? 1 : 0);
  if (group.any(stopping)) return report;
  const sweep::Task& task = with.plan.tasks.at(order.id);
  if (leads) {
    const std::uint64_t id = order.id;
    const std::int32_t attempts = order.attempts;
    with.file.write_attempts({&id, 1}, {&attempts, 1});
    TestHold::from_environment().wait_for_release(order.id);
  }
  bool stopped = false;
  const auto run = [&](const sweep::Task& t) {
    try {
      return with.run_spanning(t, group, stop_now);
    } catch (const exact_mpi::Stopped&) {
      stopped = true;
      throw;
    }
  };
  std::vector<FinishedTask> finished{{order.id, run_guarded(run, task), comm.rank()}};
  if (stopped) return report;  // not run: the task stays pending
  if (leads) {
    write_finished(with.file, with.plan, finished);
    tally(report, finished.front());
  }
  finished.clear();
  if (with.plan.tasks.estimate(order.id).memory >= kReleaseAfterBytes) release_free_memory();
  report.resident_bytes = resident_bytes();
  return report;
}

void work(const Comm& comm, Workbench& bench, const SignalWatch& signals,
          const SpanContext& spans) {
  Outbox outbox(comm);
  StopMode mode = StopMode::none;
  auto stop = [&](StopMode requested) {
    if (requested <= mode) return;
    mode = requested;
    for (const Report& report : bench.stop(mode)) outbox.send(0, kReport, report);
  };
  auto last_heartbeat = std::chrono::steady_clock::now();
  auto heartbeat = [&] {
    if (const auto now = std::chrono::steady_clock::now();
        now - last_heartbeat >= std::chrono::duration<double>(kHeartbeatSeconds)) {
      outbox.send(0, kHeartbeat, 0);
      last_heartbeat = now;
    }
  };
  auto watch_signals = [&] {
    if (signals.requested() > mode) {
      stop(signals.requested());
      outbox.send(0, kStopRequest, static_cast<int>(mode));
    }
  };
  // While a task that spans ranks runs (rank 0 sends such a rank nothing but kStop meanwhile).
  const exact_mpi::StopCheck stop_now = [&] {
    heartbeat();
    while (const std::optional<Envelope> envelope = comm.iprobe(0, kStop))
      stop(static_cast<StopMode>(comm.recv<int>(*envelope)));
    watch_signals();
    outbox.poll();
    return mode == StopMode::now;
  };
  Pause pause;
  for (bool finished = false; !finished;) {
    bool event = false;
    heartbeat();
    while (const std::optional<Envelope> envelope = comm.iprobe(0)) {
      event = true;
      switch (envelope->tag) {
        case kWork: {
          WorkOrder order = comm.recv<WorkOrder>(*envelope);
          if (mode == StopMode::none) {
            bench.add(std::move(order));
          } else {
            outbox.send(0, kReport, not_run(order));
          }
          break;
        }
        case kSpan: {
          const auto order = comm.recv<SpanOrder>(*envelope);
          if (!bench.idle()) throw std::logic_error("a task that spans ranks sent to a busy rank");
          outbox.send(0, kReport, run_span(comm, order, mode != StopMode::none, spans, stop_now));
          break;
        }
        case kStop:
          stop(static_cast<StopMode>(comm.recv<int>(*envelope)));
          break;
        case kFinish:
          comm.recv<int>(*envelope);
          outbox.send(0, kFinished, 0);
          finished = true;
          break;
        default:
          throw std::logic_error("unexpected message tag " + std::to_string(envelope->tag) +
                                 " from rank 0");
      }
    }
    watch_signals();
    if (std::optional<Report> report = bench.poll()) {
      outbox.send(0, kReport, *report);
      event = true;
    }
    outbox.poll();
    if (!finished) bench.wait(pause.next(event));
  }
  if (!bench.idle()) throw std::logic_error("rank 0 finished the run while this rank had work");
  outbox.wait_all();
}

// --- starting: create or resume -----------------------------------------------------------------

std::string output_path(const sweep::Plan& plan, const RunOptions& options) {
  if (!options.output.empty()) {
    // The sweep file's `output:` was checked where it was read, with its location.
    const std::string problem = sweep::output_path_problem(options.output);
    if (!problem.empty()) throw InputError("-o: the results file path " + problem);
    return options.output;
  }
  if (!plan.output.empty()) return plan.output;
  throw InputError("no results file: give -o FILE or `output:` in " + plan.source);
}

// Rank 0: checks that `path` (the real_results_path of `given`, the name the user gave, which
// messages quote) can be a results file, with the files beside it (before anything is written),
// creating its directory if needed. It must not be the sweep file (the same device and inode:
// also through a symlink or a hard link), which --force would replace. A path from the sweep's
// `output:` is refused with the place of that line.
void check_output_location(const sweep::Plan& plan, const std::string& given,
                           const std::string& path, bool from_sweep) {
  namespace fs = std::filesystem;
  const std::string where = (from_sweep ? plan.output_location + ": output " : "") + given;
  store::check_companions(path);
  std::error_code error;
  if (fs::equivalent(path, plan.source, error)) {
    throw InputError(where + " is the sweep file " + plan.source +
                     "; expected the name of a results file");
  }
  if (fs::is_directory(path, error)) {
    throw InputError(where + " is a directory; expected the name of a results file (e.g. " +
                     (fs::path(given) / "results.h5").string() + ")");
  }
  if (fs::exists(path, error) && !fs::is_regular_file(path, error)) {
    throw InputError(where + " exists and is not a regular file; expected a results file");
  }
  const fs::path parent = fs::path(path).parent_path();
  if (!parent.empty()) {
    fs::create_directories(parent, error);
    if (error) {
      throw InputError(where + ": cannot create its directory " + parent.string() + " (" +
                       error.message() + ")");
    }
  }
  const std::string directory = parent.empty() ? "." : parent.string();
  if (access(directory.c_str(), W_OK | X_OK) != 0) {
    throw InputError(where + ": cannot write into its directory " + directory + " (" +
                     std::strerror(errno) + ")");
  }
}

// Rank 0: the tasks this run may run (--shard, --select), or none for the whole plan; says how
// many on stderr.
std::vector<bool> part_of_plan(const sweep::Plan& plan, const RunOptions& options) {
  if (options.shard.count == 0 && options.select.empty()) return {};
  const sweep::TaskSelection selection(options.select);
  std::vector<std::uint32_t> shards;
  if (options.shard.count > 0) shards = shard_of_tasks(plan, options.shard.count);
  std::vector<bool> chosen(plan.tasks.size(), true);
  std::uint64_t count = 0;
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    if (!shards.empty() && shards[id] != options.shard.index - 1) chosen[id] = false;
    if (chosen[id] && !selection.empty() && !selection.matches(plan.tasks[id])) chosen[id] = false;
    count += chosen[id] ? 1 : 0;
  }
  std::string what;
  if (options.shard.count > 0)
    what = fmt::format("shard {}/{}", options.shard.index, options.shard.count);
  if (!selection.empty())
    what += (what.empty() ? "" : " and ") + fmt::format("--select {}", selection.text());
  if (count == 0)
    throw InputError(
        fmt::format("{}: no task of {} is in it; expected a part with tasks "
                    "(`qsweep plan --tasks` lists them)",
                    what, plan.source));
  std::fprintf(stderr, "qsweep: %s: %llu of the %llu tasks of %s (the others stay as they are)\n",
               what.c_str(), static_cast<unsigned long long>(count),
               static_cast<unsigned long long>(plan.tasks.size()), plan.source.c_str());
  return chosen;
}

// Rank 0: what to run, from an existing file (resume, after verifying every row) or from
// scratch; only the tasks `chosen` (all if empty) are counted and run.
StartState read_start(const sweep::Plan& plan, const store::Layout& layout, const std::string& path,
                      bool create, const std::vector<bool>& chosen) {
  StartState start;
  const auto in_part = [&chosen](std::uint64_t id) { return chosen.empty() || chosen[id]; };
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) start.counts.total += in_part(id);
  start.attempts.assign(plan.tasks.size(), 0);
  if (create) {
    start.todo.reserve(start.counts.total);
    for (std::uint64_t id = 0; id < plan.tasks.size(); ++id)
      if (in_part(id)) start.todo.push_back(id);
    return start;
  }
  const store::ResultsReader reader(path);
  const std::string file_hash = reader.attribute("plan_hash");
  if (file_hash != plan.hash) {
    throw InputError(path + " holds the results of a different plan (plan hash " +
                     file_hash.substr(0, 12) + ", " + plan.source + " expands to " +
                     plan.hash.substr(0, 12) +
                     "); use --force to start it again or -o for another file");
  }
  const store::Verification verified = verify_results(path, plan, layout);
  start.attempts = reader.attempts();
  if (start.attempts.size() != plan.tasks.size()) {
    throw InputError(path + " has " + std::to_string(start.attempts.size()) + " tasks, the plan " +
                     std::to_string(plan.tasks.size()));
  }
  if (!verified.damaged.empty()) {
    std::string first;
    for (const std::string& what : verified.damage) first += "\n  " + what;
    std::fprintf(
        stderr, "qsweep: %s: %zu of %llu rows failed verification; running them again:%s%s\n",
        path.c_str(), verified.damaged.size(), static_cast<unsigned long long>(plan.tasks.size()),
        first.c_str(), verified.damaged.size() > verified.damage.size() ? "\n  ..." : "");
  }
  if (verified.interrupted > 0) {
    std::fprintf(stderr,
                 "qsweep: %s: %llu rows were being written when a run was killed; "
                 "running them again\n",
                 path.c_str(), static_cast<unsigned long long>(verified.interrupted));
  }
  // Done and unstable are results; pending, failed, interrupted and damaged tasks run (again).
  for (std::uint64_t id = 0; id < verified.statuses.size(); ++id) {
    if (!in_part(id)) continue;
    switch (verified.statuses[id]) {
      case TaskStatus::done:
        ++start.counts.done;
        break;
      case TaskStatus::unstable:
        ++start.counts.unstable;
        break;
      default:
        start.todo.push_back(id);
        break;
    }
  }
  return start;
}

// Rank 0, on --resume: the sweep's name is part of a study's identity (merge joins only files of
// one name), so a renamed sweep does not continue a file that keeps the old name.
void check_same_study(const sweep::Plan& plan, const std::string& path) {
  const std::string name = store::ResultsReader(path).attribute("sweep_name");
  if (name == plan.name) return;
  throw InputError(fmt::format(
      "{} holds the study '{}', {} names it '{}': a study keeps its name (qsweep merge joins "
      "only files of one name); put back `name: {}` to continue it, or use --force to start it "
      "again or -o for another file",
      path, printable(name), plan.source, printable(plan.name), printable(name)));
}

// Rank 0: the results files of --reuse, each verified (combine.hpp). None may be `path`, the
// file this run writes.
std::vector<ResultsSource> open_reused(const std::vector<std::string>& files,
                                       const std::string& path) {
  std::vector<ResultsSource> reused;
  reused.reserve(files.size());
  for (const std::string& file : files) {
    std::error_code error;
    if (std::filesystem::equivalent(file, path, error))
      throw InputError("--reuse " + file +
                       " is the results file of this run; --resume continues it");
    reused.push_back(open_reuse_source(file));
  }
  return reused;
}

// Rank 0: says how many rows each file of --reuse gave (write_combined's counts after the first
// `own` sources, those of this study), and why when a file shares no task with `plan`.
void report_reused(const sweep::Plan& plan, const std::vector<ResultsSource>& reused,
                   const std::vector<std::uint64_t>& copied, std::size_t own) {
  std::unordered_set<std::string> keys;
  for (const sweep::Task& task : plan.tasks) keys.insert(sweep::task_key(task));
  for (std::size_t r = 0; r < reused.size(); ++r) {
    const ResultsSource& source = reused[r];
    const bool shares = std::any_of(
        source.plan.tasks.begin(), source.plan.tasks.end(), [&](const sweep::Task& task) {
          const TaskStatus status = source.verified.statuses.at(task.id);
          return (status == TaskStatus::done || status == TaskStatus::unstable) &&
                 keys.contains(sweep::task_key(task));
        });
    std::fprintf(stderr, "qsweep: %llu finished rows reused from %s%s\n",
                 static_cast<unsigned long long>(copied.at(own + r)), source.path.c_str(),
                 shares ? ""
                        : " (none of its finished tasks has a key of this plan: keys include "
                          "the seed and every parameter)");
  }
}

// Rank 0, on a new file with --reuse: writes the file of `plan` at `path` with the finished rows
// of `reused` copied to the tasks of the same key. False when a stop-now signal ended the copy:
// nothing was written. `lock` is the writer lock of `path`.
bool create_reusing(const sweep::Plan& plan, const std::string& path, const RunOptions& options,
                    int ranks, const SignalWatch& signals, store::WriterLock& lock,
                    const std::vector<ResultsSource>& reused) {
  std::vector<const ResultsSource*> sources;
  for (const ResultsSource& source : reused) sources.push_back(&source);
  std::vector<std::uint64_t> copied;
  try {
    copied =
        write_combined(path, plan, sources, store::Provenance::now(options.command_line, ranks),
                       lock, [&] { return signals.requested() == StopMode::now; });
  } catch (const CombineStopped&) {
    std::fprintf(stderr,
                 "qsweep: stopped by a signal while copying rows of --reuse: %s was not "
                 "written\n",
                 path.c_str());
    return false;
  }
  report_reused(plan, reused, copied, 0);
  return true;
}

// Rank 0, on --resume: when the file at `path` holds another plan, is of an earlier format
// version or rows of `reused` are to be copied into it, replaces it by the file of `plan` with
// its finished rows (and those of `reused` for the tasks it has not finished) copied to the tasks
// of the same key (combine.hpp), so that only the new tasks (and those not finished) run.
// InputError when a finished task of the file is not in `plan`, or the file's rows cannot be
// matched. False when a stop-now signal ended the growth: `path` is as it was. `lock` is its
// writer lock.
bool grow_results(const sweep::Plan& plan, const std::string& path, const RunOptions& options,
                  int ranks, const SignalWatch& signals, store::WriterLock& lock,
                  const std::vector<ResultsSource>& reused) {
  const store::ResultsReader reader(path);
  const std::string file_hash = reader.attribute("plan_hash");
  const std::string version = reader.attribute("format_version");
  const bool current = version == std::to_string(store::kFormatVersion);
  const bool same_file = file_hash == plan.hash && current;
  if (same_file && reused.empty()) return true;
  const std::string different =
      same_file ? path + " cannot take rows of --reuse"
      : file_hash == plan.hash
          ? path + " is of format version " + version + " (this qsweep writes " +
                std::to_string(store::kFormatVersion) + ") and cannot grow"
          : path + " holds the results of a different plan (plan hash " + file_hash.substr(0, 12) +
                ", " + plan.source + " expands to " + plan.hash.substr(0, 12) + ")";
  ResultsSource source;
  try {
    source = open_source(path);
    check_numbers_kept(source);
  } catch (const InputError& e) {
    throw InputError(different + (same_file || !current ? ": " : " and cannot grow: ") + e.what() +
                     (current ? "; use --force to start it again or -o for another file" : ""));
  }
  try {
    check_kept(plan, plan.source, source);
  } catch (const InputError& e) {
    throw InputError(different + ": " + e.what());
  }
  if (!source.verified.damaged.empty()) {
    std::fprintf(stderr, "qsweep: %s: %zu rows failed verification and are not kept\n",
                 path.c_str(), source.verified.damaged.size());
  }
  std::vector<const ResultsSource*> sources{&source};
  for (const ResultsSource& other : reused) sources.push_back(&other);
  std::vector<std::uint64_t> copied;
  try {
    copied =
        write_combined(path, plan, sources, store::Provenance::now(options.command_line, ranks),
                       lock, [&] { return signals.requested() == StopMode::now; });
  } catch (const CombineStopped&) {
    std::fprintf(stderr,
                 "qsweep: stopped by a signal while growing %s: it is as it was; run again with "
                 "--resume to grow it\n",
                 path.c_str());
    return false;
  }
  const std::uint64_t kept = copied.front();
  report_reused(plan, reused, copied, 1);
  if (same_file) {
    std::fprintf(stderr,
                 "qsweep: %s rewritten with the rows of --reuse (%llu finished rows kept)\n",
                 path.c_str(), static_cast<unsigned long long>(kept));
  } else if (file_hash == plan.hash || (!current && source.plan.yaml_text == plan.yaml_text)) {
    // The same sweep, of another plan hash: a version 2 file has a row for each task its sweep
    // repeats in a later block, which the plan now holds once (sweep::BlockDuplicates).
    const std::size_t joined = source.plan.tasks.size() > plan.tasks.size()
                                   ? source.plan.tasks.size() - plan.tasks.size()
                                   : 0;
    std::fprintf(
        stderr,
        "qsweep: %s rewritten from format version %s to %d (%llu finished rows kept%s); "
        "running the others\n",
        path.c_str(), version.c_str(), store::kFormatVersion, static_cast<unsigned long long>(kept),
        joined == 0
            ? ""
            : fmt::format(", {} rows of tasks an earlier block has left out", joined).c_str());
  } else {
    std::fprintf(stderr,
                 "qsweep: %s grown from %zu to %zu tasks of %s (%llu finished rows kept); "
                 "running the others\n",
                 path.c_str(), source.plan.tasks.size(), plan.tasks.size(), plan.source.c_str(),
                 static_cast<unsigned long long>(kept));
  }
  return true;
}

// --- memory -------------------------------------------------------------------------------------

// What a rank tells rank 0 about its node and itself.
struct RankMemory {
  int node_leader = 0;      // rank of the first rank on the same node
  double node_bytes = 0.0;  // 0: could not be found out (node_source says why)
  std::string node_source;
  double resident_bytes = 0.0;
  bool address_limited = false;  // address_space_limit() of the rank, when it has one
  MachineMemory address_limit;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // clang-format off
    ar & node_leader & node_bytes & node_source & resident_bytes & address_limited &
        address_limit.bytes & address_limit.source;
    // clang-format on
  }
};

// Collective: which ranks share a node, each node's budget and each rank's resident size now
// (the plan parsed: most of a rank's baseline). The map is on rank 0 (empty elsewhere).
NodeMap map_nodes(const Comm& comm, const RunOptions& options) {
  RankMemory mine;
  {
    const Comm node = comm.split_shared();
    mine.node_leader = comm.rank();
    node.broadcast(mine.node_leader, 0);
  }
  if (options.node_memory > 0.0) {
    mine.node_bytes = options.node_memory;
    mine.node_source = "--node-memory";
  } else {
    try {
      const MachineMemory machine = machine_memory();
      mine.node_bytes = machine.bytes;
      mine.node_source = machine.source;
    } catch (const Error& e) {
      mine.node_source = e.what();
    }
  }
  mine.resident_bytes = resident_bytes();
  if (const std::optional<MachineMemory> limit = address_space_limit()) {
    mine.address_limited = true;
    mine.address_limit = *limit;
  }
  const std::vector<RankMemory> ranks = comm.gather(mine, 0);
  NodeMap nodes;
  std::map<int, int> node_of_leader;
  for (const RankMemory& rank : ranks) {
    const auto [it, added] = node_of_leader.emplace(rank.node_leader, nodes.nodes());
    if (added) {
      // The first rank of a node speaks for it (every rank of a node sees the same memory).
      const RankMemory& leader = ranks.at(static_cast<std::size_t>(rank.node_leader));
      nodes.budget.push_back(leader.node_bytes);
      nodes.source.push_back(leader.node_source);
    }
    nodes.node_of_rank.push_back(it->second);
    nodes.baseline.push_back(rank.resident_bytes);
    nodes.address_limit.push_back(rank.address_limited ? std::optional(rank.address_limit)
                                                       : std::nullopt);
  }
  return nodes;
}

// Rank 0: refuses a plan with a task that cannot fit: over --max-task-memory (by default a
// rank's share of its node), or bigger than every node that has a computing rank, with its ranks'
// baselines.
// Returns the ranks of the tasks that span ranks (spans.hpp), each rank's share checked likewise.
std::map<std::uint64_t, Span> check_memory(const sweep::Plan& plan, const NodeMap& nodes,
                                           const RunOptions& options, bool rank0_computes) {
  std::vector<bool> computes(static_cast<std::size_t>(nodes.nodes()), false);
  for (std::size_t rank = 0; rank < nodes.node_of_rank.size(); ++rank)
    if (rank != 0 || rank0_computes)
      computes[static_cast<std::size_t>(nodes.node_of_rank[rank])] = true;
  for (int node = 0; node < nodes.nodes(); ++node) {
    if (!(nodes.budget[static_cast<std::size_t>(node)] > 0.0))
      throw InputError(fmt::format("node {} ({}): {}", node, nodes.ranks_text(node),
                                   nodes.source[static_cast<std::size_t>(node)]));
  }
  sweep::MemoryLimit per_task;
  per_task.baseline_bytes = *std::max_element(nodes.baseline.begin(), nodes.baseline.end());
  if (options.max_task_memory > 0.0) {
    per_task.bytes = options.max_task_memory;
    per_task.source = "--max-task-memory " + sweep::memory_text(options.max_task_memory);
  } else {
    // A rank's share of the node where it is largest.
    for (int node = 0; node < nodes.nodes(); ++node) {
      if (!computes[static_cast<std::size_t>(node)]) continue;
      const double budget = nodes.budget[static_cast<std::size_t>(node)];
      const double share = budget / nodes.ranks_on(node);
      if (share <= per_task.bytes) continue;
      per_task.bytes = share;
      per_task.source = fmt::format(
          "the default --max-task-memory {}: {} of node memory ({}) / {} ranks on the node",
          sweep::memory_text(share), sweep::memory_text(budget),
          nodes.source[static_cast<std::size_t>(node)], nodes.ranks_on(node));
    }
    // Or a computing rank's address-space limit (ulimit -v) where lower: a task must fit any rank.
    for (std::size_t rank = 0; rank < nodes.address_limit.size(); ++rank) {
      const std::optional<MachineMemory>& limit = nodes.address_limit[rank];
      if (!limit || (rank == 0 && !rank0_computes) || limit->bytes >= per_task.bytes) continue;
      per_task.bytes = limit->bytes;
      per_task.source = fmt::format("the default --max-task-memory {}: rank {}, {}",
                                    sweep::memory_text(limit->bytes), rank, limit->source);
    }
  }
  sweep::check_task_memory(plan, per_task);
  std::map<std::uint64_t, Span> spans =
      choose_spans(plan, per_task, static_cast<int>(nodes.node_of_rank.size()) - 1);
  // Alone on the node that has the most room beside its ranks' baselines.
  sweep::MemoryLimit alone;
  alone.bytes = -1.0;
  for (int node = 0; node < nodes.nodes(); ++node) {
    if (!computes[static_cast<std::size_t>(node)]) continue;
    const double budget = nodes.budget[static_cast<std::size_t>(node)];
    const double room = budget - nodes.baselines_on(node);
    if (room <= alone.bytes) continue;
    alone.bytes = room;
    alone.source = fmt::format(
        "the {} that node {} may hold ({}) less the {} its {} hold "
        "without tasks",
        sweep::memory_text(budget), node, nodes.source[static_cast<std::size_t>(node)],
        sweep::memory_text(nodes.baselines_on(node)), nodes.ranks_text(node));
  }
  sweep::check_task_memory(plan, alone);
  return spans;
}

// Runs the plan's remaining tasks (`start`, on rank 0) into the results file at `path`.
RunResult run_file(const Comm& comm, const sweep::Plan& plan, const store::Layout& layout,
                   const std::string& path, const RunOptions& options, StartState start,
                   NodeMap nodes, const SignalWatch& signals, const TaskFunction& run_task,
                   const SpanningTaskFunction& run_spanning) {
  store::ResultsFile file(path, layout, comm.handle());
  // The ranks' baselines again, with the results file open (HDF5's buffers).
  const std::vector<double> resident = comm.gather(resident_bytes(), 0);
  if (comm.rank() == 0) nodes.baseline = resident;
  RunResult result;
  const bool computes = comm.rank() != 0 || comm.size() == 1 || !options.dedicated_coordinator;
  std::optional<Workbench> bench;
  if (computes) bench.emplace(plan, file, run_task, comm.rank());
  try {
    if (comm.rank() == 0) {
      Coordinator coordinator(comm, plan, path, options, std::move(start),
                              bench ? &*bench : nullptr, signals, std::move(nodes));
      result.exit_code = coordinator.run();
      result.counts = coordinator.counts();
      result.work_seconds = coordinator.work_seconds();
    } else {
      work(comm, *bench, signals, SpanContext{plan, file, run_spanning});
    }
  } catch (const MpiError& e) {
    // The message names the MPI call; add which rank of which communicator.
    throw Error(std::string(e.what()) + " (rank " + std::to_string(comm.rank()) + " of " +
                std::to_string(comm.size()) + ", the run's communicator)");
  }
  result.left_task_running = bench && bench->left_task_running();
  bench.reset();  // joins the compute thread (or leaves an abandoned task behind)
  file.close();
  comm.broadcast(result.exit_code, 0);
  return result;
}

}  // namespace

sweep::Plan distribute_plan(const Comm& comm, const std::string& path) {
  // Rank 0 reads the file and every rank parses the text at the same time: parsing is most of the
  // start-up of a big sweep, and a parsed plan broadcast instead costs half a parse more
  // (serialising and deserialising it; docs/running.md, "Performance").
  std::string text;
  agree_on_rank0(comm, [&] { text = sweep::read_sweep_text(path); });
  comm.broadcast(text, 0);
  // A stop-now signal ends planning (a big sweep plans for seconds): nothing is written.
  const SignalWatch signals;
  sweep::Plan plan;
  std::string error;
  bool stopped = false;
  try {
    plan =
        sweep::parse_plan(text, path, [&signals] { return signals.requested() == StopMode::now; });
  } catch (const sweep::PlanStopped&) {
    stopped = true;
  } catch (const InputError& e) {
    error = e.what();
    if (error.empty()) error = "bad input";
  }
  if (comm.any(stopped)) throw StoppedWhilePlanning();
  // Every rank parsed the same text; rank 0's verdict is the one reported, once.
  std::string rank0_error = error;
  comm.broadcast(rank0_error, 0);
  if (!rank0_error.empty()) throw AgreedInputError(rank0_error);
  if (!error.empty()) {
    throw Error("rank " + std::to_string(comm.rank()) + " could not parse " + path +
                ", which rank 0 parsed: " + error);
  }
  std::string hash = plan.hash;
  comm.broadcast(hash, 0);
  if (hash != plan.hash) {
    throw Error("rank " + std::to_string(comm.rank()) + " expanded " + path +
                " to a different plan than rank 0");
  }
  return plan;
}

RunResult run_plan(const Comm& world, const sweep::Plan& plan, const RunOptions& options,
                   const TaskFunction& run_task, const SpanningTaskFunction& run_spanning) {
  // The run's own communicator (MPI_ERRORS_RETURN): its messages never meet anyone else's.
  const Comm comm = world.duplicate();
  const SignalWatch signals;

  std::string path;
  bool create = true;
  bool stopped = false;  // by a signal while growing the file
  StartState start;
  const store::Layout layout = results_layout(plan);
  NodeMap nodes = map_nodes(comm, options);
  std::map<std::uint64_t, Span> spans;
  // Rank 0 holds the results file's writer lock from before it looks at the file until the run
  // has closed it.
  std::optional<store::WriterLock> lock;
  agree_on_rank0(comm, [&] {
    if (options.resume && options.force)
      throw InputError("--resume and --force exclude each other");
    spans = check_memory(plan, nodes, options, comm.size() == 1 || !options.dedicated_coordinator);
    const std::string given = output_path(plan, options);
    path = store::real_results_path(given);
    check_output_location(plan, given, path, options.output.empty());
    lock.emplace(path, options.command_line);
    remove_leftovers(path);
    const bool exists = std::filesystem::exists(path);
    if (exists && !options.resume && !options.force) {
      throw InputError(path +
                       " already exists: use --resume to continue it or --force to "
                       "replace it");
    }
    create = !exists || options.force;
    if (options.resume && !exists) {
      std::fprintf(stderr, "qsweep: %s does not exist yet: starting it\n", path.c_str());
    }
    const std::vector<ResultsSource> reused = open_reused(options.reuse, path);
    if (!create) {
      check_same_study(plan, path);
      stopped = !grow_results(plan, path, options, comm.size(), signals, *lock, reused);
    } else if (!reused.empty()) {
      stopped = !create_reusing(plan, path, options, comm.size(), signals, *lock, reused);
      create = false;  // made by create_reusing
    }
    if (stopped) return;
    start = read_start(plan, layout, path, create, part_of_plan(plan, options));
    start.spans = std::move(spans);
  });
  comm.broadcast(stopped, 0);
  if (stopped) {
    RunResult result;
    result.exit_code = exit_code::incomplete;
    return result;
  }
  comm.broadcast(path, 0);
  comm.broadcast(create, 0);

  if (create) {
    try {
      create_results_file(path, plan, layout,
                          store::Provenance::now(options.command_line, comm.size()), comm.handle(),
                          lock ? &*lock : nullptr);
    } catch (const store::StoreError& e) {
      throw store::StoreError(e.what() + store::full_disk_note(path));
    }
  }
  const std::uint64_t part = start.counts.total;  // rank 0's
  try {
    RunResult result = run_file(comm, plan, layout, path, options, std::move(start),
                                std::move(nodes), signals, run_task, run_spanning);
    if (comm.rank() == 0 && result.exit_code == exit_code::ok && part < plan.tasks.size()) {
      std::fprintf(stderr,
                   "qsweep: the part is finished; the plan's other %llu tasks are not in it "
                   "(qsweep status shows the file; --resume without --shard or --select runs "
                   "what is left, qsweep merge joins the files of parts)\n",
                   static_cast<unsigned long long>(plan.tasks.size() - part));
    }
    return result;
  } catch (const std::exception& e) {
    // Rows are written whole and sealed last, so the file is consistent whatever failed.
    throw Error(e.what() + store::full_disk_note(path) + " (" + path +
                " is consistent: continue it with --resume once the cause is fixed)");
  }
}

}  // namespace qsweep::run
