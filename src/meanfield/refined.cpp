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

std::vector<double> solve_kronecker_sum(const std::vector<double>& A, const std::vector<double>& C,
                                        int n, int modes) {
  // Unknown r has the digits (i_1, .., i_modes) in base n, i_1 the most significant; mode p
  // couples r to r +- stride_p (A_{i_p, i_p +- 1}), stride_p = n^(modes - p): a band of
  // half-width n^(modes - 1).
  if (modes < 1 || n < 1) throw std::logic_error("solve_kronecker_sum: needs n, modes >= 1");
  size_t m = 1;
  for (int p = 0; p < modes; ++p) m *= static_cast<size_t>(n);
  const size_t half = m / static_cast<size_t>(n), width = 2 * half + 1;
  std::vector<double> band(m * width, 0.0), rhs(m);
  const auto entry = [&](size_t row, size_t col) -> double& {
    return band[row * width + (col + half - row)];
  };
  const auto a = [&](size_t i, size_t j) { return A[i * static_cast<size_t>(n) + j]; };
  const auto un = static_cast<size_t>(n);
  for (size_t r = 0; r < m; ++r) {
    rhs[r] = -C[r];
    size_t rest = r, stride = 1;
    for (int p = 0; p < modes; ++p, stride *= un) {  // from the last mode to the first
      const size_t i = rest % un;
      rest /= un;
      for (size_t k = i == 0 ? 0 : i - 1; k <= std::min(un - 1, i + 1); ++k)
        entry(r, r - i * stride + k * stride) += a(i, k);
    }
  }
  for (size_t c = 0; c < m; ++c) {
    const double pivot = entry(c, c);
    if (!(std::abs(pivot) > 0.0)) throw std::runtime_error("Kronecker-sum solve: zero pivot");
    const size_t last = std::min(m - 1, c + half);
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
    for (size_t k = r + 1; k <= std::min(m - 1, r + half); ++k) sum -= entry(r, k) * w[k];
    w[r] = sum / entry(r, r);
  }
  return w;
}

std::vector<double> solve_lyapunov_tridiagonal(const std::vector<double>& A,
                                               const std::vector<double>& Q, int n) {
  return solve_kronecker_sum(A, Q, n, 2);
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

// n-th derivative of x^e (e >= 0 an integer): e (e - 1) .. (e - n + 1) x^(e - n), 0 when n > e
// (never pow of a negative exponent, which x = 1e-300 would send to infinity).
double monomial(double x, int e, int n) {
  if (n > e) return 0.0;
  double factor = 1.0;
  for (int i = 0; i < n; ++i) factor *= e - i;
  return factor * std::pow(x, e - n);
}

}  // namespace

int refined_levels2(int d, double lambda) {
  const auto pi = power_of_d_levels(d, lambda, 200);
  int levels = 0;
  while (levels < 200 && pi[static_cast<size_t>(levels)] >= kOrder2Cut) ++levels;
  return levels + 1;
}

