#pragma once
// Large-deviation theory of many-server JSQ (the JSQ paper, docs/references.md; the formulas and
// how they were checked: docs/ldp.md, "Theory"): decay rates of p = P(E_j^n(T)) from the
// all-queues-of-length-1 start, the tilt of the optimal path, and fluid (law of large numbers)
// trajectories of the occupancy X_i(t).
#include <vector>

#include "qsweep/ldp/options.hpp"

namespace qsweep::ldp {

// Cost per unit time of moving the total number of jobs per server at speed b >= 0 while every
// server is busy: arrivals tilted by y, service by 1/y with lambda*y - 1/y = b, so
//   L_lambda(b) = b log y - sqrt(b^2 + 4 lambda) + lambda + 1,
//   y = (b + sqrt(b^2 + 4 lambda)) / (2 lambda).
double path_cost(double b, double lambda);

// -lim (1/n) log P(E_j^n(T)) for lambda_n -> 1: T * L_1((j - 2) / T).
double decay_rate(int j, double T);

// The same for a fixed lambda: T * L_lambda(c / T) with c = j - 2, except
//   lambda < 1 and c / T < 1 - lambda: c log(1 / lambda) (reach the level in c / (1 - lambda) < T),
//   lambda > 1 and c / T <= lambda - 1: 0 (the fluid path itself reaches level j - 1 by T).
double decay_rate_fixed_lambda(int j, double T, double lambda);

// Large-T form of decay_rate: (j - 2)^2 / (4 T).
double decay_rate_large_T(int j, double T);

// Arrival tilt u of the optimal path (service is tilted by 1/u) for decay_rate_fixed_lambda;
// 1 where the rate is 0.
double optimal_tilt(int j, double T, double lambda);

// Fluid limit of the occupancy for n -> infinity. x0[i - 1] = X_i(0) (fraction of queues with at
// least i jobs, non-increasing in [0, 1]). Returns, for each entry of `times` (non-decreasing,
// >= 0), the vector X_1, X_2, ... at that time; levels beyond a row's size are 0. Arrivals of rate
// lambda join a queue of length k at fraction a_k: jsq refills the queues that drop below the
// full levels first, the rest join the shortest; jiq refills idle queues first, the rest uniform
// (docs/ldp.md, "Theory"); power_of_d: a_k = X_k^d - X_{k+1}^d. Cash-Karp (fifth order) steps of
// dt, cut where jsq or jiq enters or leaves a face X_i = 1 (located by bisection).
std::vector<std::vector<double>> fluid_trajectory(Policy policy, int d, double lambda,
                                                  const std::vector<double>& x0,
                                                  const std::vector<double>& times,
                                                  double dt = 1e-3);

}  // namespace qsweep::ldp
