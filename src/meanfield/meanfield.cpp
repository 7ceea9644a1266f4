#include "qsweep/meanfield/meanfield.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>

#include "qsweep/common/error.hpp"
#include "qsweep/ldp/theory.hpp"
#include "qsweep/meanfield/refined.hpp"
#include "qsweep/meanfield/sojourn.hpp"

namespace qsweep::meanfield {
namespace {

// The largest initial queue length with positive weight (0 if none).
int longest_initial(const std::vector<double>& counts) {
  for (std::size_t k = counts.size(); k-- > 0;)
    if (counts[k] > 0.0) return static_cast<int>(k);
  return 0;
}

// Independent M/M/1 queues: x_i = lambda^i.
bool is_mm1(Policy policy, int d) {
  return policy == Policy::random ||
         ((policy == Policy::power_of_d || policy == Policy::redundancy_coc) && d == 1);
}

// The fixed point's levels x_1, x_2, ... of power_of_d (random: d = 1; redundancy_coc with d = 1;
// redundancy_coc with d >= 2 has its own: coc_occupancy), and of jsq/jiq (x_1 = lambda, then 0).
// x_i = lambda^e_i with e_1 = 1, e_{i+1} = d e_i + 1 (e_i = (d^i - 1) / (d - 1), exact in a
// double up to 2^53), computed as exp(e_i log1p(lambda - 1)): lambda - 1 is exact, so x_i has a
// relative error of a few ulps times |ln x_i| (< 1e-14 down to x_i = 1e-15). The recursion
// x_{i+1} = lambda x_i^d would multiply the relative error by d per level (2.2e-7 at
// lambda = 1 - 1e-10, d = 2).
class Levels {
 public:
  Levels(Policy policy, int d, double lambda)
      : lambda_(lambda),
        log_lambda_(std::log1p(lambda - 1.0)),
        d_(policy == Policy::power_of_d || policy == Policy::redundancy_coc ? d : 1),
        last_after_first_(policy == Policy::jsq || policy == Policy::jiq) {}

  // x_i for the next i (x_1 = lambda first).
  double next() {
    if (++level_ == 1) return lambda_;
    if (last_after_first_) return 0.0;
    exponent_ = d_ * exponent_ + 1.0;
    return std::exp(exponent_ * log_lambda_);
  }

