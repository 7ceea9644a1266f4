#pragma once
// Runs batches of tasks on a compute thread, so that the rank's main thread stays free for MPI,
// HDF5 and signals (only the main thread ever calls MPI or HDF5). A batch can be abandoned
// mid-task: the main thread goes on without waiting for a long task to finish.
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "qsweep/exact/kept_memory.hpp"
#include "qsweep/run/plan_results.hpp"
#include "qsweep/run/test_hold.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::run {

// What runs one task: sweep::execute, or a stand-in in tests and benchmarks. An exception it
// throws becomes a failed task with the exception's message.
using TaskFunction = std::function<sweep::TaskOutcome(const sweep::Task&)>;

class Engine {
 public:
  // `rank` is recorded with every finished task. A task listed in `hold` waits for the test
  // that set the hold before it runs (test_hold.hpp).
  Engine(TaskFunction run_task, int rank, const TestHold& hold = TestHold::from_environment());
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  // Joins the compute thread, or leaves it running detached if it is inside an abandoned task.
  ~Engine();

  // A batch is running (started and not yet taken).
  bool busy() const { return busy_; }
  void start(std::vector<sweep::Task> tasks);
  // Sleeps until the running batch is complete or `timeout` has passed; true if complete.
  bool wait(std::chrono::microseconds timeout);
  // The outcomes of a complete batch (in the batch's order); the engine is then idle.
  std::vector<FinishedTask> take();
  // Stops the running batch: returns the outcomes finished so far and leaves the task in
  // progress (if any) to end in the background, its outcome dropped. The engine cannot be used
  // afterwards.
  std::vector<FinishedTask> abandon();
  // A task was still running when the batch was abandoned (the process should end with _Exit
  // rather than run static destructors under it).
  bool left_task_running() const { return left_task_running_; }

 private:
  struct Shared;
  static void compute_loop(const std::shared_ptr<Shared>& shared);
  // The exact general engine's block stays mapped between tasks while the Engine lives, so that
  // only a worker's first task pays its page faults (docs/running.md, "Memory").
  exact::KeptMemory kept_memory_;
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
  bool busy_ = false;
  bool left_task_running_ = false;
};

// The block the exact engine kept from a rank's previous task (Engine::kept_memory_) counts in the
// memory of the task that reuses it: only an exact task estimated at least as large may; before
// any other task starts, and before a rank reports a batch without such a task next, the block
// is released (exact::release_kept_memory).
bool may_reuse_kept_block(sweep::Method method, double estimated_bytes);

// Runs `run_task` on `task`, timing it and turning an exception into a failed outcome.
sweep::TaskOutcome run_guarded(const TaskFunction& run_task, const sweep::Task& task);

}  // namespace qsweep::run
