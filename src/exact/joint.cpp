// Joint distribution of the per-type counts (Q_t)_t for a few listed job types (docs/exact.md).
//
// The prefix unions of a state (c_1..c_M) are the unions of the types present so far, so the
// total weight of the states with counts n = (n_t) obeys, with U(n) the union of the types with
// n_t > 0 and rate_t = L p_t (every such state ends in a job of a type t with n_t > 0, whose
// factor in eq. 3 is rate_t / mu(U(n))):
//   P(n) = (1 / mu(U(n))) sum_{t: n_t > 0} rate_t P(n - e_t),   P(0) = C.
// The union is a function of n, so the recursion runs on count vectors alone: a level of total q
// has C(q+k-1, k-1) cells, the grid 0..qmax per axis (qmax+1)^k, and every predecessor of a cell
// of the grid is in the grid.
//
// Order: lexicographic, the first loop axis slowest, so n - e_t is always done before n. Only two
// slabs of the grid are kept (all cells with the same first-axis count): (qmax+1)^(k-1) doubles
// each. The cells are summed into bins as they are made.
//
// Range: the types present in n lie inside U(n), so sum_t rate_t over them is at most lam(U(n)) <
// mu(U(n)) (stability) and P(n) < max_t P(n - e_t) <= C. Nothing overflows, and C itself is
// representable for a handful of types (1/C is a sum over <= 8 unions of products of <= 3 ratios
// rate / slack). Values below the normal double range (2.2e-308) flush to 0 (FlushSubnormals);
// the absolute error this causes in any cell stays below 2.3e-308 / (1 - max lam(U) / mu(U)), far
// below every printed probability.
//
// Subnormals: the cells far from the diagonal decay geometrically through the subnormal range
// (at lambda = 0.9999, 1.6e7 cells of the 9e8 of Fig. 2(d), where every row passes through it)
// before they reach 0, and an operation on a subnormal takes about a hundred times as long as on
// a normal double on x86. With them the Fig. 2(d) panel took 28-30 s of CPU instead of 1.5 s.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/summation.hpp"

namespace qsweep::exact::detail {
namespace {

// Sets flush-to-zero and denormals-are-zero on this thread's SSE unit for its lifetime (x86; a
// no-op elsewhere, where the subnormal cells are merely slow) and restores the previous mode.
class FlushSubnormals {
 public:
#if defined(__x86_64__) || defined(__i386__)
  FlushSubnormals() : saved_(_mm_getcsr()) {
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
  }
  ~FlushSubnormals() { _mm_setcsr(saved_); }

