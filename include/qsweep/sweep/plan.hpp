#pragma once
// A sweep file parsed, validated and expanded into its task list (docs/sweep-format.md).
#include <array>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "qsweep/common/table.hpp"
#include "qsweep/refine/refine.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep {

// Refuse plans bigger than this (a typo in a linspace count must not allocate a week of tasks);
// the sweep file may raise it with the top-level key `max_tasks`, up to kMaxMaxTasks. A block
// counts with the size of its full grid, before combinations that differ only in unused
// parameters are merged. Every rank holds the plan: 44 bytes per task and 8 per linspace value
// (PlanTasks), about 70 bytes per task at the peak of expansion (measured with
// `/usr/bin/time -f %M qsweep plan` on sweeps of 1e5 and 1e6 tasks; docs/sweep-format.md):
// 70 MB per rank by default, 0.7 GB per rank at the upper limit.
inline constexpr std::uint64_t kDefaultMaxTasks = 1'000'000;
inline constexpr std::uint64_t kMaxMaxTasks = 10'000'000;

// The estimates of a task (sweep/cost.hpp), which the plan keeps for every task without making it.
struct TaskEstimate {
  double cost = 0.0;
  // Bytes, to 7 significant digits (float: the plan keeps one per task; an estimate is not
  // known to that precision).
  float memory = 0.0F;
  float result_memory = 0.0F;
  int ranks = 1;  // Task::ranks, for the runner's choice of ranks (run/spans.hpp)
  // The task's kind, an index into PlanTasks::kinds().
  std::uint32_t kind = 0;
};
static_assert(sizeof(TaskEstimate) == 24, "the plan keeps one per task");

// What `qsweep plan` counts tasks by: the method and sweep::category (task.hpp).
struct TaskKind {
  Method method = Method::exact;
  std::string category;
};

namespace detail {
class BlockGrid;
struct BlockInput;
struct PlanState;
void expand_block(const BlockInput& block, PlanState& state);
}  // namespace detail

// A task key's 128 bits (task_key): its first 16 hex digits, then its last 16, as numbers.
using KeyBits = std::array<std::uint64_t, 2>;

// The tasks of a plan, by id. A plan expanded from a sweep keeps each block's grid and, per
// task, its grid point, estimates and ranks, and key (44 bytes); task(id) makes the Task again from
// its block with the code that expanded it, so every rank can hold a plan of 10^7 tasks. A plan
// built by hand (tests, benchmarks) holds its Tasks.
class PlanTasks {
 public:
  std::uint64_t size() const { return estimates_.size(); }
  bool empty() const { return estimates_.empty(); }
  // Task `id`, made on each call (a const value: bind it to a `const Task&`, never a reference
  // into it to a variable that outlives the statement). std::out_of_range past the end.
  const Task at(std::uint64_t id) const;
  const Task operator[](std::uint64_t id) const { return at(id); }
  const Task front() const { return at(0); }
  const Task back() const { return at(size() - 1); }
  Method method(std::uint64_t id) const;
  // task_key(at(id)), kept since expansion (a task's key is a SHA-256 of its canonical text:
  // made once per plan, not again by each reader).
  std::string key(std::uint64_t id) const;
  const KeyBits& key_bits(std::uint64_t id) const { return keys_.at(id); }
  // Without making the task (the scheduler reads these for every task).
  const TaskEstimate& estimate(std::uint64_t id) const { return estimates_.at(id); }
  TaskEstimate& estimate(std::uint64_t id) { return estimates_.at(id); }
  // Every kind of task in the plan, once each (TaskEstimate::kind indexes it).
  const std::vector<TaskKind>& kinds() const { return kinds_; }
  // Appends a task made by hand (in a plan expanded from a sweep: a refining block's new point,
  // sweep::Rounds); its id must be size() (std::logic_error otherwise).
  void push_back(Task task);

  // Every task in id order, each made when reached.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Task;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = const Task;
    Iterator(const PlanTasks* tasks, std::uint64_t id) : tasks_(tasks), id_(id) {}
    const Task operator*() const { return tasks_->at(id_); }
    Iterator& operator++() {
      ++id_;
      return *this;
    }
    bool operator==(const Iterator& other) const { return id_ == other.id_; }

   private:
    const PlanTasks* tasks_;
    std::uint64_t id_;
  };
  // The grid of block `block`, which makes its tasks again (nullptr in a plan built by hand).
  const detail::BlockGrid* block_grid(int block) const;

  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }

 private:
  friend void detail::expand_block(const detail::BlockInput& block, detail::PlanState& state);
  std::vector<std::shared_ptr<const detail::BlockGrid>> grids_;
  std::vector<std::uint64_t> grid_first_;  // id of each grid's first task
  std::vector<std::uint32_t> points_;      // grid point of each task (< max_tasks <= 10^7)
  std::vector<TaskEstimate> estimates_;
  std::vector<KeyBits> keys_;
  std::vector<Task> given_;  // the tasks by hand, after the grids' (points_)
  std::vector<TaskKind> kinds_;
  std::uint32_t kind_of(const Task& task);  // its index in kinds_, added if new
};

