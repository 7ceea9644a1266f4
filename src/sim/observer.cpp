#include "observer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "qsweep/common/error.hpp"

namespace qsweep::sim {

Observer::Observer(const std::vector<double>& speeds, std::size_t num_types, int qmax,
                   int occupancy_max, double horizon, int batches, bool pooled,
                   const std::vector<double>& tail_times, const std::vector<double>& observe_times)
    : time_at_q_(idx(qmax) + 2),
      overflow_q_(qmax + 1),
      num_servers_(speeds.size()),
      pooled_(pooled),
      servers_(pooled ? 0 : speeds.size()),
      busy_jump_time_(pooled ? 0 : speeds.size(), 0.0),
      types_(num_types),
      occupancy_(idx(occupancy_max)),
      occupancy_max_(occupancy_max),
      sojourn_sum_type_(num_types, 0.0),
      sojourn_count_type_(num_types, 0),
      batches_(batches),
      batch_width_(batches > 0 ? horizon / batches : 0.0),
      tail_times_(tail_times),
      above_(tail_times.size(), 0.0),
      observe_times_(observe_times) {
  time_at_q_[0].count = 1;  // Q = 0 at the start
  if (!observe_times_.empty()) next_observation_ = observe_times_.front();
  erlang_weight_.resize(1);
  class_speed_.push_back(speeds.front());
  if (std::all_of(speeds.begin(), speeds.end(), [&](double s) { return s == speeds.front(); }))
    return;
  class_speed_.clear();
  std::map<double, int> classes;
  for (double speed : speeds) {
    const auto [it, added] = classes.emplace(speed, static_cast<int>(class_speed_.size()));
    if (added) class_speed_.push_back(speed);
    speed_class_.push_back(it->second);
  }
  erlang_weight_.resize(class_speed_.size());
}

void Observer::too_many_jobs(double t) {
  throw Error(
      fmt::format("simulation: more than {} jobs in the system at time {:.6g}; the "
                  "system looks unstable under this policy",
                  kMaxJobsInSystem, t));
}

// Closes every batch that ends by tau (before Q changes at tau): the integral of Q up to the
// batch's end is Q end - jump_time, with the current Q and jumps.
void Observer::close_batches(double tau) {
  while (tau >= batch_end_) {
    const double area = Q_.count * batch_end_ - Q_.jump_time;
    series_Q_.push_back((area - batch_area_) / batch_width_);
    series_T_sum_.push_back(batch_T_sum_);
    series_T_count_.push_back(batch_T_count_);
    batch_area_ = area;
    batch_T_sum_ = batch_T_count_ = 0.0;
    const auto closed = static_cast<int>(series_Q_.size());
    if (std::find(kTruncationBatches.begin() + 1, kTruncationBatches.end(), closed) !=
        kTruncationBatches.end())
      truncation_totals_.push_back(totals(batch_end_));
    batch_end_ =
        closed < batches_ ? (closed + 1) * batch_width_ : std::numeric_limits<double>::infinity();
  }
}

void Observer::observe_until(double t) {
  while (t > next_observation_) {
    observed_Q_.push_back(Q_.count);
    for (const Level& l : occupancy_)
      observed_occupancy_.push_back(l.count / static_cast<double>(num_servers_));
    const std::size_t seen = observed_Q_.size();
    next_observation_ = seen < observe_times_.size() ? observe_times_[seen]
                                                     : std::numeric_limits<double>::infinity();
  }
}

void Observer::start(double t) {
  observing_ = true;
  start_ = t;
  if (batches_ > 0) batch_end_ = batch_width_;
}

Observer::Totals Observer::totals(double tau) const {
  Totals totals{tau, {}, erlang_weight_};
  ReplicationStats& s = totals.stats;
  s.mean_Q = Q_.integral(tau);
  const double q = Q_.count;
  s.mean_Q2 = q * q * tau - jump_time_Q2_;
  for (std::size_t i = 0; i + 1 < time_at_q_.size(); ++i)
    s.pmf.push_back(time_at_q_[i].integral(tau));
  for (const Level& l : occupancy_) s.occupancy.push_back(l.integral(tau));
  for (const Level& l : types_) s.mean_Q_type.push_back(l.integral(tau));
  s.sojourn_sum_type = sojourn_sum_type_;
  s.sojourn_count_type = sojourn_count_type_;
  s.sojourn_sum = sojourn_sum_;
  s.sojourn_count = sojourn_count_;
  if (pooled_) {
    s.mean_R.push_back(Q_.integral(tau));
    s.utilisation.push_back(busy_.integral(tau));
    s.pooled_servers = true;
  }
  for (std::size_t n = 0; n < servers_.size(); ++n) {
    s.mean_R.push_back(servers_[n].integral(tau));
    const double busy_now = servers_[n].count > 0 ? tau : 0.0;
    s.utilisation.push_back(busy_now - busy_jump_time_[n]);
  }
  s.observed_events = observed_events_;
  s.sojourn = histogram_;
  s.sojourn_above = above_;
  return totals;
}

namespace {
void subtract(std::vector<double>& a, const std::vector<double>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) a[i] -= b[i];
}
void scale(std::vector<double>& a, double factor) {
  for (double& x : a) x *= factor;
}
}  // namespace

