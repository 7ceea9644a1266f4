#include "coordinator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <optional>
#include <stdexcept>
#include <thread>

#include "protocol.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/scheduler.hpp"
#include "qsweep/store/activity.hpp"
#include "qsweep/sweep/cost.hpp"

namespace qsweep::run {
namespace {

constexpr double kBatchSeconds = 0.05;        // aim of one batch's measured run time
constexpr std::size_t kMaxBatchTasks = 1024;  // rows per HDF5 write call (docs/running.md)
constexpr std::size_t kBatchesInFlight = 2;   // per worker: one running, one waiting
constexpr std::size_t kFailuresPrinted = 20;  // printed by rank 0, then only counted
constexpr double kTerminalRefreshSeconds = 0.5;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
  if (spans.empty()) return spanning;
  store::CompactSequence rest;
  for (std::uint64_t i = 0; i < start.todo.size(); ++i) {
    const std::uint64_t id = start.todo[i];
    if (!spans.contains(id)) {
      rest.push_back(id);
      continue;
    }
    spanning.push_back({id, static_cast<std::int32_t>(start.attempts[id]),
                        scheduling_cost(plan.tasks.estimate(id))});
  }
  start.todo = std::move(rest);
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
        scheduler_(plan, start.todo, std::move(start.attempts)),
        ledger_(std::move(nodes)),
        sizer_(kBatchSeconds, kMaxBatchTasks),
        counts_(start.counts),
        cost_todo_(scheduler_.remaining_cost() + spanning_cost()),
        outbox_(comm),
        progress_(stderr, options.progress_in_place,
                  options.progress_in_place ? kTerminalRefreshSeconds : options.progress_seconds,
                  cost_todo_, Progress::Clock::now(), options.progress_early_lines,
                  options.round >= 0 ? fmt::format("round {}: ", options.round) : "") {
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

}  // namespace

RunResult coordinate(const Comm& comm, const sweep::Plan& plan, const std::string& path,
                     const RunOptions& options, StartState start, Workbench* local,
                     const SignalWatch& signals, NodeMap nodes) {
  Coordinator coordinator(comm, plan, path, options, std::move(start), local, signals,
                          std::move(nodes));
  RunResult result;
  result.exit_code = coordinator.run();
  result.counts = coordinator.counts();
  result.work_seconds = coordinator.work_seconds();
  return result;
}

}  // namespace qsweep::run
