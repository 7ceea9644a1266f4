#include "qsweep/sim/simulate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/math/distributions/fisher_f.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "qsweep/common/error.hpp"
#include "sampling.hpp"

namespace qsweep::sim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMaxReplications = 1'000'000;
constexpr double kMaxEvents = 1e18;
constexpr int kMaxDistributionLength = 1'000'000;
// Replicated batch means: the observation after truncation is cut into this many batch means per
// replication (docs/sim.md, "Output analysis").
constexpr int kBatchMeans = 32;
// Diagnostics (docs/sim.md, "Output analysis"): the one-sided level of the von Neumann test of
// the batch means' lag-1 correlation, the level of the F test of the replications' means against
// the within-run variance, and the batch length against the integrated autocorrelation time.
constexpr double kCorrelationLevel = 0.05;
constexpr double kDisagreementLevel = 0.01;
// 40, not the 10 that bounds the lag-1 correlation of batch means by 0.05: on shorter runs the
// time average of a queue is skewed (a long excursion raises the estimate and its variance
// together), so low estimates come with small half-widths. Stopping at the first round that
// passed with 10 gave the M/M/1 and the redundancy ring N = 4 at rho = 0.8 errors of 1.13 standard
// errors (sd over 200 intervals) and 0.905 to 0.91 coverage; with 40, 0.95 to 0.99 and 0.945 to
// 0.965 at rho = 0.5, 0.8, 0.9 (docs/sim.md, "Coverage").
constexpr double kBatchesPerCorrelationTime = 40.0;

// Lengths of the distribution's lists (a column each in the results file) and of the transient
// mode's times.
constexpr std::size_t kMaxDistributionPoints = 1000;
constexpr std::size_t kMaxObserveTimes = 100'000;

// A list of increasing finite values in [lo, hi] (lo or hi excluded when open), at most `max`.
void validate_increasing(const std::vector<double>& values, std::string_view name,
                         std::string_view what, double lo, bool lo_open, double hi, bool hi_open,
                         std::size_t max) {
  const std::string expected = fmt::format("increasing {} in {}{:g}, {:g}{}", what,
                                           lo_open ? '(' : '[', lo, hi, hi_open ? ')' : ']');
  if (values.size() > max)
    throw InputError(fmt::format("{}: {} values; expected at most {}", name, values.size(), max));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double x = values[i];
    const bool inside =
        std::isfinite(x) && (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
    if (!inside)
      throw InputError(fmt::format("{}: value {} is {}; expected {}", name, i + 1, x, expected));
    if (i > 0 && !(x > values[i - 1]))
      throw InputError(
          fmt::format("{}: value {} is {}, not above the one before it ({}); expected {}", name,
                      i + 1, x, values[i - 1], expected));
  }
}

void validate_service(const Service& s) {
  const bool finite_cv2 = std::isfinite(s.cv2);
  if (s.kind == ServiceKind::hyperexponential && !(finite_cv2 && s.cv2 >= 1.0))
    throw InputError(
        fmt::format("service hyperexponential: cv2 = {}; expected a finite value >= 1", s.cv2));
  if (s.kind != ServiceKind::hyperexponential && s.cv2 != 1.0)
    throw InputError("service: cv2 applies only to hyperexponential service");
  if (s.kind != ServiceKind::empirical) {
    if (!s.values.empty() || !s.weights.empty())
      throw InputError("service: values and weights apply only to empirical service");
    return;
  }
  if (s.values.empty() || (!s.weights.empty() && s.values.size() != s.weights.size()))
    throw InputError(
        fmt::format("service empirical: {} values and {} weights; expected at least "
                    "one value and as many weights (or none: uniform)",
                    s.values.size(), s.weights.size()));
  for (std::size_t i = 0; i < s.values.size(); ++i)
    if (!(std::isfinite(s.values[i]) && s.values[i] > 0.0))
      throw InputError(fmt::format("service empirical: value {} is {}; expected a finite value > 0",
                                   i + 1, s.values[i]));
  if (s.weights.empty()) return;
  double total = 0.0;
  for (std::size_t i = 0; i < s.weights.size(); ++i) {
    if (!(std::isfinite(s.weights[i]) && s.weights[i] >= 0.0))
      throw InputError(fmt::format(
          "service empirical: weight {} is {}; expected a finite value >= 0", i + 1, s.weights[i]));
    total += s.weights[i];
  }
  if (std::abs(total - 1.0) > 1e-9)
    throw InputError(fmt::format("service empirical: weights sum to {:.12g}; expected 1", total));
}

