#pragma once
// Which tasks go out next: biggest estimated cost first (within a factor of two, task order),
// small tasks batched so that dispatch overhead stays small, batches shrinking towards the end so
// the last tasks spread over all workers.
#include <boost/serialization/split_member.hpp>
#include <boost/serialization/vector.hpp>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "qsweep/store/layout.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

// Tasks handed to one worker in one message.
struct Batch {
  std::vector<std::uint64_t> ids;
  // How many times each task has been handed out, this time included (written to
  // /tasks/attempts before the batch runs).
  std::vector<std::int32_t> attempts;

  friend bool operator==(const Batch&, const Batch&) = default;

  // On the wire as runs of consecutive ids with equal attempts (first id, length, attempts): a
  // batch of small tasks is usually one run, so its message stays a few dozen bytes however many
  // tasks it carries (an eager MPI send).
  template <class Archive>
  void save(Archive& ar, unsigned /*version*/) const {
    std::vector<std::uint64_t> runs;
    for (std::size_t i = 0; i < ids.size();) {
      std::size_t end = i + 1;
      while (end < ids.size() && ids[end] == ids[end - 1] + 1 && attempts[end] == attempts[i])
        ++end;
      runs.insert(runs.end(), {ids[i], end - i, static_cast<std::uint64_t>(attempts[i])});
      i = end;
    }
    ar << runs;
  }
  template <class Archive>
  void load(Archive& ar, unsigned /*version*/) {
    std::vector<std::uint64_t> runs;
    ar >> runs;
    ids.clear();
    attempts.clear();
    for (std::size_t r = 0; r + 2 < runs.size(); r += 3) {
      for (std::uint64_t k = 0; k < runs[r + 1]; ++k) {
        ids.push_back(runs[r] + k);
        attempts.push_back(static_cast<std::int32_t>(runs[r + 2]));
      }
    }
  }
  BOOST_SERIALIZATION_SPLIT_MEMBER()
};

// `qsweep run --shard I/K`: part `index` (1-based) of `count` cost-balanced parts of a plan;
// count 0: the whole plan.
struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 0;
};
inline constexpr std::uint64_t kMaxShards = 1'000'000;
// "I/K" with 1 <= I <= K <= kMaxShards; InputError "--shard 'TEXT': ...; expected I/K ..."
// otherwise.
Shard parse_shard(const std::string& text);
// The shard (0-based) of each task of `plan` among `count`: the tasks by scheduling cost, largest
// first (ties by id), each to the shard with the least cost so far (the first of those), so that
// each shard has about 1/count of the cost. A function of the plan alone: every run of the plan
// (on any number of ranks) makes the same shards.
std::vector<std::uint32_t> shard_of_tasks(const sweep::Plan& plan, std::uint64_t count);

// The plan's cost estimate with a floor, so that tasks estimated at zero still count (a batch of
// them is bounded by the task limit, not unbounded).
double scheduling_cost(const sweep::TaskEstimate& estimate);
// The plan's memory estimates of a task (bytes; 0 if not finite or negative).
double scheduling_memory(const sweep::TaskEstimate& estimate);
double scheduling_result_memory(const sweep::TaskEstimate& estimate);

class Scheduler {
 public:
  // `todo`: the tasks to run, ascending. `attempts`: per task id (all tasks of the plan), how
  // many times it was handed out before. `plan` must outlive the scheduler.
  Scheduler(const sweep::Plan& plan, const store::CompactSequence& todo,
            store::CompactSequence attempts);

  bool empty() const { return remaining_tasks() == 0; }
  std::size_t remaining_tasks() const { return tasks_ - handed_out_; }
  double remaining_cost() const { return remaining_cost_; }

  // The next tasks in order while their total cost stays within `budget`: at least one task
  // (a task bigger than the budget goes alone), at most `max_tasks`, and while their memory
  // (memory_of) stays within `memory_room`. An empty batch if the next task alone needs more
  // memory than that: it waits, and no later task overtakes it.
  Batch next(double budget, std::size_t max_tasks,
             double memory_room = std::numeric_limits<double>::infinity());

  double cost_of(const Batch& batch) const;
  // Peak memory of a batch (bytes, sweep/cost.hpp): its tasks run one after another, each while
  // the results of those before it are held, so the largest of (task's memory + earlier results).
  double memory_of(const Batch& batch) const;
  // The memory of the next task alone (0 if none is left).
  double next_memory() const;

 private:
  // The next task in order (none if empty()).
  std::uint64_t peek() const { return classes_[class_][next_in_class_]; }

  const sweep::Plan& plan_;
  // The tasks by cost class, biggest first (costs within a factor of two form a class), each
  // class in task order: runs of neighbouring ids, a few bytes for a million tiny tasks where a
  // plain order took 8 bytes a task on rank 0.
  std::vector<store::CompactSequence> classes_;
  std::size_t class_ = 0;            // of the next task
  std::uint64_t next_in_class_ = 0;  // index of the next task in classes_[class_]
  std::size_t tasks_ = 0;
  std::size_t handed_out_ = 0;
  double remaining_cost_ = 0.0;
  store::CompactSequence attempts_;  // before this run, per task id: each task goes out once
};

// How much estimated cost one batch should carry. Aims at `target_seconds` of measured time per
// batch (the ratio of measured to estimated time is learnt from finished batches), and near the
// end at most a share of what remains so that every worker still gets some.
class BatchSizer {
 public:
  BatchSizer(double target_seconds, std::size_t max_tasks);

  void observe(double estimated_cost, double wall_seconds);
  double budget(double remaining_cost, int workers) const;
  std::size_t max_tasks() const { return max_tasks_; }
  // Measured seconds per unit of estimated cost (1 until something was measured).
  double seconds_per_cost() const;
  bool calibrated() const { return observed_cost_ > 0.0 && observed_seconds_ > 0.0; }

 private:
  double target_seconds_;
  std::size_t max_tasks_;
  double observed_cost_ = 0.0;
  double observed_seconds_ = 0.0;
};

}  // namespace qsweep::run
