#pragma once
// A task is one point of a sweep: a method with its complete parameters and its own seed.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/exact/exact.hpp"
#include "qsweep/ldp/options.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/sim/options.hpp"

namespace qsweep::sweep {

enum class Method : std::uint8_t { exact, simulate, ldp };

}  // namespace qsweep::sweep

template <>
struct qsweep::EnumNames<qsweep::sweep::Method> {
  using K = sweep::Method;
  static constexpr std::array<EnumName<K>, 3> table{{
      {K::exact, "exact"},
      {K::simulate, "simulate"},
      {K::ldp, "ldp"},
  }};
};

namespace qsweep::sweep {

struct Task {
  std::uint64_t id = 0;  // row in /tasks: position in the expanded plan (stable)
  Method method = Method::exact;
  int block = 0;           // 0-based index of the sweep block it came from
  std::uint64_t seed = 0;  // sweep seed; the task's streams are Rng(seed, id, replication)
  double cost = 0.0;       // estimated cost (seconds-ish units, comparable across methods)
  // Estimated peak bytes the task adds to the memory of the process that runs it, its result
  // included, and of those the result's (held until the task's batch is written); sweep/cost.hpp.
  // Not serialised: the plan hash is computed through serialize(), and results files written
  // before memory was estimated must still resume.
  double memory = 0.0;
  double result_memory = 0.0;

  // System parameters (exact and simulate; left at their defaults for ldp, whose n and lambda
  // are in ldp::Options). Family parameters that a family does not use keep their defaults.
  model::FamilyParams family;
  std::vector<double> speeds;  // empty = all 1
  double lambda = 0.0;         // per-server arrival rate (absolute, after rho / heavy_traffic)

  exact::Options exact;   // method exact
  sim::Options simulate;  // method simulate
  ldp::Options ldp;       // method ldp

  friend bool operator==(const Task&, const Task&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    ar & id & method & block & seed & cost & family & speeds & lambda & exact & simulate & ldp;
    // clang-format on
  }
};

// One line naming the method and the parameters that matter for it, for plans and messages:
// "exact ring N=8 lambda=0.9 qmax=20".
std::string describe(const Task& task);

// The kind of task, for counts in `qsweep plan`: the family (exact), family and policy
// (simulate), policy and estimator (ldp).
std::string category(const Task& task);

}  // namespace qsweep::sweep
