#include "observer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "qsweep/common/error.hpp"

namespace qsweep::sim {

Observer::Observer(const std::vector<double>& speeds, std::size_t num_types, int qmax,
                   int occupancy_max, double trace_window, bool pooled)
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
      tracing_(trace_window > 0.0),
      trace_window_(trace_window) {
  time_at_q_[0].count = 1;  // Q = 0 at the start
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

// Closes every trace window that ends by tau (before Q changes at tau): the integral of Q up to
// the window's end is Q end - jump_time, with the current Q and jumps.
void Observer::close_trace_windows(double tau) {
  while (tau >= trace_end_) {
    const double area = Q_.count * trace_end_ - Q_.jump_time;
    trace_.push_back((area - trace_area_) / trace_window_);
    trace_area_ = area;
    trace_end_ = static_cast<double>(trace_.size() + 1) * trace_window_;
  }
}

void Observer::start(double t) {
  observing_ = true;
  start_ = t;
  if (tracing_) trace_end_ = trace_window_;
}

ReplicationStats Observer::finish(double t) {
  const double horizon = t - start_;
  if (tracing_) close_trace_windows(horizon);
  observing_ = false;

  ReplicationStats stats;
  stats.mean_Q = Q_.integral(horizon) / horizon;
  const double q = Q_.count;
  stats.mean_Q2 = (q * q * horizon - jump_time_Q2_) / horizon;
  for (std::size_t i = 0; i + 1 < time_at_q_.size(); ++i)
    stats.pmf.push_back(time_at_q_[i].integral(horizon) / horizon);
  const auto N = static_cast<double>(num_servers_);
  for (const Level& l : occupancy_) stats.occupancy.push_back(l.integral(horizon) / (horizon * N));
  for (const Level& l : types_) stats.mean_Q_type.push_back(l.integral(horizon) / horizon);
  stats.sojourn_sum_type = sojourn_sum_type_;
  stats.sojourn_count_type = sojourn_count_type_;
  stats.sojourn_sum = sojourn_sum_;
  stats.sojourn_count = sojourn_count_;
  for (std::size_t c = 0; c < class_speed_.size(); ++c) {
    const auto& weight = erlang_weight_[c];
    for (std::size_t k = 1; k < weight.size(); ++k) {
      stats.sojourn_sum += weight[k] * static_cast<double>(k) / class_speed_[c];
      stats.sojourn_count += static_cast<std::uint64_t>(weight[k]);
    }
    histogram_.add_erlang(class_speed_[c], weight);
  }
  if (pooled_) {
    stats.mean_R.push_back(Q_.integral(horizon) / (horizon * N));
    stats.utilisation.push_back(busy_.integral(horizon) / (horizon * N));
    stats.pooled_servers = true;
  }
  for (std::size_t n = 0; n < servers_.size(); ++n) {
    stats.mean_R.push_back(servers_[n].integral(horizon) / horizon);
    const double busy_now = servers_[n].count > 0 ? horizon : 0.0;
    stats.utilisation.push_back((busy_now - busy_jump_time_[n]) / horizon);
  }
  stats.observed_events = observed_events_;
  stats.sojourn = std::move(histogram_);
  stats.trace = std::move(trace_);
  return stats;
}

}  // namespace qsweep::sim