// Running means and centred co-moments of a pair (a, b) over replications (Welford's update):
// numerically stable for the mean of a, the ratio mean(a) / mean(b) and mean(b) - mean(a)^2.
struct PairMoments {
  double n = 0.0, mean_a = 0.0, mean_b = 0.0, caa = 0.0, cab = 0.0, cbb = 0.0;
  void add(double a, double b = 0.0) {
    n += 1.0;
    const double da = a - mean_a, db = b - mean_b;
    mean_a += da / n;
    mean_b += db / n;
    caa += da * (a - mean_a);
    cab += da * (b - mean_b);
    cbb += db * (b - mean_b);
  }
  // Half-width t * sd / sqrt(n) of the mean of a.
  double mean_hw(double t) const { return t * std::sqrt(caa / (n - 1.0) / n); }
  // mean(a) / mean(b), with the delta-method half-width of the ratio estimator.
  double ratio() const { return mean_b > 0.0 ? mean_a / mean_b : kNaN; }
  double ratio_hw(double t) const {
    const double r = ratio();
    const double s2 = (caa - 2.0 * r * cab + r * r * cbb) / (n - 1.0);
    return t * std::sqrt(std::max(s2, 0.0) / n) / mean_b;
  }
  // mean(b) - mean(a)^2 (a variance from first and second moments), delta-method half-width.
  double variance() const { return mean_b - mean_a * mean_a; }
  double variance_hw(double t) const {
    const double g = 2.0 * mean_a;
    const double s2 = (cbb - 2.0 * g * cab + g * g * caa) / (n - 1.0);
    return t * std::sqrt(std::max(s2, 0.0) / n);
  }
};

// The running mean and centred second moment of one value per replication (Welford), 16 B: the
// per-server estimates keep one per server and candidate window (docs/sim.md, "Limits").
struct Moments {
  double mean = 0.0, m2 = 0.0;
  void add(double x, double n) {  // n: the count including x
    const double delta = x - mean;
    mean += delta / n;
    m2 += delta * (x - mean);
  }
};

void add_all(std::vector<Moments>& moments, const std::vector<double>& values, double n) {
  moments.resize(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) moments[i].add(values[i], n);
}

// Means with the half-widths t sd / sqrt(n) over n replications.
void means_with_hw(const std::vector<Moments>& moments, double n, double t,
                   std::vector<double>& mean, std::vector<double>& hw) {
  mean.reserve(mean.size() + moments.size());
  hw.reserve(hw.size() + moments.size());
  for (const Moments& m : moments) {
    mean.push_back(m.mean);
    hw.push_back(t * std::sqrt(m.m2 / (n - 1.0) / n));
  }
}

double student_t(int replications, double two_sided_level) {
  const boost::math::students_t_distribution<double> t(replications - 1.0);
  return boost::math::quantile(t, 0.5 + two_sided_level / 2.0);
}

// Sums of the products of two linear forms x_a - theta x_b and y_a - theta y_b over pairs, as a
// quadratic in theta (the residuals of a ratio estimator, whose theta is known only at the end).
struct Quadratic {
  double aa = 0.0, ab = 0.0, bb = 0.0;
  void add(double xa, double xb, double ya, double yb) {
    aa += xa * ya;
    ab += (xa * yb + xb * ya) / 2.0;
    bb += xb * yb;
  }
  double at(double theta) const { return aa - 2.0 * theta * ab + theta * theta * bb; }
};

// What the batch means of one estimate say (docs/sim.md, "Output analysis").
struct BatchDiagnosis {
  double estimate = kNaN, hw = kNaN;
  double within_variance = kNaN;  // of one batch mean, pooled within replications
  bool correlated = false, disagree = false;
};

