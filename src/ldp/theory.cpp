#include "qsweep/ldp/theory.hpp"

#include <algorithm>
#include <boost/numeric/odeint/stepper/runge_kutta_cash_karp54.hpp>
#include <cmath>
#include <cstdint>
#include <functional>

#include "qsweep/common/error.hpp"

namespace qsweep::ldp {

namespace {

// Tilt y with lambda*y - 1/y = b.
double tilt_for_speed(double b, double lambda) {
  return (b + std::sqrt(b * b + 4.0 * lambda)) / (2.0 * lambda);
}

void check_event(int j, double T, double lambda) {
  if (j < 2) throw InputError("ldp theory: j must be >= 2");
  if (!(T > 0.0)) throw InputError("ldp theory: T must be > 0");
  if (!(lambda > 0.0)) throw InputError("ldp theory: lambda must be > 0");
}

}  // namespace

double path_cost(double b, double lambda) {
  // b log y - sqrt(b^2 + 4 lambda) + lambda + 1, rearranged without cancellation for small b:
  // log y = asinh(b / (2 sqrt(lambda))) - log(lambda) / 2 and
  // sqrt(b^2 + 4 lambda) - 2 sqrt(lambda) = b^2 / (sqrt(b^2 + 4 lambda) + 2 sqrt(lambda)).
  const double root_lambda = std::sqrt(lambda);
  const double root = std::sqrt(b * b + 4.0 * lambda);
  return b * (std::asinh(b / (2.0 * root_lambda)) - 0.5 * std::log(lambda)) -
         b * b / (root + 2.0 * root_lambda) + (1.0 - root_lambda) * (1.0 - root_lambda);
}

double decay_rate(int j, double T) { return decay_rate_fixed_lambda(j, T, 1.0); }

double decay_rate_fixed_lambda(int j, double T, double lambda) {
  check_event(j, T, lambda);
  const double c = j - 2;
  const double b = c / T;
  if (lambda < 1.0 && b < 1.0 - lambda) return c * std::log(1.0 / lambda);
  if (lambda > 1.0 && b <= lambda - 1.0) return 0.0;
  return T * path_cost(b, lambda);
}

double decay_rate_large_T(int j, double T) {
  check_event(j, T, 1.0);
  const double c = j - 2;
  return c * c / (4.0 * T);
}

double optimal_tilt(int j, double T, double lambda) {
  check_event(j, T, lambda);
  const double b = (j - 2) / T;
  if (lambda > 1.0 && b <= lambda - 1.0) return 1.0;
  return tilt_for_speed(lambda < 1.0 ? std::max(b, 1.0 - lambda) : b, lambda);
}

namespace {

// Fluid occupancy x[i] = X_i for i = 0..L+1 with x[0] = 1 and x[L+1] = 0.
//
// jsq and jiq are piecewise smooth: on a face (x_1 = .. = x_m = 1, jsq; x_1 = 1, jiq) the
// arrivals refill the queues that fall below it, which the vector field off the face does not do.
// A fixed step across the face's entry or exit is first order there (1e-4 .. 3e-3 off after
// the face at dt = 1e-3), so the regime m (the number of full levels that hold) is carried
// along, each step uses the smooth vector field of its regime, and a step in which the regime
// changes is cut at the change, located by bisection of the step to the rounding of t:
//   - entry: x_{m+1} reaches 1 (it is set to 1 exactly, regime m + 1);
//   - exit (m >= 1): the queues leaving level m, x_m - x_{m+1}, outrun the arrivals,
//     x_m - x_{m+1} > lambda (jiq: 1 - x_2 > lambda), regime m - 1.
// Within a regime the field is a polynomial in x, integrated by the Runge-Kutta-Fehlberg 7(8)
// stepper of Boost.Odeint at a fixed step dt (eighth order): at dt = 1e-3 the truncation error is
// far below the rounding.
class FluidDrift {
 public:
  FluidDrift(Policy policy, int d, double lambda) : policy_(policy), d_(d), lambda_(lambda) {}

