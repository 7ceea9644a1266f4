#include "qsweep/meanfield/refined.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>

namespace qsweep::meanfield {
namespace {

using std::size_t;

// pi_k = lambda^((d^k - 1) / (d - 1)) as in meanfield.cpp's Levels (exp of the exponent times
// log1p(lambda - 1)), k = 1..levels.
std::vector<double> power_of_d_levels(int d, double lambda, int levels) {
  std::vector<double> pi;
  const double log_lambda = std::log1p(lambda - 1.0);
  double exponent = 1.0;
  for (int k = 1; k <= levels; ++k) {
    pi.push_back(k == 1 ? lambda : std::exp(exponent * log_lambda));
    exponent = d * exponent + 1.0;
  }
  return pi;
}

// Solves the tridiagonal system A v = b by elimination without pivoting (A is diagonally
// dominant by columns, so this is stable).
std::vector<double> solve_tridiagonal(const std::vector<double>& A, std::vector<double> b, int n) {
  const auto at = [&](int i, int j) { return A[static_cast<size_t>(i) * n + j]; };
  std::vector<double> diag(static_cast<size_t>(n)), upper(static_cast<size_t>(n), 0.0);
  for (int i = 0; i < n; ++i) {
    diag[i] = at(i, i);
    if (i + 1 < n) upper[i] = at(i, i + 1);
    if (i > 0) {
      const double factor = at(i, i - 1) / diag[i - 1];
      diag[i] -= factor * upper[i - 1];
      b[i] -= factor * b[i - 1];
    }
  }
  for (int i = n; i-- > 0;) b[i] = (b[i] - (i + 1 < n ? upper[i] * b[i + 1] : 0.0)) / diag[i];
  return b;
}

}  // namespace

std::vector<double> solve_lyapunov_tridiagonal(const std::vector<double>& A,
                                               const std::vector<double>& Q, int n) {
  // Unknown r = i n + j is W_ij; row r reads sum_k A_ik W_kj + sum_k A_jk W_ik = -Q_ij, whose
  // entries lie at columns r +- n (A_i,i+-1) and r +- 1 (A_j,j+-1): a band of half-width n.
  const size_t m = static_cast<size_t>(n) * n, width = 2 * static_cast<size_t>(n) + 1;
  std::vector<double> band(m * width, 0.0), rhs(m);
  const auto entry = [&](size_t row, size_t col) -> double& {
    return band[row * width + (col + n - row)];
  };
  const auto a = [&](int i, int j) { return A[static_cast<size_t>(i) * n + j]; };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      const size_t r = static_cast<size_t>(i) * n + j;
      rhs[r] = -Q[r];
      for (int k = std::max(0, i - 1); k <= std::min(n - 1, i + 1); ++k)
        entry(r, static_cast<size_t>(k) * n + j) += a(i, k);
      for (int k = std::max(0, j - 1); k <= std::min(n - 1, j + 1); ++k)
        entry(r, static_cast<size_t>(i) * n + k) += a(j, k);
    }
  for (size_t c = 0; c < m; ++c) {
    const double pivot = entry(c, c);
    if (!(std::abs(pivot) > 0.0)) throw std::runtime_error("Lyapunov solve: zero pivot");
    const size_t last = std::min(m - 1, c + n);
    for (size_t r = c + 1; r <= last; ++r) {
      const double factor = entry(r, c) / pivot;
      if (factor == 0.0) continue;
      for (size_t k = c; k <= last; ++k) entry(r, k) -= factor * entry(c, k);
      rhs[r] -= factor * rhs[c];
    }
  }
  std::vector<double> w(m);
  for (size_t r = m; r-- > 0;) {
    double sum = rhs[r];
    for (size_t k = r + 1; k <= std::min(m - 1, r + n); ++k) sum -= entry(r, k) * w[k];
    w[r] = sum / entry(r, r);
  }
  return w;
}

