#include "qsweep/run/engine.hpp"

#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "qsweep/exact/kept_memory.hpp"
#include "qsweep/run/memory.hpp"

namespace qsweep::run {
namespace {

// A task estimated to need at least this much gives what it freed back to the system before the
// next task starts (the coordinator counts a rank's resident size as its baseline).
constexpr double kReleaseAfterBytes = 64.0 * (1 << 20);

}  // namespace

// State shared by the main thread and the compute thread. Owned by both (shared_ptr), so an
// abandoned compute thread that outlives the Engine still touches valid memory.
struct Engine::Shared {
  std::mutex mutex;
  std::condition_variable work_ready;  // main -> compute: a batch, or quit
  std::condition_variable batch_done;  // compute -> main
  std::vector<sweep::Task> batch;      // the batch being run
  std::vector<FinishedTask> finished;  // outcomes so far, in batch order
  bool has_batch = false;
  bool complete = false;
  bool quit = false;
  bool in_task = false;
  TaskFunction run_task;
  int rank = 0;
  TestHold hold;
};

bool may_reuse_kept_block(sweep::Method method, double estimated_bytes) {
  return method == sweep::Method::exact &&
         estimated_bytes >= static_cast<double>(exact::kept_memory_bytes());
}

sweep::TaskOutcome run_guarded(const TaskFunction& run_task, const sweep::Task& task) {
  const auto start = std::chrono::steady_clock::now();
  sweep::TaskOutcome outcome;
  try {
    outcome = run_task(task);
  } catch (const std::exception& e) {
    outcome = sweep::TaskOutcome{TaskStatus::failed, e.what(), {}, 0.0, {}};
  } catch (...) {
    outcome = sweep::TaskOutcome{TaskStatus::failed, "unknown exception", {}, 0.0, {}};
  }
  if (outcome.status == TaskStatus::pending) {
    outcome = sweep::TaskOutcome{TaskStatus::failed, "task returned no result", {}, 0.0, {}};
  }
  outcome.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

Engine::Engine(TaskFunction run_task, int rank, const TestHold& hold)
    : shared_(std::make_shared<Shared>()) {
  shared_->run_task = std::move(run_task);
  shared_->rank = rank;
  shared_->hold = hold;
  // Signals are for the main thread (it decides what a stop means): block them here, and the
  // compute thread inherits the mask.
  sigset_t block{}, previous{};
  sigemptyset(&block);
  for (const int signal : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&block, signal);
  pthread_sigmask(SIG_BLOCK, &block, &previous);
  thread_ = std::thread([shared = shared_] { compute_loop(shared); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

Engine::~Engine() {
  if (!thread_.joinable()) return;
  bool in_task = false;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->quit = true;
    in_task = shared_->in_task;
  }
  shared_->work_ready.notify_one();
  if (in_task) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void Engine::start(std::vector<sweep::Task> tasks) {
  if (busy_) throw std::logic_error("Engine::start while a batch is running");
  if (!thread_.joinable()) throw std::logic_error("Engine::start after abandon");
  {
    std::lock_guard lock(shared_->mutex);
    shared_->batch = std::move(tasks);
    shared_->finished.clear();
    shared_->complete = false;
    shared_->has_batch = true;
  }
  busy_ = true;
  shared_->work_ready.notify_one();
}

bool Engine::wait(std::chrono::microseconds timeout) {
  std::unique_lock lock(shared_->mutex);
  return shared_->batch_done.wait_for(lock, timeout, [&] { return shared_->complete; });
}

std::vector<FinishedTask> Engine::take() {
  std::lock_guard lock(shared_->mutex);
  if (!busy_ || !shared_->complete) throw std::logic_error("Engine::take before the batch is done");
  busy_ = false;
  shared_->has_batch = false;
  return std::move(shared_->finished);
}

std::vector<FinishedTask> Engine::abandon() {
  std::vector<FinishedTask> finished;
  bool in_task = false;
  {
    std::lock_guard lock(shared_->mutex);
    shared_->quit = true;
    in_task = shared_->in_task;
    finished = std::move(shared_->finished);
    shared_->finished.clear();
  }
  shared_->work_ready.notify_one();
  if (thread_.joinable()) {
    if (in_task) {
      thread_.detach();
      left_task_running_ = true;
    } else {
      thread_.join();
    }
  }
  busy_ = false;
  return finished;
}

void Engine::compute_loop(const std::shared_ptr<Shared>& shared) {
  std::unique_lock lock(shared->mutex);
  for (;;) {
    shared->work_ready.wait(
        lock, [&] { return shared->quit || (shared->has_batch && !shared->complete); });
    if (shared->quit) return;
    for (std::size_t i = 0; i < shared->batch.size(); ++i) {
      if (shared->quit) return;
      const sweep::Task& task = shared->batch[i];
      shared->in_task = true;
      lock.unlock();
      sweep::TaskOutcome outcome;
      try {
        shared->hold.wait_for_release(task.id);  // before the clock starts: not the task's time
        if (!may_reuse_kept_block(task.method(), task.memory)) exact::release_kept_memory();
        outcome = run_guarded(shared->run_task, task);
        if (task.memory >= kReleaseAfterBytes) release_free_memory();
      } catch (const std::exception& e) {
        outcome = sweep::TaskOutcome{TaskStatus::failed, e.what(), {}, 0.0, {}};
      }
      lock.lock();
      shared->in_task = false;
      if (shared->quit) return;  // abandoned meanwhile: the outcome is dropped
      shared->finished.push_back({task.id, std::move(outcome), shared->rank});
    }
    shared->complete = true;
    shared->batch_done.notify_one();
  }
}

}  // namespace qsweep::run
