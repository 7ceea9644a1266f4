#pragma once
// The sojourn-time law of a job in the N -> infinity limit of the meanfield method
// (docs/meanfield.md, "Sojourn-time distribution"): P(T > t) and its quantiles.
//   power_of_d (d >= 2): a job joins a queue of k jobs with probability x_k^d - x_{k+1}^d (all d
//     sampled queues hold >= k jobs, not all >= k + 1) and leaves after k + 1 Exp(1) services
//     (FCFS, nothing overtakes it), so P(T > t) = sum_k (x_k^d - x_{k+1}^d) P(Erlang(k + 1) > t)
//     = sum_{j >= 0} P(Poisson(t) = j) x_j^d, with x_j^d = x_{j+1} / lambda = lambda^(d (d^j - 1)
//     / (d - 1));
//   random, power_of_d and redundancy_coc with d = 1 (M/M/1 queues): exp(-(1 - lambda) t);
//   jsq, jiq: exp(-t) (x_2 = 0: every job finds an idle server and waits for nothing);
//   redundancy_coc (d >= 2): (lambda + (1 - lambda) e^{(d-1) t})^{-d/(d-1)} (Gardner et al. 2017).
#include <vector>

#include "qsweep/meanfield/meanfield.hpp"

namespace qsweep::meanfield {

class SojournLaw {
 public:
  // lambda in (0, 1), d >= 1 (used by power_of_d and redundancy_coc).
  SojournLaw(Policy policy, int d, double lambda);

  // P(T > t), t >= 0: relative error of a few ulps times the number of terms (power_of_d) or
  // times |log P| (the closed forms).
  double survival(double t) const;
  // The p-quantile, p in (0, 1): the t with P(T > t) = 1 - p (closed forms; power_of_d by the
  // TOMS 748 root of log P(T > t) - log(1 - p), to a relative 4e-16 or so).
  double quantile(double p) const;

  // power_of_d with d >= 2: x_j^d = P(a job joins a queue of >= j jobs), j = 0, 1, ... while
  // above 1e-300 (empty for the closed forms).
  const std::vector<double>& joins_at_least() const { return at_least_; }

 private:
  enum class Form { erlang_mixture, exponential, redundancy };
  Form form_;
  double rate_ = 1.0;  // exponential: P(T > t) = exp(-rate t)
  int d_ = 1;
  double lambda_;
  std::vector<double> at_least_;
};

// P(T > t) at each of `times` and the quantiles at each of `levels` of the law of `options`
// (Result::T_tail, Result::T_quantile).
std::vector<double> sojourn_tail(const Options& options, const std::vector<double>& times);
std::vector<double> sojourn_quantiles(const Options& options, const std::vector<double>& levels);

}  // namespace qsweep::meanfield
