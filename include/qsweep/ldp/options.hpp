#pragma once
// Parameters of one many-server rare-event estimate (sweep method `ldp`).
#include <array>
#include <boost/serialization/vector.hpp>
#include <cstdint>
#include <vector>

#include "qsweep/common/enum_names.hpp"

namespace qsweep::ldp {

enum class Policy { jsq, jiq, power_of_d };
enum class Estimator { exact, monte_carlo, importance };

}  // namespace qsweep::ldp

template <>
struct qsweep::EnumNames<qsweep::ldp::Policy> {
  using K = ldp::Policy;
  static constexpr std::array<EnumName<K>, 3> table{{
      {K::jsq, "jsq"},
      {K::jiq, "jiq"},
      {K::power_of_d, "power_of_d"},
  }};
};

template <>
struct qsweep::EnumNames<qsweep::ldp::Estimator> {
  using K = ldp::Estimator;
  static constexpr std::array<EnumName<K>, 3> table{{
      {K::exact, "exact"},
      {K::monte_carlo, "monte_carlo"},
      {K::importance, "importance"},
  }};
};

namespace qsweep::ldp {

struct Options {
  Policy policy = Policy::jsq;
  int policy_d = 2;      // power_of_d: distinct queues sampled per arrival
  std::int64_t n = 100;  // servers, each of rate 1
  int j = 3;             // event E_j^n(T): some queue reaches j jobs by time T
  double T = 1.0;
  double lambda = 1.0;  // arrival rate n * lambda
  Estimator estimator = Estimator::importance;
  double samples = 1e5;  // Monte Carlo / importance sample paths (upper bound if a target is set)
  double target_rel_error = 0.0;  // > 0: stop once the relative error reaches it
  double truncation = 1e-12;      // exact: bound on (upper - lower) / lower of the probability
  // Queues of length k at time 0 (index k, summing to n, all k < j); empty: all n of length 1.
  std::vector<std::int64_t> initial_counts;

  friend bool operator==(const Options&, const Options&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    ar & policy & policy_d & n & j & T & lambda & estimator & samples & target_rel_error &
        truncation & initial_counts;
    // clang-format on
  }
};

}  // namespace qsweep::ldp