// Replicated batch means (Argon and Andradottir 2006) of a ratio sum(a) / sum(b) over the batches
// of all replications (b = 1: a time average); the interval from the residuals a - theta b of all
// R m batch means (delta method), the von Neumann test of their lag-1 correlation within the
// replications, and the F test of the replications' own means against the within-run variance.
class RatioBatchMeans {
 public:
  // m batch pairs of one replication.
  void add(const std::vector<double>& a, const std::vector<double>& b) {
    const auto m = static_cast<double>(a.size());
    m_ = a.size();
    ++replications_;
    double mean_a = 0.0, mean_b = 0.0;
    for (std::size_t j = 0; j < a.size(); ++j) {
      mean_a += a[j] / m;
      mean_b += b[j] / m;
      total_.add(a[j], b[j], a[j], b[j]);
    }
    sum_a_ += mean_a * m;
    sum_b_ += mean_b * m;
    between_.add(mean_a, mean_b, mean_a, mean_b);
    const auto da = [&](std::size_t j) { return a[j] - mean_a; };
    const auto db = [&](std::size_t j) { return b[j] - mean_b; };
    for (std::size_t j = 0; j < a.size(); ++j) {
      within_.add(da(j), db(j), da(j), db(j));
      if (j + 1 < a.size()) lag_.add(da(j), db(j), da(j + 1), db(j + 1));
    }
    ends_.add(da(0), db(0), da(0), db(0));
    ends_.add(da(m_ - 1), db(m_ - 1), da(m_ - 1), db(m_ - 1));
  }

  BatchDiagnosis diagnose() const {
    BatchDiagnosis d;
    const double R = replications_, m = static_cast<double>(m_), n = R * m;
    if (!(sum_b_ > 0.0) || R < 2.0) return d;
    const double theta = sum_a_ / sum_b_;
    d.estimate = theta;
    // The residuals have mean 0: their variance around it over all R m batch means.
    const double variance = std::max(total_.at(theta), 0.0) / (n - 1.0);
    const double mean_b = sum_b_ / n;
    const boost::math::students_t_distribution<double> t(n - 1.0);
    d.hw = boost::math::quantile(t, 0.975) * std::sqrt(variance / n) / mean_b;
    const double within = within_.at(theta);
    d.within_variance = within / (R * (m - 1.0)) / (mean_b * mean_b);
    if (!(within > 0.0)) return d;
    // Von Neumann's ratio: 1 - sum (e_j - e_j+1)^2 / (2 sum (e_j - mean)^2), pooled over the
    // replications; without correlation about N(0, (m - 2) / ((m^2 - 1) R)).
    const double c = (ends_.at(theta) / 2.0 + lag_.at(theta)) / within;
    const double sd = std::sqrt((m - 2.0) / ((m * m - 1.0) * R));
    const boost::math::normal_distribution<double> normal;
    d.correlated = c / sd > boost::math::quantile(normal, 1.0 - kCorrelationLevel);
    // Between replications, m times the variance of their means, against within.
    const double between = m * std::max(between_.at(theta), 0.0) / (R - 1.0);
    const boost::math::fisher_f_distribution<double> f(R - 1.0, R * (m - 1.0));
    d.disagree =
        between / (within / (R * (m - 1.0))) > boost::math::quantile(f, 1.0 - kDisagreementLevel);
    return d;
  }

 private:
  std::size_t m_ = 0;
  double replications_ = 0.0, sum_a_ = 0.0, sum_b_ = 0.0;
  Quadratic total_, between_, within_, lag_, ends_;
};

// Everything the replications contribute to the Result.
class Estimates {
 public:
  // The sojourn-time quantile levels and tail times of `o` (which outlives this).
  void configure(const Options& o) {
    levels_ = &o.quantiles;
    quantile_.resize(o.quantiles.size());
    tail_.resize(o.tail_times.size());
  }

  void add(const ReplicationStats& s) {
    const double n = replications_ + 1.0;
    Q_.add(s.mean_Q, s.mean_Q2);
    T_.add(s.sojourn_sum, static_cast<double>(s.sojourn_count));
    add_all(pmf_, s.pmf, n);
    add_all(occupancy_, s.occupancy, n);
    add_all(Q_type_, s.mean_Q_type, n);
    T_type_.resize(s.sojourn_sum_type.size());
    for (std::size_t k = 0; k < T_type_.size(); ++k)
      T_type_[k].add(s.sojourn_sum_type[k], static_cast<double>(s.sojourn_count_type[k]));
    add_all(R_, s.mean_R, n);
    add_all(busy_, s.utilisation, n);
    pooled_servers_ = s.pooled_servers;
    const std::vector<double> quantiles = s.sojourn.quantiles(*levels_);
    for (std::size_t i = 0; i < quantile_.size(); ++i) quantile_[i].add(quantiles[i]);
    for (std::size_t i = 0; i < tail_.size(); ++i)
      tail_[i].add(s.sojourn_above[i], static_cast<double>(s.sojourn_count));
    pooled_.merge(s.sojourn);
    events_ += s.events;
    if (s.observed_events == 0) ++quiet_replications_;
    ++replications_;
  }

