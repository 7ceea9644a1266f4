#pragma once
// Summation helpers for the exact engines. Every sum in the engines has positive terms only;
// these keep long sums (up to 2^30 terms) accurate and sums of astronomically large or small
// terms (symmetric engines at large N) in range.
#include <cmath>
#include <limits>

namespace qsweep::exact::detail {

// Neumaier's compensated sum: error O(eps) independent of the number of terms.
class CompensatedSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    compensation_ += std::abs(sum_) >= std::abs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + compensation_; }

 private:
  double sum_ = 0.0, compensation_ = 0.0;
};

inline constexpr double kLogZero = -std::numeric_limits<double>::infinity();

// ln(1 + e^x) without overflow or loss for large |x|.
inline double log1p_exp(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Sum of positive terms given by their logarithms: sum = e^log_scale * scaled.
class LogSum {
 public:
  void add_log(double log_term) {
    if (log_term == kLogZero) return;
    if (log_term > log_scale_) {
      scaled_ = scaled_ * std::exp(log_scale_ - log_term) + 1.0;
      log_scale_ = log_term;
    } else {
      scaled_ += std::exp(log_term - log_scale_);
    }
  }
  double log() const { return scaled_ > 0 ? log_scale_ + std::log(scaled_) : kLogZero; }

 private:
  double log_scale_ = kLogZero, scaled_ = 0.0;
};

// Weighted mixture of distributions given by (log weight, mean, variance), merged with Chan's
// pairwise update so that the variance is a sum of non-negative terms (no E[X^2] - E[X]^2).
class Mixture {
 public:
  void add(double log_weight, double mean, double variance) {
    if (log_weight == kLogZero) return;
    double w = 1.0;
    if (weight_ == 0.0) {
      log_scale_ = log_weight;
      weight_ = 1.0;
      mean_ = mean;
      m2_ = variance;
      return;
    }
    if (log_weight > log_scale_) {
      const double shrink = std::exp(log_scale_ - log_weight);
      weight_ *= shrink;
      m2_ *= shrink;
      log_scale_ = log_weight;
    } else {
      w = std::exp(log_weight - log_scale_);
    }
    const double total = weight_ + w;
    const double delta = mean - mean_;
    mean_ += delta * (w / total);
    m2_ += w * variance + delta * delta * (weight_ * w / total);
    weight_ = total;
  }
  bool empty() const { return weight_ == 0.0; }
  double log_weight() const { return log_scale_ + std::log(weight_); }
  double mean() const { return mean_; }
  double variance() const { return m2_ / weight_; }

 private:
  double log_scale_ = kLogZero, weight_ = 0.0, mean_ = 0.0, m2_ = 0.0;
};

}  // namespace qsweep::exact::detail