  int regime = 0;  // full levels that hold (jsq: 0..L, jiq: 0 or 1, power_of_d: 0)

  // dx[i] = lambda * a_{i-1} - (x[i] - x[i+1]) for i = 1..L; a = fraction of arrivals joining a
  // queue of length k. The full levels of the regime do not move.
  void operator()(const std::vector<double>& x, std::vector<double>& dx, double /*t*/) {
    const std::size_t top = x.size() - 2;  // L
    const auto m = static_cast<std::size_t>(regime);
    arrivals_.assign(x.size(), 0.0);
    switch (policy_) {
      case Policy::jsq:
        if (m == 0) {
          arrivals_[0] = 1.0;
        } else {
          // queues falling from length m to m - 1 are refilled at once
          arrivals_[m - 1] = (x[m] - x[m + 1]) / lambda_;
          arrivals_[m] = 1.0 - arrivals_[m - 1];
        }
        break;
      case Policy::jiq:
        if (m == 0) {
          arrivals_[0] = 1.0;
        } else {
          arrivals_[0] = (x[1] - x[2]) / lambda_;
          for (std::size_t k = 1; k <= top; ++k)
            arrivals_[k] = (1.0 - arrivals_[0]) * (x[k] - x[k + 1]);
        }
        break;
      case Policy::power_of_d:
        for (std::size_t k = 0; k <= top; ++k)
          arrivals_[k] = std::pow(x[k], d_) - std::pow(x[k + 1], d_);
        break;
    }
    dx.assign(x.size(), 0.0);
    for (std::size_t i = m + 1; i <= top; ++i)
      dx[i] = lambda_ * arrivals_[i - 1] - (x[i] - x[i + 1]);
  }

  // The regime of a state at the start: the leading levels equal to 1 that hold.
  int regime_of(const std::vector<double>& x) const {
    if (policy_ == Policy::power_of_d) return 0;
    const std::size_t top = x.size() - 2;
    std::size_t m = 0;
    while (m + 1 <= top && x[m + 1] == 1.0) ++m;
    if (policy_ == Policy::jiq) m = std::min<std::size_t>(m, 1);
    while (m >= 1 && x[m] - x[m + 1] > lambda_) --m;
    return static_cast<int>(m);
  }

  // Whether the regime changes between the start of a step and `x`: 0 no, +1 entry, -1 exit.
  int change(const std::vector<double>& x) const {
    if (policy_ == Policy::power_of_d) return 0;
    const auto m = static_cast<std::size_t>(regime);
    if (m >= 1 && x[m] - x[m + 1] > lambda_) return -1;
    // An entry needs a face that holds: a level that starts at 1 without it leaves at once.
    const bool can_enter = (policy_ == Policy::jsq || m == 0) && m + 1 <= x.size() - 2;
    if (can_enter && x[m + 1] >= 1.0 && x[m + 1] - x[m + 2] <= lambda_) return +1;
    return 0;
  }