// Points of a refined curve, its initial values included, when `refine:` gives no max_points.
inline constexpr std::uint64_t kDefaultRefinePoints = 100;

// A block's `refine:` key (docs/sweep-format.md, "Refinement"): one numeric key of the block
// (the axis) refined for one result column (the quantity), on every curve of the block: each
// combination of the block's other keys is a curve whose first round is the axis' values.
struct Refinement {
  int block = 0;           // 0-based
  std::string where;       // FILE:LINE:COLUMN of the `refine` key
  std::string axis;        // the block key refined: lambda, rho, N, ...
  std::string quantity;    // the result column of the method's group it follows (ET, EQ, ...)
  std::string half_width;  // that column's 95% half-width column (simulate: ET_hw), "" if none
  Method method = Method::exact;  // the block's
  refine::Spec spec;
  std::uint64_t curves = 0;          // combinations of the block's other values
  std::uint64_t initial_points = 0;  // values of the axis: every curve's first round
  // The most tasks the block may grow to: curves x max_points (duplicates aside).
  std::uint64_t most_tasks() const { return curves * spec.max_points; }
};

struct Plan {
  std::string name;         // `name:` of the sweep file
  std::string source;       // path as given (for messages)
  std::string yaml_text;    // the file as given (stored in the results file)
  std::string yaml_sha256;  // hex SHA-256 of yaml_text
  std::string hash;         // hex digest of the expanded task list: resume refuses a mismatch
  std::string output;       // `output:` of the file, "" if absent (-o overrides)
  // Where `output:`'s value is, "FILE:LINE:COLUMN", for messages about that path.
  std::string output_location;
  std::uint64_t seed = 0;
  bool on_unstable_error = false;  // `on_unstable: error`
  // tasks[i].id == i; no two with the same task_key (but with BlockDuplicates::kept)
  PlanTasks tasks;
  // Where each block is, for messages about a whole task: "FILE:LINE:COLUMN" (Task::block
  // indexes it), "qsweep eval" for a plan from flags.
  std::vector<std::string> block_locations;
  // Tasks outside the stability region (known at validation; stored with status unstable).
  std::vector<std::uint64_t> unstable_tasks;
  // Tasks of a block left out because an earlier block has a task of the same key (the plan
  // holds each computation once; `qsweep plan` says how many).
  std::uint64_t duplicates = 0;
  // The blocks that refine (refine:), in block order.
  std::vector<Refinement> refinements;
};

// A point of a refining block's curve (docs/sweep-format.md, "Refinement").
struct RefinedPoint {
  double x = 0.0;                // the value of the refined axis
  Task task;                     // the task there, with its cost and memory estimates (id 0)
  int round = 0;                 // the round that added it; 0: an initial value
  std::uint64_t grid_point = 0;  // the block's grid point of the curve's values of its other keys
};

// The curves of plan.refinements[r] (std::out_of_range past them): each combination of its
// block's other values, with its initial points in ascending x; curves of the same tasks (keys
// their tasks do not use) are listed once, the first.
std::vector<std::vector<RefinedPoint>> refinement_curves(const Plan& plan, std::size_t r);

// The point at axis value `x` of the curve `on_curve` is on, added by round `round`: the task
// the block would make with x among the axis' values (drafted, derived and costed alike).
RefinedPoint refined_point(const Plan& plan, std::size_t r, const RefinedPoint& on_curve, double x,
                           int round);

// The point (x, quantity, its half-width) of a finished row of the refinement's method group
// (make_row's, or the file's); NaN quantity if the row holds none.
refine::Point curve_point(const Refinement& refinement, double x, const Row& row);

// The largest sweep file read: yaml-cpp holds about 250 bytes per byte of a dense list while
// parsing, so a file at this limit may take a GB before it is refused.
inline constexpr std::uint64_t kMaxSweepFileBytes = std::uint64_t{4} << 20;

// The text of a sweep file, for every command that reads one. Regular files and named pipes
// are read (a pipe to at most kMaxSweepFileBytes); directories, devices (/dev/zero) and sockets
// are refused, as is a regular file larger than kMaxSweepFileBytes, without reading it. Throws
// InputError "PATH: what is wrong; expected ...".
std::string read_sweep_text(const std::string& path);

// Why `path` cannot name a results file ("" if it can): it is empty, contains a NUL byte or
// another control character, ends in '/' or names "." or "..". Only the text is checked; the
// runner checks the file system (a directory, a writable parent).
std::string output_path_problem(std::string_view path);

// Thrown by parse_plan when `stopped` says so (a stop signal while `qsweep run` plans).
class PlanStopped : public std::runtime_error {
 public:
  PlanStopped() : std::runtime_error("planning stopped") {}
};