int refined_levels(int d, double lambda) {
  const auto pi = power_of_d_levels(d, lambda, 200);
  int levels = 0;
  while (levels < 200 && pi[static_cast<size_t>(levels)] >= 1e-300) ++levels;
  return levels + 1;
}

RefinedExpansion refined_expansion(int d, double lambda, int levels) {
  if (d < 2 || levels < 1) throw std::logic_error("refined_expansion: needs d >= 2, levels >= 1");
  const int n = levels;
  RefinedExpansion e;
  e.levels = n;
  e.pi = power_of_d_levels(d, lambda, n);
  const auto x = [&](int k) {  // x_0 = 1, x_1..x_L, then 0
    return k == 0 ? 1.0 : k > n ? 0.0 : e.pi[static_cast<size_t>(k - 1)];
  };
  const size_t nn = static_cast<size_t>(n) * n;
  e.A.assign(nn, 0.0);
  e.Q.assign(nn, 0.0);
  const auto at = [n](std::vector<double>& M, int i, int j) -> double& {
    return M[static_cast<size_t>(i) * n + j];
  };
  // f_k = lambda (x_{k-1}^d - x_k^d) - (x_k - x_{k+1}), k = 1..L (row k - 1).
  const double dd = d;
  for (int k = 1; k <= n; ++k) {
    const int row = k - 1;
    if (k >= 2) at(e.A, row, row - 1) = lambda * dd * std::pow(x(k - 1), dd - 1.0);
    at(e.A, row, row) = -lambda * dd * std::pow(x(k), dd - 1.0) - 1.0;
    if (k < n) at(e.A, row, row + 1) = 1.0;
    // Arrivals to level k and departures from it, each a jump of one level.
    at(e.Q, row, row) = lambda * (std::pow(x(k - 1), dd) - std::pow(x(k), dd)) + (x(k) - x(k + 1));
  }
  e.W = solve_lyapunov_tridiagonal(e.A, e.Q, n);

  // Second derivatives: only the x^d terms are nonlinear, d2/dx^2 x^d = d (d - 1) x^(d-2).
  // Distinct sampling: P(all d sampled of N have >= k jobs) = prod_{i<d} (N x - i) / (N - i)
  // = x^d - d (d - 1) / (2 N) x^(d-1) (1 - x) + O(1 / N^2), so the drift's 1/N term is
  // g_k = lambda (c(x_{k-1}) - c(x_k)) with c(x) = -d (d - 1) / 2 x^(d-1) (1 - x).
  const double second = lambda * dd * (dd - 1.0);
  const auto c = [&](double v) { return -0.5 * dd * (dd - 1.0) * std::pow(v, dd - 1.0) * (1 - v); };
  e.curve.resize(static_cast<size_t>(n));
  e.g.resize(static_cast<size_t>(n));
  std::vector<double> rhs(static_cast<size_t>(n));
  for (int k = 1; k <= n; ++k) {
    const int row = k - 1;
    double curve = -std::pow(x(k), dd - 2.0) * at(e.W, row, row);
    if (k >= 2) curve += std::pow(x(k - 1), dd - 2.0) * at(e.W, row - 1, row - 1);
    e.curve[static_cast<size_t>(row)] = 0.5 * second * curve;
    e.g[static_cast<size_t>(row)] = lambda * (c(x(k - 1)) - c(x(k)));
    rhs[static_cast<size_t>(row)] =
        -(e.curve[static_cast<size_t>(row)] + e.g[static_cast<size_t>(row)]);
  }
  e.V = solve_tridiagonal(e.A, rhs, n);
  return e;
}

namespace {

// The derivative of (x, W, V) (x: L, W: L x L, V: L) for the transient refinement.
struct Field {
  int d;
  double lambda;
  int n;

