#pragma once
// Private to the sweep layer: one block of a sweep (from a file or from `qsweep eval` flags)
// expanded into validated tasks.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "keys.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/sha256.hpp"
#include "qsweep/sweep/task.hpp"
#include "yaml_input.hpp"

namespace qsweep::sweep::detail {

// NOLINTNEXTLINE(bugprone-exception-escape): yaml-cpp's Node assignment is not noexcept.
struct Entry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
  Locator loc;
};

struct BlockInput {
  std::string where;  // location of the block for messages about a whole task
  int index = 0;      // 0-based
  Method method = Method::exact;
  std::vector<Entry> entries;  // every key but method and zip, in order
  std::optional<Entry> zip;
  std::optional<Entry> refine;
  bool from_flags = false;  // keys are flags: "--eps" rather than "key 'eps'"; one task only
};

// The lists of all tasks together (speeds, types, tree edges, ...) may take at most this much:
// every rank holds the plan.
inline constexpr std::uint64_t kMaxPlanListBytes = std::uint64_t{1} << 30;

// The canonical text of what `task` computes: without its id, block and cost estimate (as
// duplicate removal and task_key read it).
std::string content_text(Task task);

// The key of a task whose content text is `text` (task_key's bits).
KeyBits key_bits(const Task& task, std::string_view text);

// The index of `kind` in `kinds`, appended if new.
std::uint32_t kind_index(std::vector<TaskKind>& kinds, const TaskKind& kind);

// The plan hash (plan_hash in plan.hpp), task by task.
class PlanHasher {
 public:
  PlanHasher();
  // Task `task` of key `key`; the hash covers its id and block too.
  void add(const Task& task, const KeyBits& key) { add(task.id, task.block, key); }
  void add(std::uint64_t id, int block, const KeyBits& key);
  std::string hex_digest() { return sha_.hex_digest(); }

 private:
  Sha256 sha_;
};

class SeenTasks;

struct PlanState {
  std::uint64_t seed = 0;
  bool on_unstable_error = false;
  std::uint64_t max_tasks = 0;
  std::uint64_t planned = 0;  // the tasks of every block's full grid (<= max_tasks)
  PlanTasks tasks;
  PlanHasher hash;
  std::vector<std::uint64_t> unstable_tasks;
  // The content of every task so far (of the block, with BlockDuplicates::kept), by task id: a
  // plan holds each computation once.
  std::shared_ptr<SeenTasks> seen;
  std::vector<Refinement> refinements;  // Plan::refinements
  std::uint64_t duplicates = 0;         // Plan::duplicates
  BlockDuplicates block_duplicates = BlockDuplicates::left_out;
  std::uint64_t list_bytes = 0;    // of the tasks so far, see kMaxPlanListBytes
  std::function<bool()> stopped;   // empty: never
  const PlanTeam* team = nullptr;  // none: this process makes every task
};

// Appends the block's tasks (ids continuing the plan) or throws a located InputError.
void expand_block(const BlockInput& block, PlanState& state);

// A block's keys with their values, kept by the plan once the block is expanded: the task at a
// point of the grid is made again from them (drafted and derived as at expansion).
class BlockGrid {
 public:
  // Checks the keys, sizes the grid (it must fit in the `room` tasks max_tasks leaves) and parses
  // the values; a located InputError for any bad input.
  BlockGrid(const BlockInput& block, const PlanState& state, std::uint64_t room);
  std::uint64_t points() const { return points_; }
  // The task at `point` (0 <= point < points(); the last dimension varies fastest), without
  // its id and estimates. `used` (at expansion) marks the axes applied to it.
  // `refined` (refining blocks): the value of the refined axis instead of the point's.
  Task task(std::uint64_t point, std::vector<bool>* used = nullptr,
            const Value* refined = nullptr) const;
  const std::vector<Axis>& axes() const { return axes_; }
  const std::string& where() const { return where_; }
  bool from_flags() const { return from_flags_; }
  Method method() const { return method_; }
  // Where the value of `key` at `point` was given; the block if the block does not give it.
  const std::string& where_of(std::string_view key, std::uint64_t point) const;
  // The block's refine key, if it has one.
  const std::optional<Refinement>& refinement() const { return refinement_; }
  // With refinement(): the index in axes() of the key it refines.
  std::size_t refine_axis() const { return refine_axis_; }
  // With refinement(): the refined axis' value at `point` as a number, the value of the axis
  // at number x, and the point of the curve of `point` (its refined axis at its first value).
  double refined_x(std::uint64_t point) const;
  Value refined_value(double x) const;
  std::uint64_t curve_of(std::uint64_t point) const;
  bool on_unstable_error() const { return on_unstable_error_; }

 private:
  std::optional<Refinement> refinement_;
  std::size_t refine_axis_ = 0;  // the refined axis, with refinement_
  std::size_t value_index(std::size_t axis, std::uint64_t point) const;
  std::string where_;
  int index_ = 0;
  Method method_ = Method::exact;
  std::uint64_t seed_ = 0;
  bool on_unstable_error_ = false;
  bool from_flags_ = false;
  std::vector<Axis> axes_;
  std::vector<std::uint64_t> stride_;            // per axis: points between its consecutive values
  std::vector<const KeySpec*> absent_required_;  // required keys the block does not give
  std::uint64_t points_ = 0;
};

// The number of points of the block's full grid, which must fit in the `room` tasks that
// max_tasks leaves (else a located InputError); reads only the keys and the lengths of their
// values, so a whole sweep is sized before any block is expanded.
std::uint64_t block_grid_size(const BlockInput& block, std::uint64_t room, std::uint64_t max_tasks);

}  // namespace qsweep::sweep::detail