// Reads, validates and expands a sweep file. Throws InputError with a one-line message
// "FILE:LINE:COLUMN: what is wrong; what was expected" for any bad input. Touches no other file.
// `stopped`, if given, is asked before each task is made: true ends planning with PlanStopped.
// A task whose key an earlier block has: left out (a plan holds each computation once), or kept
// as plans were before tasks had keys (format version 2 files: their rows are those of the plan
// then, so the plan of such a file's stored sweep keeps them to verify and read it).
enum class BlockDuplicates { left_out, kept };
Plan load_plan(const std::string& path);
// The processes that plan one sweep together (the ranks of `qsweep run`): each makes the tasks of
// its share of every block's points and they exchange them, so that each takes 1/size of the
// time; all end with the same plan and the same errors. Every member must call parse_plan with
// the same text.
struct PlanTeam {
  int rank = 0;
  int size = 1;
  // On entry `data` holds this member's part (bytes[rank] bytes after the parts of the members
  // before it); on return it holds every member's part. A collective call.
  std::function<void(char* data, const std::vector<std::uint64_t>& bytes)> gather_parts;
  // Every member's `mine`, in member order (through gather_parts; a collective call).
  std::vector<std::string> all_gather(const std::string& mine) const;
};
Plan parse_plan(const std::string& yaml_text, const std::string& source_name,
                const std::function<bool()>& stopped = {},
                BlockDuplicates duplicates = BlockDuplicates::left_out,
                const PlanTeam* team = nullptr);

// `qsweep eval`: a one-task plan from command-line flags, with the keys and the validation of a
// sweep block. Each flag's text is read as YAML ("8", "[1, 2, 3]", "[{servers: [1, 2], p: 1}]");
// `method` (default exact) and `seed` are accepted too. Messages name the flag ("--lambda: ...").
struct Flag {
  std::string key;  // without the dashes
  std::string text;
};
Plan plan_from_flags(const std::vector<Flag>& flags);

// Hex SHA-256 of the line "qsweep-plan-v2" and then, task by task in order, its id, block and
// the two words of its key (task_key, which covers its method, all parameters and seed, not the
// cost estimate) as four little-endian 64-bit integers: equal plans, and only those, have equal
// hashes. Plans from a sweep
// compute it as they expand (Plan::hash).
std::string plan_hash(const std::vector<Task>& tasks);
std::string plan_hash(const PlanTasks& tasks);
// The hash of `plan` as qsweep computed it before 2026-12-08, from every task's canonical text
// (results files made then store it): slower, made only to recognise such a file.
std::string legacy_plan_hash(const Plan& plan);
// Whether `stored` (a results file's plan_hash) is the hash of `plan`: plan.hash, or its
// legacy_plan_hash.
bool is_plan_hash(const Plan& plan, const std::string& stored);
// The hash of a plan whose tasks hash to `tasks_hash`: that hash without refinements, else the
// SHA-256 of it and every refine key (criterion, tolerance, budget), so that a results file
// refined to one tolerance is not continued with another.
std::string hash_with_refinements(const std::string& tasks_hash,
                                  const std::vector<Refinement>& refinements);

// A task's key: what makes it the computation it is, wherever it sits in a plan. The first 128
// bits of the SHA-256 of its method's numbers version and its canonical form without the id,
// the block and the cost estimate (the method, every parameter and the study seed), as 32
// lower-case hex digits, stored in /tasks/key. Its random streams are keyed by the same bits
// (stream_key), so inserting, moving or removing other tasks changes none of its numbers; a plan
// holds each key once, and growing a results file on --resume and `qsweep merge` match tasks by
// it (docs/running.md, "Growing a study").
std::string task_key(const Task& task);
// The key's 128 bits as the Philox key of the task's random streams: Rng(key[0], key[1],
// replication); of a simulate task with common_random_numbers, the key of the task with the
// listed keys at their defaults (docs/sim.md, "Common random numbers").
std::array<std::uint64_t, 2> stream_key(const Task& task);

// The sweep of a merged results file: the top-level keys of `first` (not `output:`, which names
// one results file; `max_tasks` raised to hold both), its blocks, then the blocks of `second`
// whose 0-based indexes are listed, as YAML text after a comment line `# comment`. Both texts
// must parse (InputError otherwise).
std::string joined_sweep_text(const std::string& first, const std::string& second,
                              const std::vector<int>& second_blocks, const std::string& comment);

// The keys of a sweep block (`method` and `zip` aside), each once, with the methods that take it.
struct KeyInfo {
  std::string name;
  std::string methods;  // "exact, simulate"
  std::string help;     // one line
  std::string value;    // what a value is, for --help: INT, NUMBER, BOOL, NAME, LOAD or LIST
};
std::vector<KeyInfo> block_keys();

// The methods a block may name, in Method order, for help texts.
struct MethodInfo {
  Method method = Method::exact;
  std::string description;  // one line
  bool needs_seed = false;  // random: a block of it needs the sweep's seed
};
std::vector<MethodInfo> methods();

// "exact, simulate or ldp".
std::string method_list();

}  // namespace qsweep::sweep