  std::vector<double> operator()(const std::vector<double>& state) const {
    const auto un = static_cast<size_t>(n);
    const double* xs = state.data();
    const double* W = state.data() + un;
    const double* V = state.data() + un + un * un;
    const double dd = d;
    const auto x = [&](int k) { return k == 0 ? 1.0 : k > n ? 0.0 : xs[k - 1]; };
    // A tridiagonal: below, diagonal, above (row k - 1 for level k).
    std::vector<double> below(un, 0.0), diag(un), above(un, 0.0), q(un), rest(un);
    const double second = lambda * dd * (dd - 1.0);
    const auto c = [&](double v) {
      return -0.5 * dd * (dd - 1.0) * std::pow(v, dd - 1.0) * (1.0 - v);
    };
    std::vector<double> out(state.size());
    for (int k = 1; k <= n; ++k) {
      const auto row = static_cast<size_t>(k - 1);
      if (k >= 2) below[row] = lambda * dd * std::pow(x(k - 1), dd - 1.0);
      diag[row] = -lambda * dd * std::pow(x(k), dd - 1.0) - 1.0;
      if (k < n) above[row] = 1.0;
      const double arrivals = lambda * (std::pow(x(k - 1), dd) - std::pow(x(k), dd));
      const double departures = x(k) - x(k + 1);
      out[row] = arrivals - departures;
      q[row] = arrivals + departures;
      double curve = -std::pow(x(k), dd - 2.0) * W[row * un + row];
      if (k >= 2) curve += std::pow(x(k - 1), dd - 2.0) * W[(row - 1) * un + row - 1];
      rest[row] = 0.5 * second * curve + lambda * (c(x(k - 1)) - c(x(k)));
    }
    // (A M)_ij for M = W or V, A tridiagonal.
    const auto a_times = [&](const double* M, size_t i, size_t j, size_t columns) {
      double sum = diag[i] * M[i * columns + j];
      if (i > 0) sum += below[i] * M[(i - 1) * columns + j];
      if (i + 1 < un) sum += above[i] * M[(i + 1) * columns + j];
      return sum;
    };
    for (size_t i = 0; i < un; ++i)
      for (size_t j = 0; j < un; ++j)  // (A W + W A^T)_ij = (A W)_ij + (A W)_ji (W symmetric)
        out[un + i * un + j] = a_times(W, i, j, un) + a_times(W, j, i, un) + (i == j ? q[i] : 0.0);
    for (size_t i = 0; i < un; ++i) out[un + un * un + i] = a_times(V, i, 0, 1) + rest[i];
    return out;
  }
};

}  // namespace

RefinedTrajectory refined_trajectory(int d, double lambda, int levels,
                                     const std::vector<double>& x0,
                                     const std::vector<double>& times, double dt) {
  if (d < 2 || levels < 1) throw std::logic_error("refined_trajectory: needs d >= 2, levels >= 1");
  const auto un = static_cast<size_t>(levels);
  const Field field{d, lambda, levels};
  std::vector<double> state(un + un * un + un, 0.0);
  for (size_t k = 0; k < un && k < x0.size(); ++k) state[k] = x0[k];
  RefinedTrajectory out;
  double t = 0.0;
  const auto axpy = [](const std::vector<double>& y, double h, const std::vector<double>& k) {
    std::vector<double> r(y.size());
    for (size_t i = 0; i < y.size(); ++i) r[i] = y[i] + h * k[i];
    return r;
  };
  for (double target : times) {
    // Equal steps of at most dt up to the next time.
    const double span = target - t;
    const auto steps = static_cast<long>(std::ceil(span / dt - 1e-9));
    const double h = steps > 0 ? span / static_cast<double>(steps) : 0.0;
    for (long s = 0; s < steps; ++s) {
      const auto k1 = field(state);
      const auto k2 = field(axpy(state, h / 2, k1));
      const auto k3 = field(axpy(state, h / 2, k2));
      const auto k4 = field(axpy(state, h, k3));
      for (size_t i = 0; i < state.size(); ++i)
        state[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    }
    t = target;
    out.x.insert(out.x.end(), state.begin(), state.begin() + static_cast<long>(un));
    out.V.insert(out.V.end(), state.end() - static_cast<long>(un), state.end());
  }
  return out;
}

}  // namespace qsweep::meanfield
