#include "observer.hpp"

#include <fmt/format.h>

#include "qsweep/common/error.hpp"

namespace qsweep::sim {

Observer::Observer(int N, std::size_t num_types, int qmax, int occupancy_max, double trace_window)
    : time_at_q_(idx(qmax) + 2, 0.0),
      servers_(idx(N)),
      types_(num_types),
      occupancy_(idx(occupancy_max)),
      occupancy_max_(occupancy_max),
      sojourn_sum_type_(num_types, 0.0),
      departures_type_(num_types, 0),
      trace_window_(trace_window) {}

void Observer::too_many_jobs(double t) {
  throw Error(
      fmt::format("simulation: more than {} jobs in the system at time {:.6g}; the "
                  "system looks unstable under this policy",
                  kMaxJobsInSystem, t));
}

// Spreads q over [from, to) into the trace windows, closing every window that ends by `to`.
void Observer::trace(double from, double to, double q) {
  while (to >= trace_end_) {
    trace_.push_back((trace_area_ + q * (trace_end_ - from)) / trace_window_);
    trace_area_ = 0.0;
    from = trace_end_;
    trace_end_ += trace_window_;
  }
  trace_area_ += q * (to - from);
}

void Observer::start(double t) {
  observing_ = true;
  start_ = last_ = t;
  trace_end_ = t + trace_window_;
  for (Server& s : servers_) s.last = t;
  for (Level& l : types_) l.last = t;
  for (Level& l : occupancy_) l.last = t;
}

ReplicationStats Observer::finish(double t) {
  integrate_Q(t);
  for (Level& l : types_) change(l, t, 0);
  for (Level& l : occupancy_) change(l, t, 0);
  for (Server& s : servers_) integrate_server(s, t);
  observing_ = false;

  const double horizon = t - start_;
  ReplicationStats stats;
  stats.mean_Q = area_Q_ / horizon;
  stats.mean_Q2 = area_Q2_ / horizon;
  stats.pmf.assign(time_at_q_.begin(), time_at_q_.end() - 1);
  for (double& p : stats.pmf) p /= horizon;
  const auto N = static_cast<double>(servers_.size());
  for (const Level& l : occupancy_) stats.occupancy.push_back(l.area / (horizon * N));
  for (const Level& l : types_) stats.mean_Q_type.push_back(l.area / horizon);
  stats.sojourn_sum_type = sojourn_sum_type_;
  stats.departures_type = departures_type_;
  stats.sojourn_sum = sojourn_sum_;
  stats.departures = departures_;
  for (const Server& s : servers_) {
    stats.mean_R.push_back(s.area / horizon);
    stats.utilisation.push_back(s.busy / horizon);
  }
  stats.sojourn = std::move(histogram_);
  stats.trace = std::move(trace_);
  return stats;
}

}  // namespace qsweep::sim