 private:
  static constexpr unsigned kFlushToZero = 0x8000U, kDenormalsAreZero = 0x0040U;
  unsigned saved_;
#else
  FlushSubnormals() = default;
#endif
 public:
  FlushSubnormals(const FlushSubnormals&) = delete;
  FlushSubnormals& operator=(const FlushSubnormals&) = delete;
};

// Along the fastest axis a row is the recurrence v_c = p v_{c-1} + x_c with
// x_c = f_a P(n - e_a) + f_b P(n - e_b). four() makes four cells from v_{c-1} with the powers of
// p, so the loop-carried dependency is one multiply-add per four cells instead of one per cell
// (2.5x faster; every term stays positive, so the rounding is of the same order).
struct RowStep {
  explicit RowStep(const std::array<double, 3>& f)
      : fa(f[0]), fb(f[1]), p(f[2]), p2(p * p), p3(p2 * p), p4(p2 * p2) {}
  double one(double less_a, double less_b, double* cell, double v, double& in_bin) const {
    v = p * v + (fa * less_a + fb * less_b);
    *cell = v;
    in_bin += v;
    return v;
  }
  double four(const double* less_a, const double* less_b, double* cell, double v,
              double& in_bin) const {
    const double x0 = fa * less_a[0] + fb * less_b[0], x1 = fa * less_a[1] + fb * less_b[1];
    const double x2 = fa * less_a[2] + fb * less_b[2], x3 = fa * less_a[3] + fb * less_b[3];
    const double y1 = p * x0 + x1, y2 = p * y1 + x2, y3 = p * y2 + x3;
    cell[0] = p * v + x0;
    cell[1] = p2 * v + y1;
    cell[2] = p3 * v + y2;
    cell[3] = p4 * v + y3;
    in_bin += (cell[0] + cell[1]) + (cell[2] + cell[3]);
    return cell[3];
  }
  double fa, fb, p, p2, p3, p4;
};

}  // namespace

void joint_distribution(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                        double total_rate, double C, int qmax, int bin, Result& out) {
  const FlushSubnormals flush;
  const std::size_t k = types.size();
  const auto width = static_cast<std::size_t>(bin);
  const auto extent = static_cast<std::size_t>(qmax) + 1;
  const std::size_t bins = (extent + width - 1) / width;
  // Loop axes a (slowest), b, c (fastest). One type sits on c, two on a and c, three on a, b, c:
  // the slabs in memory span b and c, so with two types they are rows of qmax + 1 cells.
  constexpr std::size_t kAxisOf[kMaxJointTypes][kMaxJointTypes] = {{2}, {0, 2}, {0, 1, 2}};
  std::array<std::size_t, 3> size{1, 1, 1}, bin_count{1, 1, 1};
  std::array<double, 3> rate{};
  std::array<model::ServerMask, 3> mask{};
  for (std::size_t t = 0; t < k; ++t) {
    const std::size_t axis = kAxisOf[k - 1][t];
    size[axis] = extent;
    bin_count[axis] = bins;
    rate[axis] = total_rate * types[t].p;
    mask[axis] = types[t].servers;
  }
  // factor[s][axis] = rate / mu(U) for the support s (bit i: the count on axis i is > 0).
  std::array<std::array<double, 3>, 8> factor{};
  for (unsigned s = 1; s < 8; ++s) {
    model::ServerMask uni = 0;
    for (std::size_t axis = 0; axis < 3; ++axis)
      if (s >> axis & 1U) uni |= mask[axis];
    double mu = 0.0;
    for (model::ServerMask m = uni; m != 0; m &= m - 1)
      mu += speeds[static_cast<std::size_t>(std::countr_zero(m))];
    for (std::size_t axis = 0; axis < 3; ++axis)
      factor[s][axis] = (s >> axis & 1U) ? rate[axis] / mu : 0.0;
  }

  std::vector<double> grid(bin_count[0] * bin_count[1] * bin_count[2], 0.0);
  const std::size_t row_length = size[2];
  std::vector<double> previous(size[1] * row_length, 0.0), current(previous.size(), 0.0);
  const std::vector<double> zero_row(row_length, 0.0);
  for (std::size_t a = 0; a < size[0]; ++a) {
    for (std::size_t b = 0; b < size[1]; ++b) {
      double* row = &current[b * row_length];
      const double* less_a = &previous[b * row_length];  // n - e_a (zeros while a = 0)
      const double* less_b = b > 0 ? row - row_length : zero_row.data();
      double* bin_row = &grid[((a / width) * bin_count[1] + b / width) * bin_count[2]];
      const unsigned support = (a > 0 ? 1U : 0U) | (b > 0 ? 2U : 0U);
      double v = support == 0 ? C : factor[support][0] * less_a[0] + factor[support][1] * less_b[0];
      row[0] = v;
      const RowStep step(factor[support | 4U]);  // every c > 0
      double in_bin = v;
      std::size_t c = 1;
      for (std::size_t j = 0; j < bin_count[2]; ++j) {
        const std::size_t end = std::min((j + 1) * width, row_length);
        for (; c + 4 <= end; c += 4) v = step.four(less_a + c, less_b + c, row + c, v, in_bin);
        for (; c < end; ++c) v = step.one(less_a[c], less_b[c], row + c, v, in_bin);
        bin_row[j] += in_bin;
        in_bin = 0.0;
      }
    }
    std::swap(previous, current);
  }

  CompensatedSum mass;
  for (double p : grid) mass.add(p);
  out.joint_mass = mass.value();
  out.joint_pmf = std::move(grid);
  out.joint_shape.assign(k, static_cast<std::int64_t>(bins));
}

}  // namespace qsweep::exact::detail
