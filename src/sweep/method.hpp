#pragma once
// Private to the sweep layer: a method adapter holds everything the sweep layer knows of one
// method (its keys, derivation and checks, cost, execution, results columns and text), in one
// file per method (method_<name>.cpp); the registry (methods.cpp) lists them, and the rest of
// the sweep layer, the store and the CLI loop over it rather than over the methods.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keys.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/cost.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep::sweep::detail {

// ---- results columns ---------------------------------------------------------------------------

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr std::int64_t kNone = -1;

// One column: its spec, how a row's cell is computed, and (vector and ragged columns) the
// length planned for a task.
struct Column {
  ColumnSpec spec;
  std::function<CellValue(const Task&, const TaskOutcome&)> value;
  std::function<std::size_t(const Task&)> length;
  // A result computed from another f64 result of the row (`source`, a column before it):
  // `value` applies `derive` to the source's value, and a row of an older file, which lacks the
  // column, gets it from its stored source cell (sweep::derive_cells), the same bits either way.
  std::string source{};
  std::function<double(const Task&, double)> derive{};
};

// The method's result, only for tasks that ran to the end.
template <class R>
const R* done_result(const TaskOutcome& o) {
  return o.status == TaskStatus::done ? std::get_if<R>(&o.result) : nullptr;
}

// ---- column builders ---------------------------------------------------------------------------

inline Column parameter(std::string name, std::string description, std::string units,
                        ColumnType type, std::function<CellValue(const Task&)> value,
                        std::function<std::size_t(const Task&)> length = {}) {
  return {{std::move(name), std::move(description), std::move(units), type, true},
          [value = std::move(value)](const Task& t, const TaskOutcome&) { return value(t); },
          std::move(length)};
}

template <class R>
Column result_f64(std::string name, std::string description, std::string units, double R::*member) {
  return {{std::move(name), std::move(description), std::move(units), ColumnType::f64},
          [member](const Task&, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            return r ? r->*member : kNaN;
          },
          {}};
}

// A result of the row made from another: `derive(task, source value)`, NaN where the source is.
template <class R>
Column derived_f64(std::string name, std::string description, std::string units, std::string source,
                   double R::*member, std::function<double(const Task&, double)> derive) {
  return {{std::move(name), std::move(description), std::move(units), ColumnType::f64},
          [member, derive](const Task& t, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            return derive(t, r ? r->*member : kNaN);
          },
          {},
          std::move(source),
          std::move(derive)};
}

template <class R, class Int>
Column result_i64(std::string name, std::string description, Int R::*member) {
  return {{std::move(name), std::move(description), "", ColumnType::i64},
          [member](const Task&, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            return r ? static_cast<std::int64_t>(r->*member) : kNone;
          },
          {}};
}

template <class R>
Column result_vector(std::string name, std::string description, std::string units, ColumnType type,
                     std::vector<double> R::*member,
                     std::function<std::size_t(const Task&)> length) {
  return {{std::move(name), std::move(description), std::move(units), type},
          [member, length](const Task& t, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            if (!r || length(t) == 0) return std::vector<double>{};
            return r->*member;
          },
          std::move(length)};
}

// An integer vector result (server sets as int64 bitmasks: bit 63 wraps to negative).
template <class R, class Int>
Column result_ints(std::string name, std::string description, std::vector<Int> R::*member,
                   std::function<std::size_t(const Task&)> length) {
  return {{std::move(name), std::move(description), "", ColumnType::i64_ragged},
          [member, length](const Task& t, const TaskOutcome& o) -> CellValue {
            const R* r = done_result<R>(o);
            if (!r || length(t) == 0) return std::vector<std::int64_t>{};
            const auto& values = r->*member;
            return std::vector<std::int64_t>(values.begin(), values.end());
          },
          std::move(length)};
}