RefinedExpansion2 refined_expansion2(int d, double lambda, int levels) {
  RefinedExpansion2 r;
  r.first = refined_expansion(d, lambda, levels);
  const RefinedExpansion& e = r.first;
  const int n = levels;
  const auto un = static_cast<size_t>(n);
  const auto x = [&](int k) {  // x_0 = 1, x_1..x_L, then 0 (levels 1-based)
    return k == 0 ? 1.0 : k > n ? 0.0 : e.pi[static_cast<size_t>(k - 1)];
  };
  // The sampling expansion H_N(x) = x^d + c1(x) / N + c2(x) / N^2 + O(1 / N^3) with
  // S1 = sum_{i<d} i, S2 = sum_{i<d} i^2: c1 = S1 (x^d - x^(d-1)),
  // c2 = (S2 + S1^2) / 2 x^d - S1^2 x^(d-1) + (S1^2 - S2) / 2 x^(d-2).
  const double S1 = d * (d - 1.0) / 2.0, S2 = (d - 1.0) * d * (2.0 * d - 1.0) / 6.0;
  const auto u = [&](double v, int k) { return monomial(v, d, k); };  // k-th derivative of x^d
  const auto c1 = [&](double v, int k) { return S1 * (monomial(v, d, k) - monomial(v, d - 1, k)); };
  const auto c2 = [&](double v) {
    return 0.5 * (S2 + S1 * S1) * monomial(v, d, 0) - S1 * S1 * monomial(v, d - 1, 0) +
           0.5 * (S1 * S1 - S2) * monomial(v, d - 2, 0);
  };
  // Diagonal derivatives of the arrival part lambda (p(x_{j-1}) - p(x_j)) of level j (row
  // j - 1) with respect to x_m (column m - 1): only m = j - 1 (for j >= 2) and m = j.
  // D[k](j, m) for the k-th derivative of p = x^d; G[k] for p = c1.
  const auto arrival = [&](const auto& p, int k, int j, int m) {
    if (m == j - 1 && j >= 2) return lambda * p(x(j - 1), k);
    if (m == j) return -lambda * p(x(j), k);
    return 0.0;
  };
  const auto at = [un](const std::vector<double>& M, size_t i, size_t j) { return M[i * un + j]; };
  const auto W = [&](size_t i, size_t j) { return at(e.W, i, j); };
  // q_j = lambda (x_{j-1}^d - x_j^d) + x_j - x_{j+1}: its first derivative (row j - 1) and the
  // diagonal of its second.
  const auto dq = [&](int j, int m) {
    return arrival(u, 1, j, m) + (m == j ? 1.0 : 0.0) - (m == j + 1 ? 1.0 : 0.0);
  };
  const auto q = [&](size_t j) { return e.Q[j * un + j]; };

  // Third moments: N^2 E[Y_i Y_j Y_k] -> T_ijk, (A (+) A (+) A) T = -C3, with, for the lone
  // index a and the pair (b, c) of each of the three placements,
  //   (1/2) sum_m D2f_a,mm (W_bc W_mm + 2 W_bm W_cm) + W_bc g_a + [b = c] (V_a q_b + sum_m
  //   dq_b / dx_m W_am).
  std::vector<double> C3(un * un * un, 0.0);
  const auto lone = [&](size_t a, size_t b, size_t c) {
    const int ja = static_cast<int>(a) + 1;
    double sum = W(b, c) * e.g[a];
    for (int m = std::max(1, ja - 1); m <= ja; ++m) {
      const auto um = static_cast<size_t>(m - 1);
      sum += 0.5 * arrival(u, 2, ja, m) * (W(b, c) * W(um, um) + 2.0 * W(b, um) * W(c, um));
    }
    if (b == c) {
      const int jb = static_cast<int>(b) + 1;
      sum += e.V[a] * q(b);
      for (int m = std::max(1, jb - 1); m <= std::min(n, jb + 1); ++m)
        sum += dq(jb, m) * W(a, static_cast<size_t>(m - 1));
    }
    return sum;
  };
  for (size_t i = 0; i < un; ++i)
    for (size_t j = 0; j < un; ++j)
      for (size_t k = 0; k < un; ++k)
        C3[(i * un + j) * un + k] = lone(i, j, k) + lone(j, i, k) + lone(k, i, j);
  r.T = solve_kronecker_sum(e.A, C3, n, 3);
  const auto T = [&](size_t i, size_t j, size_t k) { return r.T[(i * un + j) * un + k]; };

  // The 1/N^2 term of the second moments: A W2 + W2 A^T + S + S^T + diag(Qc) = 0 with
  //   S_ij = (1/2) sum_m D2f_j,mm T_imm + (1/2) sum_m D3f_j,mmm W_im W_mm + V_i g_j
  //          + sum_m Dg_jm W_im,
  //   Qc_i = sum_m dq_i / dx_m V_m + (1/2) sum_m d2q_i / dx_m^2 W_mm + g_i.
  std::vector<double> S(un * un, 0.0), C2(un * un, 0.0);
  for (size_t i = 0; i < un; ++i)
    for (size_t j = 0; j < un; ++j) {
      const int jj = static_cast<int>(j) + 1;
      double sum = e.V[i] * e.g[j];
      for (int m = std::max(1, jj - 1); m <= jj; ++m) {
        const auto um = static_cast<size_t>(m - 1);
        sum += 0.5 * arrival(u, 2, jj, m) * T(i, um, um) +
               0.5 * arrival(u, 3, jj, m) * W(i, um) * W(um, um) + arrival(c1, 1, jj, m) * W(i, um);
      }
      S[i * un + j] = sum;
    }
  for (size_t i = 0; i < un; ++i)
    for (size_t j = 0; j < un; ++j) C2[i * un + j] = S[i * un + j] + S[j * un + i];
  for (size_t i = 0; i < un; ++i) {
    const int ji = static_cast<int>(i) + 1;
    double sum = e.g[i];
    for (int m = std::max(1, ji - 1); m <= std::min(n, ji + 1); ++m) {
      const auto um = static_cast<size_t>(m - 1);
      sum += dq(ji, m) * e.V[um] + 0.5 * arrival(u, 2, ji, m) * W(um, um);
    }
    C2[i * un + i] += sum;
  }
  r.W2 = solve_kronecker_sum(e.A, C2, n, 2);

  // V2: A V2 = -[(1/2) sum_m D2f_.,mm W2_mm + (1/6) sum_m D3f_.,mmm T_mmm
  //              + (1/8) sum_m D4f_.,mmmm W_mm^2 + Dg V + (1/2) sum_m D2g_.,mm W_mm + h].
  std::vector<double> rhs(un);
  for (size_t j = 0; j < un; ++j) {
    const int jj = static_cast<int>(j) + 1;
    double sum = lambda * (c2(x(jj - 1)) - c2(x(jj)));
    for (int m = std::max(1, jj - 1); m <= jj; ++m) {
      const auto um = static_cast<size_t>(m - 1);
      sum += 0.5 * arrival(u, 2, jj, m) * at(r.W2, um, um) +
             arrival(u, 3, jj, m) / 6.0 * T(um, um, um) +
             arrival(u, 4, jj, m) / 8.0 * W(um, um) * W(um, um) + arrival(c1, 1, jj, m) * e.V[um] +
             0.5 * arrival(c1, 2, jj, m) * W(um, um);
    }
    rhs[j] = -sum;
  }
  r.V2 = solve_tridiagonal(e.A, rhs, n);
  return r;
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
