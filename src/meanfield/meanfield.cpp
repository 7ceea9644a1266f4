#include "qsweep/meanfield/meanfield.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/ldp/theory.hpp"

namespace qsweep::meanfield {
namespace {

// The largest initial queue length with positive weight (0 if none).
int longest_initial(const std::vector<double>& counts) {
  for (std::size_t k = counts.size(); k-- > 0;)
    if (counts[k] > 0.0) return static_cast<int>(k);
  return 0;
}

// x_{i+1} from x_i on the fixed point.
double next_level(Policy policy, int d, double lambda, double x) {
  switch (policy) {
    case Policy::power_of_d:
      return lambda * std::pow(x, d);
    case Policy::random:
      return lambda * x;
    case Policy::jsq:
    case Policy::jiq:
      break;
  }
  return 0.0;
}

ldp::Policy fluid_policy(Policy policy) {
  switch (policy) {
    case Policy::jsq:
      return ldp::Policy::jsq;
    case Policy::jiq:
      return ldp::Policy::jiq;
    case Policy::power_of_d:
    case Policy::random:
      break;
  }
  return ldp::Policy::power_of_d;
}

}  // namespace

void validate(const Options& o) {
  if (!(o.lambda > 0.0 && o.lambda < 1.0))
    throw InputError("meanfield: lambda = " + std::to_string(o.lambda) +
                     " is outside (0, 1); expected a stable per-server arrival rate");
  if (o.policy == Policy::power_of_d && o.policy_d < 1)
    throw InputError("meanfield: policy_d must be >= 1");
  if (!(o.tolerance > 0.0 && o.tolerance < 1.0))
    throw InputError("meanfield: tolerance must be in (0, 1)");
  if (o.occupancy_max < 0 || o.occupancy_max > kMaxLevels)
    throw InputError("meanfield: occupancy_max must be in 0.." + std::to_string(kMaxLevels));
  if (!(o.horizon >= 0.0 && o.horizon <= 1e6))
    throw InputError("meanfield: horizon must be in [0, 1e6]");
  if (o.time_points < 1 || o.time_points > 100'000)
    throw InputError("meanfield: time_points must be in 1..100000");
  if (!(o.dt > 0.0 && o.dt <= 1.0)) throw InputError("meanfield: dt must be in (0, 1]");
  if (static_cast<int>(o.initial_counts.size()) > kMaxLevels + 1)
    throw InputError("meanfield: initial_counts has more than " + std::to_string(kMaxLevels + 1) +
                     " entries");
  double total = 0.0;
  for (double c : o.initial_counts) {
    if (!(c >= 0.0 && std::isfinite(c)))
      throw InputError("meanfield: initial_counts must be finite and >= 0");
    total += c;
  }
  if (!o.initial_counts.empty() && !(total > 0.0))
    throw InputError("meanfield: initial_counts sum to 0; expected a positive total");
}

std::vector<double> fixed_point(Policy policy, int d, double lambda, int levels) {
  std::vector<double> x;
  x.reserve(static_cast<std::size_t>(std::max(levels, 0)));
  double value = lambda;
  for (int i = 1; i <= levels; ++i) {
    x.push_back(value);
    value = next_level(policy, d, lambda, value);
  }
  return x;
}

int levels(const Options& o) {
  if (o.occupancy_max > 0) return o.occupancy_max;
  int k = 0;
  double value = o.lambda;
  while (k < kMaxLevels && value >= o.tolerance) {
    ++k;
    value = next_level(o.policy, o.policy_d, o.lambda, value);
  }
  return std::min(kMaxLevels, std::max({k, 1, longest_initial(o.initial_counts)}));
}

std::size_t trajectory_size(const Options& o) {
  if (!(o.horizon > 0.0)) return 0;
  return static_cast<std::size_t>(o.time_points) * static_cast<std::size_t>(levels(o));
}

Result solve(const Options& o) {
  validate(o);
  Result r;
  const int K = levels(o);
  const std::vector<double> x = fixed_point(o.policy, o.policy_d, o.lambda, K + 1);
  r.occupancy.assign(x.begin(), x.begin() + K);
  r.tail = x[static_cast<std::size_t>(K)];

  // EQ = sum_{i >= 1} x_i, not truncated.
  if (o.policy == Policy::random || (o.policy == Policy::power_of_d && o.policy_d == 1)) {
    r.EQ = o.lambda / (1.0 - o.lambda);
  } else if (o.policy == Policy::jsq || o.policy == Policy::jiq) {
    r.EQ = o.lambda;
  } else {  // d >= 2: x_i falls doubly exponentially once below lambda^(1/(d-1))
    double value = o.lambda;
    for (int i = 0; i < 100'000 && value > 0.0; ++i) {
      r.EQ += value;
      value = next_level(o.policy, o.policy_d, o.lambda, value);
      if (value < 1e-300) break;
    }
  }
  r.ET = r.EQ / o.lambda;

  if (o.horizon > 0.0) {
    // X_i(0) = fraction of queues with at least i jobs.
    std::vector<double> x0(static_cast<std::size_t>(longest_initial(o.initial_counts)), 0.0);
    double total = 0.0;
    for (double c : o.initial_counts) total += c;
    double above = total;
    for (std::size_t i = 1; i <= x0.size(); ++i) {
      above -= o.initial_counts[i - 1];
      x0[i - 1] = std::clamp(above / total, 0.0, i == 1 ? 1.0 : x0[i - 2]);
    }
    const int d = o.policy == Policy::power_of_d ? o.policy_d : 1;
    r.times.resize(static_cast<std::size_t>(o.time_points));
    for (int j = 0; j < o.time_points; ++j)
      r.times[static_cast<std::size_t>(j)] =
          o.time_points == 1 ? o.horizon : o.horizon * j / (o.time_points - 1);
    const auto rows = ldp::fluid_trajectory(fluid_policy(o.policy), d, o.lambda, x0, r.times, o.dt);
    r.trajectory.reserve(trajectory_size(o));
    for (const auto& row : rows) {
      for (int i = 0; i < K; ++i)
        r.trajectory.push_back(static_cast<std::size_t>(i) < row.size() ? row[i] : 0.0);
      if (row.size() > static_cast<std::size_t>(K))
        r.trajectory_tail = std::max(r.trajectory_tail, row[static_cast<std::size_t>(K)]);
    }
  }
  return r;
}

}  // namespace qsweep::meanfield