  // N: the number of servers (pooled replications give one E[R_n] and utilisation for all).
  Result result(int N) const {
    const double t95 = student_t(replications_, 0.95);
    const double n = replications_;
    Result r;
    r.EQ = Q_.mean_a;
    r.EQ_hw = Q_.mean_hw(t95);
    r.VarQ = Q_.variance();
    r.VarQ_hw = Q_.variance_hw(t95);
    r.ET = T_.ratio();
    r.ET_hw = T_.ratio_hw(t95);
    means_with_hw(pmf_, n, t95, r.pmf, r.pmf_hw);
    means_with_hw(occupancy_, n, t95, r.occupancy, r.occupancy_hw);
    means_with_hw(Q_type_, n, t95, r.EQ_type, r.EQ_type_hw);
    for (const PairMoments& m : T_type_) {
      r.ET_type.push_back(m.ratio());
      r.ET_type_hw.push_back(m.ratio_hw(t95));
    }
    std::vector<double> R, R_hw, busy, busy_hw;
    means_with_hw(R_, n, t95, R, R_hw);
    means_with_hw(busy_, n, t95, busy, busy_hw);
    const auto per_server = [this, N](std::vector<double>& values) {
      return pooled_servers_ ? ServerValues(values.front(), static_cast<std::size_t>(N))
                             : ServerValues(std::move(values));
    };
    r.ER_server = per_server(R);
    r.ER_server_hw = per_server(R_hw);
    r.utilisation = per_server(busy);
    r.utilisation_hw = per_server(busy_hw);
    // Sectioning: the point estimate from all replications pooled, the spread from each one's.
    r.T_quantile = pooled_.quantiles(*levels_);
    for (const PairMoments& m : quantile_) r.T_quantile_hw.push_back(m.mean_hw(t95));
    // P(T > t): the sojourn times above t over all of them, a ratio estimator (delta method).
    for (const PairMoments& m : tail_) {
      r.T_tail.push_back(m.ratio());
      r.T_tail_hw.push_back(m.ratio_hw(t95));
    }
    r.replications = replications_;
    r.quiet_replications = quiet_replications_;
    r.hw99_factor = student_t(replications_, 0.99) / t95;
    r.events = events_;
    return r;
  }

 private:
  const std::vector<double>* levels_ = nullptr;  // quantile levels
  PairMoments Q_;                                // (Q, Q^2) time averages
  PairMoments T_;                                // (sum of sojourn times, their number)
  std::vector<Moments> pmf_, occupancy_, Q_type_, R_, busy_;
  std::vector<PairMoments> T_type_;
  std::vector<PairMoments> quantile_;  // each replication's quantile at each level
  std::vector<PairMoments> tail_;      // (sojourn times above t, their number) at each tail time
  SojournHistogram pooled_;
  std::uint64_t events_ = 0;
  int replications_ = 0;
  int quiet_replications_ = 0;
  bool pooled_servers_ = false;
};

// The batch means of one window of a replication: the series from batch `first` on, summed in
// kBatchMeans equal groups (divided by the group's size if `mean`).
std::vector<double> group(const std::vector<double>& series, std::size_t first, bool mean) {
  const std::size_t size = (series.size() - first) / kBatchMeans;
  std::vector<double> groups(kBatchMeans, 0.0);
  for (std::size_t j = 0; j < groups.size(); ++j) {
    for (std::size_t i = 0; i < size; ++i) groups[j] += series[first + j * size + i];
    if (mean) groups[j] /= static_cast<double>(size);
  }
  return groups;
}

constexpr std::size_t kWindows = kTruncationBatches.size();

