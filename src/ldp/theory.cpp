#include "qsweep/ldp/theory.hpp"

#include <algorithm>
#include <cmath>

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
class FluidDrift {
 public:
  FluidDrift(Policy policy, int d, double lambda) : policy_(policy), d_(d), lambda_(lambda) {}

  // dx[i] = lambda * a_{i-1} - (x[i] - x[i+1]) for i = 1..L; a = fraction of arrivals joining a
  // queue of length k.
  void operator()(const std::vector<double>& x, std::vector<double>& dx) {
    const std::size_t top = x.size() - 2;  // L
    arrivals_.assign(x.size(), 0.0);
    auto full = [](double value) { return value >= 1.0 - full_tolerance; };
    switch (policy_) {
      case Policy::jsq: {
        std::size_t m = 0;  // the shortest queues have length m (x[m] = 1 > x[m+1])
        while (m + 1 <= top && full(x[m + 1])) ++m;
        if (m == 0) {
          arrivals_[0] = 1.0;
        } else {
          // queues falling from length m to m - 1 are refilled at once
          arrivals_[m - 1] = std::min((x[m] - x[m + 1]) / lambda_, 1.0);
          arrivals_[m] = 1.0 - arrivals_[m - 1];
        }
        break;
      }
      case Policy::jiq: {
        if (!full(x[1])) {
          arrivals_[0] = 1.0;
        } else {
          arrivals_[0] = std::min((x[1] - x[2]) / lambda_, 1.0);
          for (std::size_t k = 1; k <= top; ++k)
            arrivals_[k] = (1.0 - arrivals_[0]) * (x[k] - x[k + 1]);
        }
        break;
      }
      case Policy::power_of_d:
        for (std::size_t k = 0; k <= top; ++k)
          arrivals_[k] = std::pow(x[k], d_) - std::pow(x[k + 1], d_);
        break;
    }
    dx.assign(x.size(), 0.0);
    for (std::size_t i = 1; i <= top; ++i) dx[i] = lambda_ * arrivals_[i - 1] - (x[i] - x[i + 1]);
  }

 private:
  static constexpr double full_tolerance = 1e-12;
  Policy policy_;
  int d_;
  double lambda_;
  std::vector<double> arrivals_;
};

// Keeps the occupancy a valid non-increasing sequence in [0, 1] (the fluid's faces x_i = 1 are
// reflecting, and a step may overshoot them by O(dt^2)).
void project(std::vector<double>& x) {
  x[0] = 1.0;
  for (std::size_t i = 1; i + 1 < x.size(); ++i) x[i] = std::clamp(x[i], 0.0, x[i - 1]);
  x.back() = 0.0;
}

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

  // x = (1, X_1, ..., X_L, 0) with two (almost) empty levels on top, grown whenever mass gets
  // near them; what flows beyond level L is below `negligible`.
  constexpr double negligible = 1e-15;
  std::vector<double> x{1.0};
  x.insert(x.end(), x0.begin(), x0.end());
  x.insert(x.end(), 3, 0.0);
  FluidDrift drift(policy, d, lambda);
  std::vector<double> k1, k2, k3, k4, stage;
  auto shifted = [&](const std::vector<double>& k, double h) -> const std::vector<double>& {
    stage = x;
    for (std::size_t i = 0; i < x.size(); ++i) stage[i] += h * k[i];
    project(stage);
    return stage;
  };
  auto step = [&](double h) {
    drift(x, k1);
    drift(shifted(k1, h / 2), k2);
    drift(shifted(k2, h / 2), k3);
    drift(shifted(k3, h), k4);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] += h / 6 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
    project(x);
    if (x[x.size() - 3] > negligible) x.insert(x.end() - 1, 0.0);
  };

  std::vector<std::vector<double>> rows;
  double t = 0.0;
  for (double target : times) {
    while (t < target) {
      const double h = std::min(dt, target - t);
      step(h);
      t = target - t <= dt ? target : t + h;
    }
    std::vector<double> row(x.begin() + 1, x.end() - 1);
    while (!row.empty() && row.back() == 0.0) row.pop_back();
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace qsweep::ldp