// The columns every method with per-type results starts them with: the types and their means.
template <class R>
void add_type_columns(std::vector<Column>& c,
                      const std::function<std::size_t(const Task&)>& types) {
  c.push_back(result_ints<R>("type_servers",
                             "job type S as a bitmask (bit n: server n + 1), enumerate() order",
                             &R::type_servers, types));
  c.push_back(result_vector<R>("type_p", "probability p_S of the type", "", ColumnType::f64_ragged,
                               &R::type_p, types));
  c.push_back(result_vector<R>("EQ_type", "mean number of type-S jobs E[Q_S]", "jobs",
                               ColumnType::f64_ragged, &R::EQ_type, types));
}

// The column every group starts with.
inline Column task_id_column() {
  return parameter("task_id", "row of this task in /tasks", "", ColumnType::i64,
                   [](const Task& t) { return static_cast<std::int64_t>(t.id); });
}

// ---- expansion ---------------------------------------------------------------------------------

// What a method keeps across the tasks of one block (the systems it built).
struct BlockMemo {
  virtual ~BlockMemo() = default;
};

// The block being expanded, as a method's derivation and checks see it.
class BlockContext {
 public:
  // The block, for messages about a whole task.
  virtual const std::string& where() const = 0;
  // Where the current task's value of `key` was given; the block if the block does not give it.
  virtual const std::string& where_of(std::string_view key) const = 0;
  virtual bool gives(std::string_view key) const = 0;
  virtual bool on_unstable_error() const = 0;
  std::unique_ptr<BlockMemo> memo;  // the method's, created on first use

 protected:
  ~BlockContext() = default;
};

// A message from the model or a method's own validation, located; the sweep format promises
// "what is wrong; what was expected", so a message without the second part gets `expected`.
[[noreturn]] void fail_from(const std::string& where, const InputError& error,
                            std::string_view expected);

// ---- the adapter -------------------------------------------------------------------------------

struct MethodAdapter {
  Method method = Method::exact;
  std::string_view description;  // one line, for --help
  bool random = true;            // a block of it needs the sweep's seed
  // The version of the numbers it gives for a task: bumped for the tasks whose numbers change
  // (same task, same seed, other numbers), so that a results file made before is neither
  // resumed nor grown with them (in the plan hash and the task key from version 2 on).
  // nullptr: version 1.
  int (*numbers)(const Task&) = nullptr;
  // Sets the parameters a task leaves out of its random streams (common random numbers) to
  // their defaults; stream_key hashes what remains. nullptr: all of them key its streams.
  void (*common_streams)(Task&) = nullptr;
  std::vector<KeySpec> keys;    // its block keys, `method` and `zip` aside, in --help order
  std::vector<Column> columns;  // its results group: task_id, the parameters, the results
  // Fills in what the keys leave to derive (torus N, speeds from a profile, lambda from rho)
  // and checks what one key's value implies for another; fails with a located InputError.
  void (*derive)(Draft&, const BlockContext&) = nullptr;
  // Bytes of the lists the task holds (speeds, types, ...): every rank holds the plan.
  std::uint64_t (*list_bytes)(const Task&) = nullptr;
  // Validates a derived task against the method (what it builds for that, it builds once per
  // block where it can) and estimates its cost; nullopt if the task is outside the stability
  // region (an error with on_unstable: error). Runs once per task, at expansion.
  std::optional<CostEstimate> (*prepare)(const Task&, BlockContext&) = nullptr;
  // The same estimate for a task on its own.
  CostEstimate (*estimate)(const Task&) = nullptr;
  // Runs a task: result, status and warning (a task's own errors may throw).
  void (*run)(const Task&, const SharedEngines&, TaskOutcome&) = nullptr;
  // The memory estimate per rank of a task run on `ranks` ranks together; nullopt if the task
  // cannot span ranks. nullptr: no task of the method can.
  std::optional<MemoryEstimate> (*memory_per_rank)(const Task&, int ranks) = nullptr;
  std::string (*describe)(const Task&) = nullptr;  // see sweep::describe
  std::string (*category)(const Task&) = nullptr;  // see sweep::category
};

// The adapter of `method`.
const MethodAdapter& method_adapter(Method method);

}  // namespace qsweep::sweep::detail