// Every replication run once over [warmup, warmup + horizon] with the series of batch statistics,
// and the estimates for each window that a truncation may keep.
class Round {
 public:
  Round(const model::System& system, const Options& options, std::uint64_t seed,
        std::uint64_t task_id, double horizon, Kernel kernel)
      : horizon_(horizon), ensemble_Q_(kSeriesBatches, 0.0) {
    const ReplicationPlan plan{std::max(options.warmup, 0.0), horizon, kSeriesBatches};
    const std::vector<double> ones(kBatchMeans, 1.0);
    for (Estimates& e : estimates_) e.configure(options);
    if (options.coupled_streams()) cumulative_batches_ = grid_batches(options.horizon, horizon);
    for (int r = 0; r < options.replications; ++r) {
      const ReplicationStats stats = run_replication(system, options, seed, task_id,
                                                     static_cast<std::uint64_t>(r), plan, kernel);
      events += stats.events;
      add_cumulative(stats);
      for (std::size_t i = 0; i < ensemble_Q_.size(); ++i) ensemble_Q_[i] += stats.batch_Q[i];
      for (std::size_t k = 0; k < kWindows; ++k) {
        const auto first = static_cast<std::size_t>(kTruncationBatches[k]);
        estimates_[k].add(k == 0 ? stats : stats.truncated[k - 1]);
        const std::vector<double> Q = group(stats.batch_Q, first, true);
        const std::vector<double> T_sum = group(stats.batch_T_sum, first, false);
        const std::vector<double> T_count = group(stats.batch_T_count, first, false);
        Q_[k].add(Q, ones);
        T_[k].add(T_sum, T_count);
        // The replication's own estimates over the window, for paired comparisons.
        replication_Q_[k].push_back(std::accumulate(Q.begin(), Q.end(), 0.0) / kBatchMeans);
        replication_T_[k].push_back(std::accumulate(T_sum.begin(), T_sum.end(), 0.0) /
                                    std::accumulate(T_count.begin(), T_count.end(), 0.0));
      }
    }
  }

  // The estimates after the truncation MSER-5 finds on the mean series of the replications,
  // rounded up to the next window's start, with the flags of its diagnostics.
  Result result(const model::System& system, const Options& options) const {
    const double batch = horizon_ / kSeriesBatches;
    const double cut = mser5_warmup(ensemble_Q_, batch, options.start == Start::empty);
    std::size_t k = 0;
    while (kTruncationBatches[k] * batch < cut) ++k;
    const double kept = horizon_ - kTruncationBatches[k] * batch;
    Result r = estimates_[k].result(system.N());
    const BatchDiagnosis Q = Q_[k].diagnose(), T = T_[k].diagnose();
    r.EQ = Q.estimate;
    r.EQ_hw = Q.hw;
    r.ET = T.estimate;
    r.ET_hw = T.hw;
    r.EQ_replications = replication_Q_[k];
    r.ET_replications = replication_T_[k];
    for (const int b : cumulative_batches_)
      r.cumulative_time.push_back(horizon_ / kSeriesBatches * b);
    r.cumulative_replications = cumulative_;
    // The truncation may take half the run: at that cap the transient may not be over.
    if (cut >= mser5_max_warmup(kSeriesBatches, batch)) r.flags |= flag_warmup_not_over;
    if (Q.correlated || T.correlated) r.flags |= flag_correlated;
    if (Q.disagree || T.disagree) r.flags |= flag_replications_disagree;
    // Integrated autocorrelation time of Q: (batch length) x (variance of a batch mean) /
    // (2 Var[Q]); a batch shorter than kBatchesPerCorrelationTime of it is too short.
    r.correlation_time = kept / kBatchMeans * Q.within_variance / (2.0 * r.VarQ);
    if (r.correlation_time * kBatchesPerCorrelationTime > kept / kBatchMeans)
      r.flags |= flag_short_run;
    const JobTypes types(system.family);
    for (const model::JobType& type : types.tracked()) {
      r.type_servers.push_back(type.servers);
      r.type_p.push_back(type.p);
    }
    r.warmup = std::max(options.warmup, 0.0) + (horizon_ - kept);
    r.warmup_detected = options.warmup < 0.0;
    r.horizon = kept;
    return r;
  }

  std::uint64_t events = 0;

 private:
  // The ends (in batches of the series) of the grid first_horizon x 2^i, i = -4 .. this round,
  // that lie on a batch boundary of this round's series: every window of every round starts or
  // ends on the grid (docs/sim.md, "Common random numbers").
  static std::vector<int> grid_batches(double first_horizon, double horizon) {
    std::vector<int> ends{kSeriesBatches};
    for (double length = horizon; length > first_horizon / 16.0 && ends.front() > 1; length /= 2.0)
      ends.insert(ends.begin(), ends.front() / 2);
    return ends;
  }