 private:
  double lambda_;
  double log_lambda_;
  double d_;
  bool last_after_first_;
  int level_ = 0;
  double exponent_ = 1.0;
};

ldp::Policy fluid_policy(Policy policy) {
  switch (policy) {
    case Policy::jsq:
      return ldp::Policy::jsq;
    case Policy::jiq:
      return ldp::Policy::jiq;
    case Policy::power_of_d:
    case Policy::random:
    case Policy::redundancy_coc:  // refused by validate()
      break;
  }
  return ldp::Policy::power_of_d;
}

// ---- redundancy_coc (docs/meanfield.md, "Redundancy-d with cancel-on-completion") -------------
//
// With G(u) = (lambda + (1 - lambda) e^{(d-1)u})^{-1/(d-1)}, the survival of a replica's
// completion time were it not cancelled, every integral is taken over w = G(u) in [0, 1]:
//   P(T > u) = w^d, E[T] = int_0^1 w^{d-1} / (1 - lambda w^{d-1}) dw,
//   the replica in service at a server has age > u with probability lambda w^d, the replicas
//   behind it are Poisson with mean m(w) = d/(d-1) ln((1 - lambda w^{d-1}) / (1 - lambda)), so
//   x_i = int_0^1 lambda d w^{d-1} P(Poisson(m(w)) >= i - 1) dw.
// The integrands are analytic on [0, 1]; what limits the quadrature is the pole/branch point
// at w = lambda^{-1/(d-1)} just above 1 (lambda near 1) and the boundary layer of w^{d-1} at
// w = 1 (large d). Nodes are placed in t = 1 - w, where 1 - w^{d-1} is computed without
// cancellation.

// n-point Gauss-Legendre rule on [0, 1], (node, weight) pairs, by Newton's method on P_n.
std::vector<std::pair<double, double>> gauss_legendre(int n) {
  std::vector<std::pair<double, double>> rule;
  for (int i = 0; i < n; ++i) {
    double z = std::cos(std::numbers::pi * (i + 0.75) / (n + 0.5)), derivative = 1.0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p = z, previous = 1.0;  // P_1(z), P_0(z)
      for (int j = 2; j <= n; ++j) {
        const double next = ((2.0 * j - 1.0) * z * p - (j - 1.0) * previous) / j;
        previous = p;
        p = next;
      }
      derivative = n * (z * p - previous) / (z * z - 1.0);
      const double step = p / derivative;
      z -= step;
      if (std::abs(step) < 1e-16) break;
    }
    rule.emplace_back(0.5 * (1.0 - z), 1.0 / ((1.0 - z * z) * derivative * derivative));
  }
  return rule;
}

// A quadrature node in t = 1 - w: the weight, w^{d-1} and 1 - w^{d-1}.
struct CocNode {
  double weight, wk, one_minus_wk;
};

// Panels [2^{-j-1}, 2^{-j}] in t, down to a last panel [0, 2^{-J}] a quarter of the distance
// to the singularity and of the width 1/(d-1) of the boundary layer: every panel then lies at
// least its own width from the singularity, where 20-point Gauss-Legendre is at the double
// precision (40 points change x_i and E[T] by < 4e-15 relative; docs/meanfield.md).
std::vector<CocNode> coc_nodes(int d, double lambda) {
  static const auto rule = gauss_legendre(20);
  const double k = d - 1.0;
  const double singularity = std::expm1(-std::log(lambda) / k);  // lambda^{-1/k} - 1
  const double smallest = 0.25 * std::min({singularity, 1.0 / k, 1.0});
  std::vector<CocNode> nodes;
  for (double high = 1.0;; high *= 0.5) {
    const double low = high * 0.5 < smallest ? 0.0 : high * 0.5;
    for (const auto& [node, weight] : rule) {
      const double t = low + (high - low) * node;
      const double log_wk = k * std::log1p(-t);
      nodes.push_back({(high - low) * weight, std::exp(log_wk), -std::expm1(log_wk)});
    }
    if (low == 0.0) break;
  }
  return nodes;
}

// m(w): mean number of replicas behind the one in service.
double coc_behind(int d, double lambda, const CocNode& node) {
  return d / (d - 1.0) * std::log1p(lambda * node.one_minus_wk / (1.0 - lambda));
}

// Levels beyond which x_i < 1e-300: x_i <= P(Poisson(m(0)) >= i - 1) since m <= m(0).
int coc_cutoff(int d, double lambda) {
  const double m = -d / (d - 1.0) * std::log1p(-lambda);
  double log_p = -m;  // ln P(Poisson(m) = l)
  int l = 0;
  while (l < kMaxLevels && !(l > m && log_p < -700.0)) {
    ++l;
    log_p += std::log(m / l);
  }
  return l + 2;
}

// x_1..x_levels for d >= 2.
std::vector<double> coc_occupancy(int d, double lambda, int levels) {
  std::vector<double> x(static_cast<std::size_t>(levels), 0.0);
  if (levels == 0) return x;
  const std::size_t top = static_cast<std::size_t>(std::max(levels, coc_cutoff(d, lambda)));
  std::vector<double> pmf(top);
  for (const CocNode& node : coc_nodes(d, lambda)) {
    const double m = coc_behind(d, lambda, node);
    pmf[0] = std::exp(-m);
    for (std::size_t l = 1; l < top; ++l) pmf[l] = pmf[l - 1] * m / static_cast<double>(l);
    // P(Poisson(m) >= l), summed upwards from the smallest terms: no cancellation.
    const double density = node.weight * lambda * d * node.wk;
    double tail = 0.0;
    for (std::size_t l = top; l-- > 1;) {
      tail += pmf[l];
      if (l < x.size()) x[l] += density * tail;
    }
    x[0] += density;  // P(Poisson >= 0) = 1
  }
  return x;
}

// E[T] = int_0^inf P(T > u) du for d >= 2.
double coc_response_time(int d, double lambda) {
  double sum = 0.0;
  for (const CocNode& node : coc_nodes(d, lambda))
    sum += node.weight * node.wk / ((1.0 - lambda) + lambda * node.one_minus_wk);
  return sum;
}

// Orders 1 and 2 (docs/meanfield.md, "Refined mean field"): V from the expansion at the fixed
// point, and with order 2 V2 from the expansion to 1/N^2 (on its own levels, cut at
// kOrder2Cut); random and power_of_d with d = 1 have independent M/M/1 queues,
// E[X^N] = x exactly (V = V2 = 0).
void refine(const Options& o, Result& r) {
  const std::size_t K = r.occupancy.size();
  r.V.assign(K, 0.0);
  r.EQ_V = 0.0;
  if (o.order >= 2) r.V2.assign(K, 0.0);
  r.EQ_V2 = 0.0;
  if (!is_mm1(o.policy, o.policy_d)) {
    const int L = refined_levels(o.policy_d, o.lambda);
    const RefinedExpansion e = refined_expansion(o.policy_d, o.lambda, L);
    for (std::size_t i = 0; i < K && i < e.V.size(); ++i) r.V[i] = e.V[i];
    for (std::size_t i = e.V.size(); i-- > 0;) r.EQ_V += e.V[i];
    if (o.order >= 2) {
      const RefinedExpansion2 e2 =
          refined_expansion2(o.policy_d, o.lambda, refined_levels2(o.policy_d, o.lambda));
      for (std::size_t i = 0; i < K && i < e2.V2.size(); ++i) r.V2[i] = e2.V2[i];
      for (std::size_t i = e2.V2.size(); i-- > 0;) r.EQ_V2 += e2.V2[i];
    }
  }
  const auto N = static_cast<double>(o.N);
  r.occupancy_N.resize(K);
  for (std::size_t i = 0; i < K; ++i)
    r.occupancy_N[i] = r.occupancy[i] + r.V[i] / N + (o.order >= 2 ? r.V2[i] / (N * N) : 0.0);
  r.EQ_N = r.EQ + r.EQ_V / N + r.EQ_V2 / (N * N);
  r.ET_N = r.EQ_N / o.lambda;
}

// The transient refinement of order 1 (docs/meanfield.md, "Refined trajectories"): V(t) from
// refined_trajectory on L levels, L the larger of the steady refinement's levels and one more
// than the highest level the fluid rows reach (x_k(t) >= 1e-300 at some output time); random
// and power_of_d with d = 1: V(t) = 0 (independent M/M/1 queues from a deterministic start).
void refine_trajectory(const Options& o, const std::vector<double>& x0,
                       const std::vector<std::vector<double>>& rows, Result& r) {
  const std::size_t K = r.occupancy.size(), m = r.times.size();
  r.trajectory_V.assign(m * K, 0.0);
  r.trajectory_EQ_V.assign(m, 0.0);
  if (!is_mm1(o.policy, o.policy_d)) {
    int L = refined_levels(o.policy_d, o.lambda);
    for (const auto& row : rows)
      for (std::size_t k = 0; k < row.size(); ++k)
        if (row[k] >= 1e-300) L = std::max(L, static_cast<int>(k) + 2);
    L = std::max(L, static_cast<int>(x0.size()) + 1);
    const RefinedTrajectory path = refined_trajectory(o.policy_d, o.lambda, L, x0, r.times, o.dt);
    const auto uL = static_cast<std::size_t>(L);
    for (std::size_t j = 0; j < m; ++j) {
      for (std::size_t k = 0; k < K && k < uL; ++k) r.trajectory_V[j * K + k] = path.V[j * uL + k];
      for (std::size_t k = uL; k-- > 0;) r.trajectory_EQ_V[j] += path.V[j * uL + k];
    }
  }
  const auto N = static_cast<double>(o.N);
  r.trajectory_N.resize(m * K);
  for (std::size_t i = 0; i < m * K; ++i)
    r.trajectory_N[i] = r.trajectory[i] + r.trajectory_V[i] / N;
}

}  // namespace

