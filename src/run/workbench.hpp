#pragma once
// The work side of a rank: runs the batches rank 0 gives it on its engine's compute thread and
// writes their rows, one batch after the other. Rank 0 has one too unless it only coordinates.
// Internal to run/.
#include <deque>
#include <optional>
#include <thread>
#include <vector>

#include "protocol.hpp"
#include "qsweep/exact/kept_memory.hpp"
#include "qsweep/run/engine.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

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
      if (stopped_ || queue_.empty() || !next_may_reuse_kept_block()) exact::release_kept_memory();
      // Before the next batch starts: what this rank holds without a task.
      double largest = 0.0;
      for (const std::uint64_t id : running_.batch.ids)
        largest = std::max(largest, double{plan_.tasks.estimate(id).memory});
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

}  // namespace qsweep::run
