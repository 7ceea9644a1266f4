#pragma once
// Plans built directly from Task values, and stand-in task functions (no-op, sleeping, throwing,
// signalling, waiting at a gate the test opens), for testing the runner apart from the numerical
// kernels.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "qsweep/run/engine.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::testing {

// `n` exact tasks on a ring of 4 servers, lambda = 0.1 + id / 1000, estimated cost `cost`, each on
// one rank but those in `ranks` (id -> Task::ranks).
inline sweep::Plan hook_plan(std::size_t n, const std::string& name, double cost = 0.0,
                             const std::map<std::uint64_t, int>& ranks = {}) {
  sweep::Plan plan;
  plan.name = name;
  plan.source = name + ".yaml";
  plan.yaml_text = "name: " + name + "\n";
  plan.yaml_sha256 = "0";
  plan.hash = name + "-" + std::to_string(n);
  for (std::size_t i = 0; i < n; ++i) {
    sweep::Task task;
    task.id = i;
    task.params = sweep::ExactTask{};
    task.system().family.kind = model::FamilyKind::ring;
    task.system().family.N = 4;
    task.system().lambda = 0.1 + static_cast<double>(i) / 1000.0;
    task.cost = cost;
    if (const auto it = ranks.find(i); it != ranks.end()) task.ranks = it->second;
    plan.tasks.push_back(task);
  }
  return plan;
}

// A done outcome whose EQ is 2 lambda: the file shows which task's result landed in which row.
inline sweep::TaskOutcome fake_result(const sweep::Task& task) {
  exact::Result result;
  result.EQ = 2.0 * task.system().lambda;
  result.engine = "hook";
  return sweep::TaskOutcome{TaskStatus::done, "", result, 0.0, {}};
}

// Sleeps `pause`, throws for ids in `failing`, raises `signal` (if not 0) when it runs task
// `signal_at`. Copies everything it needs: an abandoned task may outlive the test's locals.
inline run::TaskFunction hook(std::chrono::microseconds pause, std::set<std::uint64_t> failing = {},
                              int signal = 0, std::uint64_t signal_at = 0) {
  return [=](const sweep::Task& task) {
    if (signal != 0 && task.id == signal_at) kill(getpid(), signal);  // the main thread handles it
    std::this_thread::sleep_for(pause);
    if (failing.count(task.id) > 0) {
      throw std::runtime_error("task " + std::to_string(task.id) + " cannot be computed");
    }
    return fake_result(task);
  };
}

// Where a task waits until the test opens it: the test decides when a task ends, instead of
// hoping that a sleep was long enough. A task gives up after a minute (a broken test must not
// hang), and the gate then stays open for the tasks after it; a test can tell from
// passed_through() whether a run waited for its task.
class Gate {
 public:
  // Called by a task: waits until the gate is open (or a minute has passed).
  void pass() {
    std::unique_lock lock(mutex_);
    entered_ = true;
    changed_.notify_all();
    changed_.wait_for(lock, std::chrono::minutes(1), [&] { return open_; });
    open_ = true;  // if it gave up: later tasks do not wait another minute each
    passed_through_ = true;
  }
  // Waits until a task has reached the gate.
  void wait_entered() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return entered_; });
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  bool entered() {
    std::lock_guard lock(mutex_);
    return entered_;
  }
  // A task that reached the gate has gone on (let go, or gave up waiting).
  bool passed_through() {
    std::lock_guard lock(mutex_);
    return passed_through_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool entered_ = false;
  bool open_ = false;
  bool passed_through_ = false;
};

// Tasks below `signal_at` finish at once; task `signal_at` raises `signal`, and it and every
// later task wait at `gate` before they finish. So the run is certainly inside task `signal_at`
// when the signal comes, and whatever it does next cannot depend on how long a task takes.
inline run::TaskFunction signal_then_gate(int signal, std::uint64_t signal_at,
                                          std::shared_ptr<Gate> gate) {
  return [=](const sweep::Task& task) {
    if (task.id == signal_at) kill(getpid(), signal);  // the main thread handles it
    if (task.id >= signal_at) gate->pass();
    return fake_result(task);
  };
}

}  // namespace qsweep::testing