void validate_refinement(const Options& o) {
  if (o.order < 0 || o.order > 2)
    throw InputError("meanfield: order = " + std::to_string(o.order) +
                     " is not a refinement; expected 0 (the limit), 1 or 2");
  if (o.order == 0) {
    if (o.N != 0)
      throw InputError(
          "meanfield: N = " + std::to_string(o.N) +
          " is given with order 0 (the N -> infinity limit); expected order 1 or 2 with N");
    return;
  }
  const std::string policy(name_of(o.policy));
  if (o.policy == Policy::jsq || o.policy == Policy::jiq)
    throw InputError("meanfield: policy " + policy +
                     " has no refined mean field: its drift is not smooth (it switches where "
                     "x_1 reaches 1), so E[X^N] has no expansion in 1/N around the limit; "
                     "expected order 0, or policy power_of_d");
  if (o.policy == Policy::redundancy_coc)
    throw InputError(
        "meanfield: policy redundancy_coc has no refined mean field here (its occupancy alone "
        "is not Markov); expected order 0");
  if (o.horizon > 0.0 && o.order == 2)
    throw InputError(
        "meanfield: a trajectory of order 2 (the transient 1/N^2 term) is not implemented; "
        "expected order 1 with horizon > 0, or order 2 with horizon = 0");
  const int d = o.policy == Policy::power_of_d ? o.policy_d : 1;
  if (o.N < d)
    throw InputError("meanfield: N = " + std::to_string(o.N) + " servers cannot give " +
                     std::to_string(d) + " distinct ones to sample; expected N >= " +
                     std::to_string(d) + " (the servers of the system order 1 refines towards)");
}

