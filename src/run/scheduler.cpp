#include "qsweep/run/scheduler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <utility>

#include "qsweep/common/error.hpp"
#include "qsweep/common/printable.hpp"

namespace qsweep::run {
namespace {

// Smaller than any real task's estimate matters; big enough that 1000 zero-cost test tasks
// still make up a measurable amount.
constexpr double kCostFloor = 1e-6;

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto refuse = [&text](const std::string& what) {
    throw InputError(fmt::format("--shard '{}': {}; expected I/K, part I of K (1 <= I <= K <= {})",
                                 printable(text), what, kMaxShards));
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) refuse("no '/'");
  Shard shard;
  const auto number = [&](std::size_t from, std::size_t to, std::uint64_t& out) {
    const char* begin = text.data() + from;
    const char* end = text.data() + to;
    const auto [at, error] = std::from_chars(begin, end, out);
    if (error != std::errc() || at != end || begin == end) refuse("not two whole numbers");
  };
  number(0, slash, shard.index);
  number(slash + 1, text.size(), shard.count);
  if (shard.count < 1 || shard.count > kMaxShards) refuse("K is out of range");
  if (shard.index < 1 || shard.index > shard.count) refuse("I is not in 1..K");
  return shard;
}

std::vector<std::uint32_t> shard_of_tasks(const sweep::Plan& plan, std::uint64_t count) {
  const std::uint64_t tasks = plan.tasks.size();
  std::vector<std::uint64_t> order(tasks);
  for (std::uint64_t id = 0; id < tasks; ++id) order[id] = id;
  std::vector<double> cost(tasks);
  for (std::uint64_t id = 0; id < tasks; ++id) cost[id] = scheduling_cost(plan.tasks.estimate(id));
  std::stable_sort(order.begin(), order.end(),
                   [&cost](std::uint64_t a, std::uint64_t b) { return cost[a] > cost[b]; });
  // The least loaded shard on top, the first of equals.
  using Load = std::pair<double, std::uint32_t>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> loads;
  for (std::uint64_t s = 0; s < count; ++s) loads.emplace(0.0, static_cast<std::uint32_t>(s));
  std::vector<std::uint32_t> shard(tasks);
  for (const std::uint64_t id : order) {
    const auto [load, s] = loads.top();
    loads.pop();
    shard[id] = s;
    loads.emplace(load + cost[id], s);
  }
  return shard;
}

double scheduling_cost(const sweep::TaskEstimate& estimate) {
  return (std::isfinite(estimate.cost) && estimate.cost > 0.0 ? estimate.cost : 0.0) + kCostFloor;
}

double scheduling_memory(const sweep::TaskEstimate& estimate) {
  return std::isfinite(estimate.memory) && estimate.memory > 0.0 ? estimate.memory : 0.0;
}

double scheduling_result_memory(const sweep::TaskEstimate& estimate) {
  return std::isfinite(estimate.result_memory) && estimate.result_memory > 0.0
             ? estimate.result_memory
             : 0.0;
}

Scheduler::Scheduler(const sweep::Plan& plan, const store::CompactSequence& todo,
                     store::CompactSequence attempts)
    : plan_(plan), tasks_(todo.size()), attempts_(std::move(attempts)) {
  // Biggest first, but costs within a factor of two count as equal (estimates are orders of
  // magnitude) and go in task order: a batch of small tasks is then a run of neighbouring rows,
  // written with one HDF5 call per column instead of one per row and column.
  std::map<int, store::CompactSequence> by_class;  // -ilogb(cost): biggest first
  std::uint64_t previous = 0;
  for (std::uint64_t i = 0; i < todo.size(); ++i) {
    const std::uint64_t id = todo[i];
    if (i > 0 && id <= previous) throw std::logic_error("Scheduler: tasks not ascending");
    previous = id;
    const double cost = scheduling_cost(plan_.tasks.estimate(id));
    remaining_cost_ += cost;
    by_class[-std::ilogb(cost)].push_back(id);
  }
  for (auto& [cost_class, ids] : by_class) classes_.push_back(std::move(ids));
}

Batch Scheduler::next(double budget, std::size_t max_tasks, double memory_room) {
  Batch batch;
  double cost = 0.0;
  double memory = 0.0, held_results = 0.0;  // as memory_of, for the batch so far
  while (!empty() && batch.ids.size() < std::max<std::size_t>(max_tasks, 1)) {
    const std::uint64_t id = peek();
    const sweep::TaskEstimate& task = plan_.tasks.estimate(id);
    const double task_cost = scheduling_cost(task);
    if (!batch.ids.empty() && cost + task_cost > budget) break;
    const double with_task = std::max(memory, held_results + scheduling_memory(task));
    if (with_task > memory_room) break;
    memory = with_task;
    held_results += scheduling_result_memory(task);
    cost += task_cost;
    batch.ids.push_back(id);
    batch.attempts.push_back(static_cast<std::int32_t>(attempts_[id]) + 1);
    ++handed_out_;
    if (++next_in_class_ == classes_[class_].size()) {
      ++class_;
      next_in_class_ = 0;
    }
  }
  remaining_cost_ = std::max(0.0, remaining_cost_ - cost);
  if (empty()) remaining_cost_ = 0.0;  // no rounding residue once everything is out
  return batch;
}

double Scheduler::cost_of(const Batch& batch) const {
  double cost = 0.0;
  for (const std::uint64_t id : batch.ids) cost += scheduling_cost(plan_.tasks.estimate(id));
  return cost;
}

double Scheduler::memory_of(const Batch& batch) const {
  double peak = 0.0, held_results = 0.0;
  for (const std::uint64_t id : batch.ids) {
    const sweep::TaskEstimate& task = plan_.tasks.estimate(id);
    peak = std::max(peak, held_results + scheduling_memory(task));
    held_results += scheduling_result_memory(task);
  }
  return peak;
}

double Scheduler::next_memory() const {
  return empty() ? 0.0 : scheduling_memory(plan_.tasks.estimate(peek()));
}

BatchSizer::BatchSizer(double target_seconds, std::size_t max_tasks)
    : target_seconds_(target_seconds), max_tasks_(max_tasks) {}

void BatchSizer::observe(double estimated_cost, double wall_seconds) {
  if (!(estimated_cost > 0.0) || !std::isfinite(wall_seconds)) return;
  observed_cost_ += estimated_cost;
  observed_seconds_ += std::max(wall_seconds, 0.0);
}

double BatchSizer::seconds_per_cost() const {
  if (observed_cost_ <= 0.0 || observed_seconds_ <= 0.0) return 1.0;
  return observed_seconds_ / observed_cost_;
}

double BatchSizer::budget(double remaining_cost, int workers) const {
  const double target = target_seconds_ / seconds_per_cost();
  // At most half of what remains per worker, so that the tail is split over every worker (each
  // has two batches in flight, runner.cpp).
  const double share = remaining_cost / (2.0 * std::max(workers, 1));
  return std::min(target, share);
}

}  // namespace qsweep::run
