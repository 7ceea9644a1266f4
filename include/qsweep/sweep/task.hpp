#pragma once
// A task is one point of a sweep: a method with its complete parameters and its own seed.
// The methods are the alternatives of MethodParams, in Method order; everything the sweep layer
// does with a method is in its adapter, src/sweep/method_<name>.cpp (docs/architecture.md).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "qsweep/exact/exact.hpp"
#include "qsweep/ldp/ldp.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/sim/simulate.hpp"

namespace qsweep::sweep {

enum class Method : std::uint8_t { exact, simulate, ldp, meanfield };

// The queueing system of the methods that run on one (exact and simulate).
struct SystemParams {
  // Family parameters that a family does not use keep their defaults.
  model::FamilyParams family;
  std::vector<double> speeds;  // empty = all 1
  double lambda = 0.0;         // per-server arrival rate (absolute, after rho / heavy_traffic)
  friend bool operator==(const SystemParams&, const SystemParams&) = default;
};

// The parameters of one method: its name (sweep files, results groups), its options and what
// it runs on, and the type of its result.
struct ExactTask {
  static constexpr Method kMethod = Method::exact;
  static constexpr std::string_view kName = "exact";
  using Result = exact::Result;
  SystemParams system;
  exact::Options options;
  friend bool operator==(const ExactTask&, const ExactTask&) = default;
};

struct SimulateTask {
  static constexpr Method kMethod = Method::simulate;
  static constexpr std::string_view kName = "simulate";
  using Result = sim::Result;
  SystemParams system;
  sim::Options options;
  friend bool operator==(const SimulateTask&, const SimulateTask&) = default;
};

struct LdpTask {
  static constexpr Method kMethod = Method::ldp;
  static constexpr std::string_view kName = "ldp";
  using Result = ldp::Result;
  ldp::Options options;  // the system too: n servers of rate 1, arrival rate n * lambda
  friend bool operator==(const LdpTask&, const LdpTask&) = default;
};

struct MeanfieldTask {
  static constexpr Method kMethod = Method::meanfield;
  static constexpr std::string_view kName = "meanfield";
  using Result = meanfield::Result;
  meanfield::Options options;  // the system too: N -> infinity servers of rate 1
  friend bool operator==(const MeanfieldTask&, const MeanfieldTask&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    ar& options;
  }
};

// Every method, alternative i being Method i.
using MethodParams = std::variant<ExactTask, SimulateTask, LdpTask, MeanfieldTask>;

inline constexpr std::size_t kMethodCount = std::variant_size_v<MethodParams>;

namespace detail {

template <class... M>
constexpr auto method_table(std::type_identity<std::variant<M...>> /*methods*/) {
  return std::array<EnumName<Method>, sizeof...(M)>{{{M::kMethod, M::kName}...}};
}
template <class... M>
constexpr bool methods_in_order(std::type_identity<std::variant<M...>> /*methods*/) {
  std::size_t i = 0;
  return ((static_cast<std::size_t>(M::kMethod) == i++) && ...);
}
static_assert(methods_in_order(std::type_identity<MethodParams>{}),
              "MethodParams lists the methods in Method order");

template <class... M>
std::variant<std::monostate, typename M::Result...> result_variant(
    std::type_identity<std::variant<M...>> /*methods*/);

}  // namespace detail

// A method's result, or none (the task did not run, or failed).
using MethodResult = decltype(detail::result_variant(std::type_identity<MethodParams>{}));

// Every method, in Method order.
inline constexpr auto kMethods = [] {
  std::array<Method, kMethodCount> methods{};
  for (std::size_t i = 0; i < kMethodCount; ++i) methods[i] = static_cast<Method>(i);
  return methods;
}();

}  // namespace qsweep::sweep

template <>
struct qsweep::EnumNames<qsweep::sweep::Method> {
  static constexpr auto table =
      sweep::detail::method_table(std::type_identity<sweep::MethodParams>{});
};