 private:
  Policy policy_;
  int d_;
  double lambda_;
  std::vector<double> arrivals_;
};

}  // namespace

std::vector<std::vector<double>> fluid_trajectory(Policy policy, int d, double lambda,
                                                  const std::vector<double>& x0,
                                                  const std::vector<double>& times, double dt) {
  if (!(lambda > 0.0)) throw InputError("fluid trajectory: lambda must be > 0");
  if (!(dt > 0.0)) throw InputError("fluid trajectory: dt must be > 0");
  if (policy == Policy::power_of_d && d < 1) throw InputError("fluid trajectory: d must be >= 1");
  for (std::size_t i = 0; i < x0.size(); ++i)
    if (!(x0[i] >= 0.0 && x0[i] <= (i == 0 ? 1.0 : x0[i - 1])))
      throw InputError("fluid trajectory: x0 must be non-increasing in [0, 1]");
  if (!std::is_sorted(times.begin(), times.end()) || (!times.empty() && times[0] < 0.0))
    throw InputError("fluid trajectory: times must be non-decreasing and >= 0");

  // x = (1, X_1, ..., X_L, 0) with kMargin (almost) empty levels on top, grown whenever mass
  // gets near them, so that what flows beyond level L within a step is below `negligible`: on a
  // face of jiq mass climbs one level per order of t (X_{k+2} ~ (c t)^k / k!), and with two empty
  // levels the level cut off in the first step after the entry was 4e-11 (X_3 off by 5e-13 later).
  constexpr double negligible = 1e-15;
  constexpr std::size_t kMargin = 8;
  std::vector<double> x{1.0};
  x.insert(x.end(), x0.begin(), x0.end());
  x.insert(x.end(), kMargin + 1, 0.0);
  FluidDrift drift(policy, d, lambda);
  drift.regime = drift.regime_of(x);
  // The state is x + low (a compensated sum): a step adds an increment of order dt to x, and
  // rounding x + increment every step drifts by up to eps |x| per step (2e-13 over 9000 steps
  // where the increment is the same each step, as on a face). A step integrates z = the
  // increment from 0, with the field evaluated at x + z, so z keeps its own relative precision.
  std::vector<double> low(x.size(), 0.0), z, at;
  auto shifted = [&](const std::vector<double>& increment, std::vector<double>& dz, double t) {
    at.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) at[i] = x[i] + increment[i];
    drift(at, dz, t);
  };
  boost::numeric::odeint::runge_kutta_cash_karp54<std::vector<double>> stepper;
  std::vector<double> trial;
  auto rk = [&](double h) {
    z.assign(x.size(), 0.0);
    stepper.do_step(shifted, z, 0.0, h);
    trial.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) trial[i] = x[i] + (z[i] + low[i]);
  };
  // One step of at most h; returns the length taken (shorter if the regime changes in it).
  auto step = [&](double h) {
    rk(h);
    int change = drift.change(trial);
    if (change != 0) {
      double lo = 0.0, hi = h;  // no change after lo, a change after hi
      while (hi - lo > 1e-16 * std::max(1.0, hi)) {
        const double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi) break;
        rk(mid);
        (drift.change(trial) != 0 ? hi : lo) = mid;
      }
      h = hi;
      rk(h);
      change = drift.change(trial);
    }
    for (std::size_t i = 0; i < x.size(); ++i) {  // (x, low) += z, two-sum
      const double y = z[i] + low[i], sum = x[i] + y, back = sum - x[i];
      low[i] = (x[i] - (sum - back)) + (y - back);
      x[i] = sum;
    }
    if (change == +1) {
      const auto level = static_cast<std::size_t>(drift.regime) + 1;
      x[level] = 1.0;
      low[level] = 0.0;
      ++drift.regime;
    } else if (change == -1) {
      --drift.regime;
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double before = x[i];
      if (i == 0 || i + 1 == x.size())
        x[i] = i == 0 ? 1.0 : 0.0;
      else
        x[i] = std::clamp(x[i], 0.0, x[i - 1]);
      if (x[i] != before) low[i] = 0.0;
    }
    if (x[x.size() - 1 - kMargin] > negligible) {
      while (x[x.size() - 1 - kMargin] > negligible) {
        x.insert(x.end() - 1, 0.0);
        low.insert(low.end() - 1, 0.0);
      }
      stepper.adjust_size(x);
    }
    return h;
  };

  std::vector<std::vector<double>> rows;
  double t = 0.0;
  // t = base + steps x dt since the last event or output time (one rounding, not one per step:
  // summing dt 9000 times put t 4e-13 off, x_2 of jsq on its face 4e-14).
  double base = 0.0;
  std::int64_t steps = 0;
  for (double target : times) {
    while (t < target) {
      const double h = std::min(dt, target - t);
      const double taken = step(h);
      if (taken < h) {  // cut at a change of regime
        t += taken;
        base = t;
        steps = 0;
      } else if (h < dt) {
        t = target;
      } else {
        t = std::min(target, base + static_cast<double>(++steps) * dt);
      }
    }
    base = t;
    steps = 0;
    std::vector<double> row(x.begin() + 1, x.end() - 1);
    while (!row.empty() && row.back() == 0.0) row.pop_back();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace qsweep::ldp
