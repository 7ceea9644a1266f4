#pragma once
// The mean-field (N -> infinity) limit of N unit-rate servers with Poisson arrivals of rate
// N * lambda dispatched by a JSQ-like policy or replicated to d servers (sweep method
// `meanfield`, docs/meanfield.md): the fixed point x_i (fraction of servers with at least i jobs,
// or replicas), the per-server mean queue length and sojourn time, and the fluid trajectory x(t)
// from a given start. Deterministic.
#include <array>
#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/common/enum_names.hpp"

namespace qsweep::meanfield {

// random: uniform server; power_of_d: shortest of d distinct uniform servers (as N -> infinity
// the same as d samples with replacement); jsq, jiq: join the shortest / an idle queue;
// redundancy_coc: replicas at d distinct uniform servers (FCFS, Exp(1) each), the first to
// complete cancels the others (Gardner et al., Oper. Res. 2017); queues count replicas.
// Appended last: the enumerator's value is part of the plan hash.
enum class Policy { power_of_d, jsq, jiq, random, redundancy_coc };

}  // namespace qsweep::meanfield

template <>
struct qsweep::EnumNames<qsweep::meanfield::Policy> {
  using K = meanfield::Policy;
  static constexpr std::array<EnumName<K>, 5> table{{
      {K::power_of_d, "power_of_d"},
      {K::jsq, "jsq"},
      {K::jiq, "jiq"},
      {K::random, "random"},
      {K::redundancy_coc, "redundancy_coc"},
  }};
};

namespace qsweep::meanfield {

// Levels of the occupancy reported at most, whatever the tolerance (random at lambda near 1
// would otherwise need log(tolerance) / log(lambda) of them).
inline constexpr int kMaxLevels = 100'000;

struct Options {
  Policy policy = Policy::power_of_d;
  int policy_d = 2;          // power_of_d: servers sampled; redundancy_coc: replicas (1: random)
  double lambda = 0.5;       // per-server arrival rate, in (0, 1)
  double tolerance = 1e-15;  // the occupancy stops before the first level with x_k < tolerance
  int occupancy_max = 0;  // > 0: exactly x_1..x_occupancy_max are reported (fixed point and path)
  // Fluid trajectory (not for redundancy_coc): none if horizon = 0, else x(t) at time_points
  // times evenly spaced over [0, horizon] from the start initial_counts (index k: weight of
  // queues of length k; counts or fractions, normalised by their sum; empty: all queues empty).
  double horizon = 0.0;
  int time_points = 11;
  std::vector<double> initial_counts;
  double dt = 1e-3;  // Runge-Kutta step of the trajectory
  // Refined mean field (docs/meanfield.md, "Refined mean field"): order 0 is the limit; order 1
  // adds the 1/N term of E[X^N] for N servers, order 2 also the 1/N^2 term (power_of_d and
  // random only; N >= policy_d; order 2 for the steady state only).
  int order = 0;
  std::int64_t N = 0;  // servers; 0 (none) with order 0
  // The limit's sojourn-time law (docs/meanfield.md, "Sojourn-time distribution"): quantiles at
  // these levels (increasing, in (0, 1)) and P(T > t) at these times (increasing, > 0).
  std::vector<double> quantiles;
  std::vector<double> tail_times;