  // The replication's totals from the start of the observation to each grid time, summed from
  // its batch series (each batch mean of Q times the batch length).
  void add_cumulative(const ReplicationStats& stats) {
    const double batch = horizon_ / kSeriesBatches;
    double area = 0.0, sum = 0.0, count = 0.0;
    std::size_t b = 0;
    for (const int end : cumulative_batches_) {
      for (; b < static_cast<std::size_t>(end); ++b) {
        area += stats.batch_Q[b];
        sum += stats.batch_T_sum[b];
        count += stats.batch_T_count[b];
      }
      cumulative_.insert(cumulative_.end(), {area * batch, sum, count});
    }
  }

  double horizon_;
  std::vector<int> cumulative_batches_;  // empty without coupled streams
  std::vector<double> cumulative_;       // per replication and grid time: Q area, T sum, T count
  std::vector<double> ensemble_Q_;       // sum over the replications of the batch means of Q
  std::array<Estimates, kWindows> estimates_;
  std::array<RatioBatchMeans, kWindows> Q_, T_;
  std::array<std::vector<double>, kWindows> replication_Q_, replication_T_;
};

// Warning thresholds (docs/sim.md, "Warnings").
// A stable system leaves every server idle a fraction 1 - load > 0 of the time. Within 1e-6 of
// saturation an M/M/1 relaxes over about 4 / (1 - load)^2 = 4e12 time units: no run reaches its
// steady state, so an idle fraction this small means unstable, or as good as unstable.
constexpr double kSaturatedIdleFraction = 1e-6;
// With R replications a half-width rests on R - 1 degrees of freedom: below 4 its own relative
// error, about 1 / sqrt(2 (R - 1)), exceeds 35% and t_{0.975} exceeds 2.78 (1.96 for many).
constexpr int kMinReplications = 5;

std::vector<std::size_t> saturated_servers(const Result& r) {
  std::vector<std::size_t> saturated;
  for (std::size_t n = 0; n < r.utilisation.size(); ++n)
    if (r.utilisation[n] >= 1.0 - kSaturatedIdleFraction) saturated.push_back(n);
  return saturated;
}

// Every estimate (not the description of the run) becomes NaN: nothing was observed.
void set_estimates_nan(Result& r) {
  for (double* x : {&r.EQ, &r.EQ_hw, &r.VarQ, &r.VarQ_hw, &r.ET, &r.ET_hw}) *x = kNaN;
  for (std::vector<double>* v :
       {&r.pmf, &r.pmf_hw, &r.occupancy, &r.occupancy_hw, &r.EQ_type, &r.EQ_type_hw, &r.ET_type,
        &r.ET_type_hw, &r.T_quantile, &r.T_quantile_hw, &r.T_tail, &r.T_tail_hw})
    std::fill(v->begin(), v->end(), kNaN);
  for (ServerValues* v : {&r.ER_server, &r.ER_server_hw, &r.utilisation, &r.utilisation_hw})
    v->fill(kNaN);
}

