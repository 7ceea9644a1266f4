#pragma once
// The refined mean field of order 1 (Gast and Van Houdt 2017; docs/meanfield.md, "Refined mean
// field") for power_of_d with d distinct servers sampled: E[X^N] = pi + V / N + O(1 / N^2) for
// the occupancy X^N of N servers. The pieces are public so that the tests can check each of
// them on its own.
#include <vector>

namespace qsweep::meanfield {

// The expansion at the fixed point pi, truncated at L levels (x_{L+1} taken as 0, arrivals at
// queues of length L dropped). Matrices are L x L, row-major.
struct RefinedExpansion {
  int levels = 0;             // L
  std::vector<double> pi;     // pi_1..pi_L
  std::vector<double> A;      // Df(pi), the Jacobian of the drift f (tridiagonal)
  std::vector<double> Q;      // sum_l l l^T beta_l(pi) (diagonal: every jump moves one level)
  std::vector<double> W;      // A W + W A^T + Q = 0: N times the covariance of X^N, as N -> inf
  std::vector<double> curve;  // (1/2) sum_{k,m} d2f_j / dx_k dx_m W_km, j = 1..L
  std::vector<double> g;      // the 1/N term of the drift of distinct sampling, at pi
  std::vector<double> V;      // -A^{-1} (curve + g)
};

// d >= 2 (d = 1, random: V = 0, the queues are independent M/M/1), lambda in (0, 1), L >= 1.
RefinedExpansion refined_expansion(int d, double lambda, int levels);

// The levels L the refinement of power_of_d solves on: every level with pi_k >= 1e-300, plus
// one (the corrections of the levels beyond are below the double range; the tests check that
// more levels change nothing).
int refined_levels(int d, double lambda);

// Order 2 (docs/meanfield.md, "Order 2"): E[X^N] = pi + V / N + V2 / N^2 + O(1 / N^3), from the
// moment equations of the system-size expansion to 1/N^2 (third moments N^2 E[Y^(x)3] -> T, the
// 1/N^2 term W2 of E[Y Y^T], Y = X^N - pi), on L levels as above. T has L^3 values, solved in a
// band of half-width L^2 (about L^7 multiply-adds): the levels are cut where pi_k < kOrder2Cut.
inline constexpr double kOrder2Cut = 1e-40;
struct RefinedExpansion2 {
  RefinedExpansion first;  // the order-1 pieces on the same levels
  std::vector<double> T;   // L^3, row-major: N^2 E[Y_i Y_j Y_k] as N -> infinity
  std::vector<double> W2;  // L^2: E[Y Y^T] = W / N + W2 / N^2 + O(1 / N^3)
  std::vector<double> V2;  // L: the 1/N^2 coefficients of E[X^N]
};
RefinedExpansion2 refined_expansion2(int d, double lambda, int levels);

// The levels the order-2 term is solved on: every level with pi_k >= kOrder2Cut, plus one (the
// tests check that more levels change nothing).
int refined_levels2(int d, double lambda);

// Solves (A (+) .. (+) A) X = -C, the Kronecker sum of `modes` copies of the tridiagonal A
// (n x n, row-major), for X with n^modes values (row-major, the first index most significant),
// by banded Gaussian elimination without pivoting (half-width n^(modes - 1)); modes = 2 is the
// Lyapunov equation A X + X A^T + C = 0.
std::vector<double> solve_kronecker_sum(const std::vector<double>& A, const std::vector<double>& C,
                                        int n, int modes);

// The transient refinement (Gast, Bortolussi and Tribastone 2019): from a deterministic start
// x(0) (W(0) = 0, V(0) = 0), E[X^N(t)] = x(t) + V(t) / N + O(1 / N^2) with
//   dx/dt = f(x),  dW/dt = A(x) W + W A(x)^T + Q(x),  dV/dt = A(x) V + b(x, W) + g(x),
// A, Q, b, g as above but at x(t). Classical RK4 steps of at most dt on L levels (x_{L+1} = 0);
// rows j of x and V at times[j], each L values, row-major.
struct RefinedTrajectory {
  std::vector<double> x, V;
};
RefinedTrajectory refined_trajectory(int d, double lambda, int levels,
                                     const std::vector<double>& x0,
                                     const std::vector<double>& times, double dt);

// Solves A W + W A^T + Q = 0 for W (n x n, row-major) by Gaussian elimination on the Kronecker
// system (A (+) A) vec W = -vec Q, banded (bandwidth n) and without pivoting: A is tridiagonal
// and weakly diagonally dominant by columns (the drift conserves the servers), and so is the
// Kronecker sum, which keeps the elimination stable.
std::vector<double> solve_lyapunov_tridiagonal(const std::vector<double>& A,
                                               const std::vector<double>& Q, int n);

}  // namespace qsweep::meanfield
