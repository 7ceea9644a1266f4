#pragma once
// Parameters of one simulation (sweep method `simulate`; keys as in docs/sweep-format.md).
#include <array>
#include <string>
#include <vector>

#include "qsweep/common/enum_names.hpp"

namespace qsweep::sim {

enum class Policy {
  redundancy_coc,  // replicas to every server of S, FCFS, cancel on first completion
  redundancy_cos,  // cancel on start: the job runs on the first server of S that can take it
  jsq,             // shortest queue within S, ties at random
  random,          // uniform within S
  jiq,             // an idle server of S if any, else uniform within S
  power_of_d,      // policy_d servers sampled from S, shortest of them
};

enum class ServiceKind { exponential, deterministic, hyperexponential, empirical };

// The state of every replication at time 0 (docs/sim.md, "Starting states").
enum class Start {
  empty,        // no job anywhere
  fixed_point,  // the mean-field fixed point's queue lengths (dispatching on complete)
  counts,       // initial_counts: the weight of servers holding k jobs, k = 0, 1, ...
};

// Keys that may be left out of a task's random streams (sweep key common_random_numbers): bits
// of Options::common_random_numbers. Both change only how jobs are routed, never the arrival
// process or the service law.
enum class CommonRandomKey : unsigned { policy = 1, policy_d = 2 };

}  // namespace qsweep::sim

template <>
struct qsweep::EnumNames<qsweep::sim::Policy> {
  using K = sim::Policy;
  static constexpr std::array<EnumName<K>, 6> table{{
      {K::redundancy_coc, "redundancy_coc"},
      {K::redundancy_cos, "redundancy_cos"},
      {K::jsq, "jsq"},
      {K::random, "random"},
      {K::jiq, "jiq"},
      {K::power_of_d, "power_of_d"},
  }};
};

template <>
struct qsweep::EnumNames<qsweep::sim::ServiceKind> {
  using K = sim::ServiceKind;
  static constexpr std::array<EnumName<K>, 4> table{{
      {K::exponential, "exponential"},
      {K::deterministic, "deterministic"},
      {K::hyperexponential, "hyperexponential"},
      {K::empirical, "empirical"},
  }};
};

template <>
struct qsweep::EnumNames<qsweep::sim::Start> {
  using K = sim::Start;
  static constexpr std::array<EnumName<K>, 3> table{{
      {K::empty, "empty"},
      {K::fixed_point, "fixed_point"},
      {K::counts, "counts"},
  }};
};

template <>
struct qsweep::EnumNames<qsweep::sim::CommonRandomKey> {
  using K = sim::CommonRandomKey;
  static constexpr std::array<EnumName<K>, 2> table{{
      {K::policy, "policy"},
      {K::policy_d, "policy_d"},
  }};
};

namespace qsweep::sim {

// Job sizes have unit mean for every kind (a server of speed mu finishes size x in x / mu).
struct Service {
  ServiceKind kind = ServiceKind::exponential;
  double cv2 = 1.0;             // hyperexponential: squared coefficient of variation (>= 1)
  std::vector<double> values;   // empirical: support (> 0), rescaled to unit mean
  std::vector<double> weights;  // empirical: probabilities (sum 1); empty: uniform
  friend bool operator==(const Service&, const Service&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    ar & kind & cv2 & values & weights;
    // clang-format on
  }
};

struct Options {
  Policy policy = Policy::redundancy_coc;
  int policy_d = 2;  // power_of_d
  Service service;
  bool identical_replicas = false;  // replicas of one job share one size (default: independent)
  // redundancy_cos: a job that finds several idle servers of its type starts at the one idle
  // longest (the rule of the exact cancel-on-start engine) instead of one uniformly at random.
  bool longest_idle = false;
  // Simulated time per replication after warm-up, in the first round; each further round of the
  // output analysis doubles it (docs/sim.md, "Output analysis").
  double horizon = 1e5;
  double warmup = -1.0;  // < 0: detected; >= 0: discarded first (and a detected one after it)
  int replications = 8;  // independent replications, each from `start`
  Start start = Start::empty;
  std::vector<double> initial_counts;  // start counts: weight of servers holding k = 0, 1, ... jobs
  double target_rel_half_width = 0.0;  // > 0: double the horizon until E[T] reaches it
  // Budget of one simulation: no round starts that would bring the events (arrivals and
  // departures) of all rounds beyond this (deterministic, unlike a CPU time).
  double max_events = 1e9;
  int qmax = 0;           // P(Q = q) histogram for q = 0..qmax
  int occupancy_max = 0;  // fraction of servers with >= i jobs (replicas), i = 1..occupancy_max
  // Bits of CommonRandomKey (docs/sim.md, "Common random numbers"): nonzero couples the streams,
  // arrivals and services drawn apart from the policy's draws, with a uniformized race.
  unsigned common_random_numbers = 0;
  bool coupled_streams() const { return common_random_numbers != 0; }
  // The sojourn-time distribution (docs/sim.md, "Sojourn-time distribution"): the quantiles at
  // these levels (increasing, in (0, 1); T_quantile) and P(T > t) at these times (increasing,
  // > 0; T_tail).
  std::vector<double> quantiles = {0.5, 0.9, 0.99};
  std::vector<double> tail_times;
  // Transient mode (docs/sim.md, "Transient simulation"): nonempty, every replication runs once
  // from `start` to the last of these times (increasing, >= 0), without warm-up or rounds, and
  // the result holds E[Q(t)] and the occupancy x_i(t) at each of them (EQ_t, occupancy_t) in
  // place of the steady-state estimates.
  std::vector<double> observe_times;
  bool transient() const { return !observe_times.empty(); }

  friend bool operator==(const Options&, const Options&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // The replication cap of the procedure before the output analysis sits where it was, at its
    // old default, and max_events (added later) is written to the canonical text (the plan hash
    // and duplicate removal of src/sweep) only off its default: so the text of every task that
    // leaves it alone, and of every exact, ldp and meanfield task (which writes these options at
    // their defaults), is what it was, and results files made before still resume. Boost
    // archives always carry max_events. The start state (added later still) likewise.
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    int retired_max_replications = 256;
    ar & policy & policy_d & service & identical_replicas & horizon & warmup & replications &
        target_rel_half_width & retired_max_replications & qmax & occupancy_max & longest_idle;
    constexpr bool boost_archive = requires { typename Archive::is_loading; };
    if (boost_archive || max_events != Options{}.max_events) ar & max_events;
    if (boost_archive || start != Start::empty) ar & start & initial_counts;
    if (boost_archive || common_random_numbers != 0) ar & common_random_numbers;
    // The distribution's levels and times and the transient mode's times (added later still),
    // each after its name in the canonical text: two lists of the same type must not give the
    // same text when only one of them is off its default.
    if constexpr (boost_archive) {
      ar & quantiles & tail_times & observe_times;
    } else {
      if (quantiles != Options{}.quantiles) ar & std::string("quantiles") & quantiles;
      if (!tail_times.empty()) ar & std::string("tail_times") & tail_times;
      if (!observe_times.empty()) ar & std::string("observe_times") & observe_times;
    }
    // clang-format on
  }
};

}  // namespace qsweep::sim