void validate(const Options& o) {
  if (!(o.lambda > 0.0 && o.lambda < 1.0))
    throw InputError("meanfield: lambda = " + std::to_string(o.lambda) +
                     " is outside (0, 1); expected a stable per-server arrival rate");
  if ((o.policy == Policy::power_of_d || o.policy == Policy::redundancy_coc) && o.policy_d < 1)
    throw InputError("meanfield: policy_d must be >= 1");
  if (o.policy == Policy::redundancy_coc && o.horizon > 0.0)
    throw InputError(
        "meanfield: policy redundancy_coc has no fluid trajectory (the occupancy alone does not "
        "determine its evolution: cancellations depend on the other replicas' ages); expected "
        "horizon = 0");
  if (!(o.tolerance > 0.0 && o.tolerance < 1.0))
    throw InputError("meanfield: tolerance must be in (0, 1)");
  if (o.occupancy_max < 0 || o.occupancy_max > kMaxLevels)
    throw InputError("meanfield: occupancy_max must be in 0.." + std::to_string(kMaxLevels));
  if (!(o.horizon >= 0.0 && o.horizon <= 1e6))
    throw InputError("meanfield: horizon must be in [0, 1e6]");
  if (o.time_points < 1 || o.time_points > 100'000)
    throw InputError("meanfield: time_points must be in 1..100000");
  if (!(o.dt > 0.0 && o.dt <= 1.0)) throw InputError("meanfield: dt must be in (0, 1]");
  const auto increasing = [](const std::vector<double>& v, const char* name, double hi) {
    if (v.size() > 1000)
      throw InputError(std::string("meanfield: ") + name + " holds more than 1000 values");
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!(v[i] > 0.0 && v[i] < hi && (i == 0 || v[i] > v[i - 1])))
        throw InputError(std::string("meanfield: ") + name + " must be increasing, in (0, " +
                         (hi == 1.0 ? "1)" : "inf)"));
  };
  increasing(o.quantiles, "quantiles", 1.0);
  increasing(o.tail_times, "tail_times", std::numeric_limits<double>::infinity());
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
  validate_refinement(o);
}

std::vector<double> fixed_point(Policy policy, int d, double lambda, int levels) {
  if (policy == Policy::redundancy_coc && d >= 2) return coc_occupancy(d, lambda, levels);
  std::vector<double> x;
  x.reserve(static_cast<std::size_t>(std::max(levels, 0)));
  Levels level(policy, d, lambda);
  for (int i = 1; i <= levels; ++i) x.push_back(level.next());
  return x;
}

int levels(const Options& o) {
  if (o.occupancy_max > 0) return o.occupancy_max;
  int k = 0;
  if (o.policy == Policy::redundancy_coc && o.policy_d >= 2) {
    const auto x = coc_occupancy(o.policy_d, o.lambda, coc_cutoff(o.policy_d, o.lambda));
    while (static_cast<std::size_t>(k) < x.size() && x[static_cast<std::size_t>(k)] >= o.tolerance)
      ++k;
  } else {
    Levels level(o.policy, o.policy_d, o.lambda);
    while (k < kMaxLevels && level.next() >= o.tolerance) ++k;
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
  if (is_mm1(o.policy, o.policy_d)) {
    r.EQ = o.lambda / (1.0 - o.lambda);
  } else if (o.policy == Policy::redundancy_coc) {
    // Every replica of a job leaves with it: replicas per server = d lambda E[T] (Little).
    r.EQ = o.policy_d * o.lambda * coc_response_time(o.policy_d, o.lambda);
  } else if (o.policy == Policy::jsq || o.policy == Policy::jiq) {
    r.EQ = o.lambda;
  } else {  // d >= 2: x_i falls doubly exponentially once below lambda^(1/(d-1))
    // Summed from the smallest term up (the terms decrease): a few ulps of E[Q].
    std::vector<double> terms;
    Levels level(o.policy, o.policy_d, o.lambda);
    for (double value = level.next(); terms.size() < 100'000 && value >= 1e-300;
         value = level.next())
      terms.push_back(value);
    for (std::size_t i = terms.size(); i-- > 0;) r.EQ += terms[i];
  }
  const int replicas = o.policy == Policy::redundancy_coc ? o.policy_d : 1;
  r.ET = r.EQ / (replicas * o.lambda);  // Little, per job
  if (o.order >= 1) refine(o, r);
  r.T_quantile = sojourn_quantiles(o, o.quantiles);
  r.T_tail = sojourn_tail(o, o.tail_times);

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
    if (o.order >= 1) refine_trajectory(o, x0, rows, r);
  }
  return r;
}

}  // namespace qsweep::meanfield