// The warnings of a finished simulation, the most serious first, with the flags they raise; sets
// the estimates to NaN when no replication observed anything.
std::string warnings(Result& r, const Options& o) {
  std::vector<std::string> w;
  if (r.quiet_replications == r.replications) {
    set_estimates_nan(r);
    r.flags |= flag_few_observations;
    w.push_back(fmt::format(
        "no event after warm-up in any of {} replications (horizon {:.3g}): estimates are NaN",
        r.replications, r.horizon));
  }
  const std::vector<std::size_t> saturated = saturated_servers(r);
  if (!saturated.empty()) {
    r.flags |= flag_saturated;
    const double idle = 1.0 - r.utilisation[saturated[0]];
    w.push_back(fmt::format(
        "server {} {}{}: unstable, or too close to it for steady state", saturated[0] + 1,
        idle > 0.0 ? fmt::format("idle only {:.2g} of the time", idle)
                   : std::string("never idle after warm-up"),
        saturated.size() > 1 ? fmt::format(" ({} servers saturated)", saturated.size())
                             : std::string()));
  }
  if (r.flags & flag_warmup_not_over)
    w.push_back(fmt::format(
        "warm-up not over: MSER-5 truncates half of the {:.3g} time units of the last run",
        2.0 * r.horizon));
  if (r.flags & flag_short_run)
    w.push_back(fmt::format(
        "run short against the correlation time: batch means of {:.3g} time units, integrated "
        "autocorrelation time of Q about {:.3g}",
        r.horizon / kBatchMeans, r.correlation_time));
  if (r.flags & flag_correlated)
    w.push_back("batch means still correlated (von Neumann test): intervals too narrow");
  if (r.flags & flag_replications_disagree)
    w.push_back("replications disagree beyond their within-run noise (F test)");
  if (r.quiet_replications > 0 && r.quiet_replications < r.replications) {
    r.flags |= flag_few_observations;
    w.push_back(fmt::format(
        "{} of {} replications saw no event after warm-up: horizon too short for the intervals",
        r.quiet_replications, r.replications));
  }
  if (r.quiet_replications < r.replications && std::isnan(r.ET)) {
    r.flags |= flag_few_observations;
    w.push_back("no job completed after warm-up: ET is NaN");
  }
  const double relative_hw = r.ET_hw / r.ET;
  const bool imprecise = o.target_rel_half_width > 0.0 && !(relative_hw <= o.target_rel_half_width);
  if (r.flags & flag_budget_spent)
    w.push_back(fmt::format("max_events {:.3g} spent before {}: {:.3g} events, horizon {:.3g}",
                            o.max_events,
                            (r.flags & ~flag_budget_spent) != 0 ? "a valid interval" : "the target",
                            static_cast<double>(r.events), r.horizon + r.warmup));
  if (imprecise)
    w.push_back(fmt::format("target_rel_half_width {:.3g} not reached: {:.3g}",
                            o.target_rel_half_width, relative_hw));
  if (r.replications < kMinReplications)
    w.push_back(
        fmt::format("only {} replications: half-widths other than EQ and ET rest on {} degrees of "
                    "freedom (t = {:.3g})",
                    r.replications, r.replications - 1, student_t(r.replications, 0.95)));
  std::string text;
  for (const std::string& sentence : w) text += (text.empty() ? "" : "; ") + sentence;
  return text;
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }
bool same(const std::vector<double>& a, const std::vector<double>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](double x, double y) { return same(x, y); });
}
bool same(const ServerValues& a, const ServerValues& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t n = 0; n < a.size(); ++n)
    if (!same(a[n], b[n])) return false;
  return true;
}
template <class T>
bool same(const T& a, const T& b) {
  return a == b;
}

}  // namespace

bool operator==(const Result& a, const Result& b) {
  return std::apply(
      [&](const auto&... x) {
        return std::apply([&](const auto&... y) { return (same(x, y) && ...); }, Result::fields(b));
      },
      Result::fields(a));
}

void validate(const Options& o) {
  if (o.policy == Policy::power_of_d && o.policy_d < 1)
    throw InputError(fmt::format("policy_d = {}: power_of_d needs at least 1 choice", o.policy_d));
  if (!(std::isfinite(o.horizon) && o.horizon > 0.0))
    throw InputError(fmt::format("horizon = {}; expected a finite simulated time > 0", o.horizon));
  if (!std::isfinite(o.warmup))
    throw InputError(fmt::format("warmup = {}; expected a finite time (< 0: detect)", o.warmup));
  if (o.replications < 2 || o.replications > kMaxReplications)
    throw InputError(
        fmt::format("replications = {}; expected 2..{} (a confidence interval needs "
                    "at least 2)",
                    o.replications, kMaxReplications));
  if (!(o.max_events > 0.0 && o.max_events <= kMaxEvents))
    throw InputError(fmt::format("max_events = {}; expected a number of events in 1..{:g}",
                                 o.max_events, kMaxEvents));
  if (!(std::isfinite(o.target_rel_half_width) && o.target_rel_half_width >= 0.0))
    throw InputError(
        fmt::format("target_rel_half_width = {}; expected a finite value >= 0 "
                    "(0: fixed replications)",
                    o.target_rel_half_width));
  if (o.qmax < 0 || o.qmax > kMaxDistributionLength)
    throw InputError(fmt::format("qmax = {}; expected 0..{}", o.qmax, kMaxDistributionLength));
  if (o.occupancy_max < 0 || o.occupancy_max > kMaxDistributionLength)
    throw InputError(
        fmt::format("occupancy_max = {}; expected 0..{}", o.occupancy_max, kMaxDistributionLength));
  if (o.identical_replicas && o.policy != Policy::redundancy_coc)
    throw InputError(fmt::format("identical_replicas applies only to redundancy_coc, not {}",
                                 name_of(o.policy)));
  if (o.longest_idle && o.policy != Policy::redundancy_cos)
    throw InputError(
        fmt::format("longest_idle applies only to redundancy_cos, not {}", name_of(o.policy)));
  validate_service(o.service);
  validate_increasing(o.quantiles, "quantiles", "levels", 0.0, true, 1.0, true,
                      kMaxDistributionPoints);
  validate_increasing(o.tail_times, "tail_times", "times", 0.0, true,
                      std::numeric_limits<double>::max(), false, kMaxDistributionPoints);
  validate_increasing(o.observe_times, "observe_times", "times", 0.0, false,
                      std::numeric_limits<double>::max(), false, kMaxObserveTimes);
  if (o.transient()) {
    if (!(o.observe_times.back() > 0.0))
      throw InputError(
          "observe_times: the last time is 0; expected a run of some length (a time > 0)");
    if (o.warmup >= 0.0)
      throw InputError(
          "warmup applies to steady-state runs, not with observe_times (the transient mode "
          "observes from time 0)");
    if (o.target_rel_half_width > 0.0)
      throw InputError(
          "target_rel_half_width applies to steady-state runs, not with observe_times (the "
          "transient mode runs once to the last time)");
  }
}