  friend bool operator==(const Options&, const Options&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // order and N (added later) are written to the canonical text (plan hash, task keys) only
    // off their defaults, so the tasks of the limit keep their hashes; Boost archives always
    // carry them.
    // clang-format off
    ar & policy & policy_d & lambda & tolerance & occupancy_max & horizon & time_points &
        initial_counts & dt;
    constexpr bool boost_archive = requires { typename Archive::is_loading; };
    if (boost_archive || order != 0 || N != 0) ar & order & N;
    // The sojourn-time law's levels and times (added later still), each after its name in the
    // canonical text: two lists of the same type must not give the same text.
    if constexpr (boost_archive) {
      ar & quantiles & tail_times;
    } else {
      if (!quantiles.empty()) ar & std::string("quantiles") & quantiles;
      if (!tail_times.empty()) ar & std::string("tail_times") & tail_times;
    }
    // clang-format on
  }
};

struct Result {
  // Mean number of jobs (redundancy_coc: replicas) per server, sum_{i >= 1} x_i (not truncated).
  double EQ = 0.0;
  double ET = 0.0;  // mean sojourn time of a job: EQ / lambda (redundancy_coc: EQ / (d lambda))
  std::vector<double> occupancy;  // x_1..x_K of the fixed point, K = levels(options)
  double tail = 0.0;              // x_{K+1} of the fixed point: the first level not reported
  // Trajectory: times t_0..t_{m-1} and, row-major, x_1(t_j)..x_K(t_j) (m * K values).
  std::vector<double> times;
  std::vector<double> trajectory;
  double trajectory_tail = 0.0;  // max over the times of x_{K+1}(t): what the rows leave out
  // Order >= 1 (empty, and 0 in the results columns NaN, with order 0):
  // E[X^N] = x + V / N + V2 / N^2 + O(1 / N^3), V2 with order 2 only.
  std::vector<double> V;            // V_1..V_K, the 1/N coefficients of the occupancy
  double EQ_V = 0.0;                // sum_i V_i over every level: E[Q]_N = EQ + EQ_V / N + ...
  std::vector<double> occupancy_N;  // x_i + V_i / N (+ V2_i / N^2 with order 2), i = 1..K
  double EQ_N = 0.0;                // EQ + EQ_V / N (+ EQ_V2 / N^2 with order 2)
  double ET_N = 0.0;                // EQ_N / lambda (Little)
  // Order 2 (empty, 0, with order 0 and 1): the 1/N^2 coefficients.
  std::vector<double> V2;  // V2_1..V2_K
  double EQ_V2 = 0.0;      // sum_i V2_i over every level
  // Order 1 with a trajectory (empty otherwise): E[X^N(t)] = x(t) + V(t) / N + O(1 / N^2) from
  // the deterministic start, row-major as `trajectory` (time_points x K values).
  std::vector<double> trajectory_V;     // V_1(t_j)..V_K(t_j)
  std::vector<double> trajectory_N;     // x_i(t_j) + V_i(t_j) / N
  std::vector<double> trajectory_EQ_V;  // sum_i V_i(t_j) over every level, one per time
  // The limit's sojourn time T: quantiles at options.quantiles, P(T > t) at options.tail_times.
  std::vector<double> T_quantile, T_tail;

  friend bool operator==(const Result&, const Result&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // clang-format off
    ar & EQ & ET & occupancy & tail & times & trajectory & trajectory_tail & V & EQ_V &
        occupancy_N & EQ_N & ET_N & V2 & EQ_V2 & trajectory_V & trajectory_N & trajectory_EQ_V &
        T_quantile & T_tail;
    // clang-format on
  }
};

// Throws InputError for options outside their ranges (lambda in (0, 1), d >= 1, ...), for a
// trajectory of redundancy_coc and for what validate_refinement refuses.
void validate(const Options& options);

// Throws InputError for a refinement (order, N) the policy does not have: order > 0 of jsq and
// jiq (their drift is not smooth) and of redundancy_coc, order 2 with a trajectory (horizon > 0;
// order 1 has one); N < policy_d
// (d distinct servers are sampled) or N given with order 0.
void validate_refinement(const Options& options);

// x_i of the fixed point for i = 1..levels (x_0 = 1 is not included):
//   power_of_d: x_i = lambda^((d^i - 1) / (d - 1)) (d = 1: lambda^i), computed as
//               x_1 = lambda, x_{i+1} = lambda * x_i^d;
//   random: lambda^i; jsq, jiq: x_1 = lambda, x_i = 0 for i >= 2;
//   redundancy_coc: the cavity integral of docs/meanfield.md (d = 1: lambda^i).
std::vector<double> fixed_point(Policy policy, int d, double lambda, int levels);

// The number K of occupancy levels reported: occupancy_max if > 0, else the larger of the
// levels before the fixed point drops below the tolerance (at least 1) and the longest initial
// queue, at most kMaxLevels.
int levels(const Options& options);

// Number of trajectory values (time_points * levels, or 0 without a trajectory).
std::size_t trajectory_size(const Options& options);

Result solve(const Options& options);

}  // namespace qsweep::meanfield