namespace qsweep::sweep {

// The default parameters of `method`.
MethodParams default_params(Method method);

// Task::ranks of a task whose ranks the runner chooses: the fewest whose per-rank memory fits.
inline constexpr int kAutoRanks = 0;
// The most ranks a sweep file may ask one task to span.
inline constexpr int kMaxTaskRanks = 1 << 16;

struct Task {
  std::uint64_t id = 0;    // row in /tasks: position in the expanded plan
  int block = 0;           // 0-based index of the sweep block it came from
  std::uint64_t seed = 0;  // sweep seed; part of the task's key (task_key), which keys its streams
  double cost = 0.0;       // estimated cost (seconds-ish units, comparable across methods)
  // Estimated peak bytes the task adds to the memory of the process that runs it, its result
  // included, and of those the result's (held until the task's batch is written); sweep/cost.hpp.
  // Not in the canonical form (serialize() below), from which the plan hash is computed:
  // results files written before memory was estimated must still resume.
  double memory = 0.0;
  double result_memory = 0.0;
  // The ranks the task runs on together (sweep key `ranks`): 1, more (exact tasks on the general
  // engine), or kAutoRanks. Not in the canonical form either: the results do not depend on it
  // (docs/running.md, "Tasks that span ranks").
  int ranks = 1;
  // The refinement round that added the task (docs/sweep-format.md, "Refinement"): 0 for the
  // sweep's own points. Not in the canonical form either: a point computes the same whichever
  // round adds it.
  int round = 0;
  MethodParams params;  // the method and its parameters

  Method method() const { return static_cast<Method>(params.index()); }
  // The parameters of method M; std::bad_variant_access for a task of another method.
  template <class M>
  M& as() {
    return std::get<M>(params);
  }
  template <class M>
  const M& as() const {
    return std::get<M>(params);
  }
  // The system of an exact or simulate task; std::logic_error for another method.
  const SystemParams& system() const;
  SystemParams& system();

  friend bool operator==(const Task&, const Task&) = default;

  // The canonical form (src/sweep/canonical.hpp) that the plan hash and duplicate removal read.
  // It is the field sequence of the tasks before a method's parameters became one variant
  // alternative, so that the hash, and `--resume` of results files written then, are unchanged:
  // the system and the options of exact, simulate and ldp, those a task does not use at their
  // defaults. A method added later writes its parameters (their serialize()) after these, for
  // its own tasks only. Write-only: every rank expands the plan itself; a Task never goes
  // through a Boost archive.
  template <class Writer>
  void serialize(Writer& out, unsigned /*version*/) const {
    static const SystemParams kNoSystem{};
    static const ExactTask kNoExact{};
    static const SimulateTask kNoSimulate{};
    static const LdpTask kNoLdp{};
    const auto* exact = std::get_if<ExactTask>(&params);
    const auto* simulate = std::get_if<SimulateTask>(&params);
    const auto* ldp = std::get_if<LdpTask>(&params);
    const SystemParams& s = exact ? exact->system : simulate ? simulate->system : kNoSystem;
    // clang-format off
    out & id & method() & block & seed & cost & s.family & s.speeds & s.lambda &
        (exact ? *exact : kNoExact).options & (simulate ? *simulate : kNoSimulate).options &
        (ldp ? *ldp : kNoLdp).options;
    // clang-format on
    std::visit(
        [&out](const auto& m) {
          using M = std::decay_t<decltype(m)>;
          if constexpr (!std::is_same_v<M, ExactTask> && !std::is_same_v<M, SimulateTask> &&
                        !std::is_same_v<M, LdpTask>)
            out& m;
        },
        params);
  }
};

// One line naming the method and the parameters that matter for it, for plans and messages:
// "exact ring N=8 lambda=0.9 qmax=20".
std::string describe(const Task& task);

// The kind of task, for counts in `qsweep plan`: the family (exact), family and policy
// (simulate), policy and estimator (ldp).
std::string category(const Task& task);

}  // namespace qsweep::sweep
