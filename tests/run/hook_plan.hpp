#pragma once
// Plans built directly from Task values, and stand-in task functions (no-op, sleeping, throwing,
// signalling), for testing the runner apart from the numerical kernels.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "qsweep/run/engine.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::testing {

// `n` exact tasks on a ring of 4 servers, lambda = 0.1 + id / 1000, estimated cost `cost`.
inline sweep::Plan hook_plan(std::size_t n, const std::string& name, double cost = 0.0) {
  sweep::Plan plan;
  plan.name = name;
  plan.source = name + ".yaml";
  plan.yaml_text = "name: " + name + "\n";
  plan.yaml_sha256 = "0";
  plan.hash = name + "-" + std::to_string(n);
  for (std::size_t i = 0; i < n; ++i) {
    sweep::Task task;
    task.id = i;
    task.method = sweep::Method::exact;
    task.family.kind = model::FamilyKind::ring;
    task.family.N = 4;
    task.lambda = 0.1 + static_cast<double>(i) / 1000.0;
    task.cost = cost;
    plan.tasks.push_back(task);
  }
  return plan;
}

// A done outcome whose EQ is 2 lambda: the file shows which task's result landed in which row.
inline sweep::TaskOutcome fake_result(const sweep::Task& task) {
  exact::Result result;
  result.EQ = 2.0 * task.lambda;
  result.engine = "hook";
  return sweep::TaskOutcome{sweep::TaskStatus::done, "", result, 0.0, {}};
}

// Sleeps `pause`, throws for ids in `failing`, raises `signal` (if not 0) when it runs task
// `signal_at`. Copies everything it needs: an abandoned task may outlive the test's locals.
inline run::TaskFunction hook(std::chrono::microseconds pause, std::set<std::uint64_t> failing = {},
                              int signal = 0, std::uint64_t signal_at = 0,
                              std::chrono::microseconds signal_task_pause = {}) {
  return [=](const sweep::Task& task) {
    if (signal != 0 && task.id == signal_at) {
      kill(getpid(), signal);  // process-directed: the main thread handles it
      std::this_thread::sleep_for(signal_task_pause);
    }
    std::this_thread::sleep_for(pause);
    if (failing.count(task.id) > 0) {
      throw std::runtime_error("task " + std::to_string(task.id) + " cannot be computed");
    }
    return fake_result(task);
  };
}

}  // namespace qsweep::testing