ReplicationStats Observer::window(const Totals& end, const Totals* begin) const {
  ReplicationStats s = end.stats;
  std::vector<std::vector<double>> erlang = end.erlang;
  const double duration = end.tau - (begin ? begin->tau : 0.0);
  if (begin) {
    const ReplicationStats& b = begin->stats;
    s.mean_Q -= b.mean_Q;
    s.mean_Q2 -= b.mean_Q2;
    for (auto [x, y] : {std::pair{&s.pmf, &b.pmf},
                        {&s.occupancy, &b.occupancy},
                        {&s.mean_Q_type, &b.mean_Q_type},
                        {&s.sojourn_sum_type, &b.sojourn_sum_type},
                        {&s.mean_R, &b.mean_R},
                        {&s.utilisation, &b.utilisation}})
      subtract(*x, *y);
    for (std::size_t t = 0; t < s.sojourn_count_type.size(); ++t)
      s.sojourn_count_type[t] -= b.sojourn_count_type[t];
    s.sojourn_sum -= b.sojourn_sum;
    s.sojourn_count -= b.sojourn_count;
    subtract(s.sojourn_above, b.sojourn_above);
    s.observed_events -= b.observed_events;
    s.sojourn.merge(b.sojourn, -1.0);
    for (std::size_t c = 0; c < erlang.size(); ++c)
      for (std::size_t k = 0; k < begin->erlang[c].size(); ++k) erlang[c][k] -= begin->erlang[c][k];
  }
  s.mean_Q /= duration;
  s.mean_Q2 /= duration;
  const auto N = static_cast<double>(num_servers_);
  for (std::vector<double>* v : {&s.pmf, &s.mean_Q_type, &s.mean_R, &s.utilisation})
    scale(*v, 1.0 / duration);
  scale(s.occupancy, 1.0 / (duration * N));
  if (pooled_) {
    s.mean_R[0] /= N;
    s.utilisation[0] /= N;
  }
  for (std::size_t c = 0; c < class_speed_.size(); ++c) {
    s.sojourn.add_erlang(class_speed_[c], erlang[c]);
    if (tail_times_.empty() || erlang[c].size() < 2) continue;
    // The expected number of the class's sojourn times above each tail time, from their laws.
    std::vector<double> prefix(erlang[c].size(), 0.0), scratch;
    for (std::size_t k = 2; k < prefix.size(); ++k) prefix[k] = prefix[k - 1] + erlang[c][k - 1];
    const double total = prefix.back() + erlang[c].back();
    for (std::size_t i = 0; i < tail_times_.size(); ++i)
      s.sojourn_above[i] +=
          total - erlang_mixture_cdf(class_speed_[c] * tail_times_[i], erlang[c], prefix, scratch);
  }
  return s;
}

ReplicationStats Observer::finish(double t) {
  // The observation times up to the end (the state after the last event holds there).
  observe_until(std::nextafter(t, std::numeric_limits<double>::infinity()));
  if (!observe_times_.empty()) {
    // The transient mode reports the observations alone: no totals, windows or sojourn laws.
    ReplicationStats stats;
    stats.observed_events = observed_events_;
    stats.observed_Q = std::move(observed_Q_);
    stats.observed_occupancy = std::move(observed_occupancy_);
    return stats;
  }
  const double horizon = t - start_;
  if (batches_ > 0) close_batches(horizon);
  observing_ = false;
  const Totals end = totals(horizon);
  ReplicationStats stats = window(end, nullptr);
  for (const Totals& begin : truncation_totals_) stats.truncated.push_back(window(end, &begin));
  stats.batch_Q = std::move(series_Q_);
  stats.batch_T_sum = std::move(series_T_sum_);
  stats.batch_T_count = std::move(series_T_count_);
  return stats;
}

}  // namespace qsweep::sim