namespace {

// The transient mode (docs/sim.md, "Transient simulation"): every replication once from `start`
// to the last observation time, no warm-up, no rounds; E[Q(t)] and x_i(t) with Student t
// intervals over the replications. The steady-state estimates are not made (NaN, empty).
Result simulate_transient(const model::System& system, const Options& options, std::uint64_t seed,
                          std::uint64_t task_id, Kernel kernel) {
  const ReplicationPlan plan{0.0, options.observe_times.back(), 0};
  std::vector<Moments> Q, occupancy;
  std::uint64_t events = 0;
  for (int r = 0; r < options.replications; ++r) {
    const ReplicationStats stats = run_replication(system, options, seed, task_id,
                                                   static_cast<std::uint64_t>(r), plan, kernel);
    const double n = r + 1.0;
    add_all(Q, stats.observed_Q, n);
    add_all(occupancy, stats.observed_occupancy, n);
    events += stats.events;
  }
  Result result;
  const double n = options.replications;
  const double t95 = student_t(options.replications, 0.95);
  means_with_hw(Q, n, t95, result.EQ_t, result.EQ_t_hw);
  means_with_hw(occupancy, n, t95, result.occupancy_t, result.occupancy_t_hw);
  for (double* x : {&result.EQ, &result.EQ_hw, &result.VarQ, &result.VarQ_hw, &result.ET,
                    &result.ET_hw, &result.correlation_time})
    *x = kNaN;
  result.horizon = plan.horizon;
  result.replications = options.replications;
  result.hw99_factor = student_t(options.replications, 0.99) / t95;
  result.events = events;
  if (options.replications < kMinReplications)
    result.warning =
        fmt::format("only {} replications: half-widths rest on {} degrees of freedom (t = {:.3g})",
                    options.replications, options.replications - 1, t95);
  return result;
}

}  // namespace

Result simulate(const model::System& system, const Options& options, std::uint64_t seed,
                std::uint64_t task_id, Kernel kernel) {
  validate(options);
  validate_start(system, options);
  if (options.transient()) return simulate_transient(system, options, seed, task_id, kernel);
  // Sequential length: each round runs every replication from empty over twice the previous
  // length, on the same streams (docs/sim.md, "Output analysis").
  double horizon = options.horizon;
  std::uint64_t events = 0;
  for (;;) {
    const Round round(system, options, seed, task_id, horizon, kernel);
    events += round.events;
    Result result = round.result(system, options);
    const double relative_hw = result.ET_hw / result.ET;
    const bool precise =
        options.target_rel_half_width <= 0.0 || relative_hw <= options.target_rel_half_width;
    const bool done = result.flags == 0 && precise;
    // The next round costs about twice this one.
    const bool affordable =
        static_cast<double>(events) + 2.0 * static_cast<double>(round.events) <= options.max_events;
    // A saturated server (unstable, or as good as) gets no better with a longer run.
    if (!done && affordable && saturated_servers(result).empty()) {
      horizon *= 2.0;
      continue;
    }
    if (!done && !affordable) result.flags |= flag_budget_spent;
    result.events = events;
    result.warning = warnings(result, options);
    return result;
  }
}

}  // namespace qsweep::sim
