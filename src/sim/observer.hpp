#pragma once
// Counts of jobs in the system and their time integrals over the observation window
// (internal to src/sim). Integrals are lazy: a quantity is integrated only when it changes, so an
// event costs O(servers it touches), independent of N and of the number of types.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "qsweep/sim/kernel.hpp"

namespace qsweep::sim {

class Observer {
 public:
  Observer(int N, std::size_t num_types, int qmax, int occupancy_max, double trace_window);

  // A job of `type` (-1: untracked) enters or leaves; `servers` are those whose count of jobs
  // (replicas) changes by one. Throws Error beyond kMaxJobsInSystem jobs.
  void add_job(double t, int type, const int* servers, std::size_t count) {
    if (Q_ >= kMaxJobsInSystem) too_many_jobs(t);
    if (observing_) integrate_Q(t);
    ++Q_;
    if (type >= 0) change(types_[idx(type)], t, +1);
    for (std::size_t i = 0; i < count; ++i) change_server(t, servers[i], +1);
  }
  void remove_job(double t, int type, const int* servers, std::size_t count, double arrival) {
    if (observing_) {
      integrate_Q(t);
      const double sojourn = t - arrival;
      sojourn_sum_ += sojourn;
      ++departures_;
      histogram_.add(sojourn);
      if (type >= 0) {
        sojourn_sum_type_[idx(type)] += sojourn;
        ++departures_type_[idx(type)];
      }
    }
    --Q_;
    if (type >= 0) change(types_[idx(type)], t, -1);
    for (std::size_t i = 0; i < count; ++i) change_server(t, servers[i], -1);
  }

  std::size_t jobs() const { return Q_; }
  // Observation runs from start() to finish(); state changes before start() are counted only.
  void start(double t);
  ReplicationStats finish(double t);

 private:
  struct Server {
    double last = 0.0, area = 0.0, busy = 0.0;
    int jobs = 0;
  };
  struct Level {  // a lazily integrated count (per type, per occupancy level)
    double last = 0.0, area = 0.0;
    int count = 0;
  };
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  [[noreturn]] static void too_many_jobs(double t);
  void trace(double from, double to, double q);

  void integrate_Q(double t) {
    const double dt = t - last_;
    const auto q = static_cast<double>(Q_);
    area_Q_ += q * dt;
    area_Q2_ += q * q * dt;
    time_at_q_[std::min(Q_, time_at_q_.size() - 1)] += dt;
    if (trace_window_ > 0.0) trace(last_, t, q);
    last_ = t;
  }
  void change(Level& level, double t, int delta) {
    if (observing_) {
      level.area += level.count * (t - level.last);
      level.last = t;
    }
    level.count += delta;
  }
  void integrate_server(Server& s, double t) {
    const double dt = t - s.last;
    s.area += s.jobs * dt;
    if (s.jobs > 0) s.busy += dt;
    s.last = t;
  }
  void change_server(double t, int n, int delta) {
    Server& s = servers_[idx(n)];
    if (observing_) integrate_server(s, t);
    // Occupancy level i counts servers with >= i jobs: moving from k to k+1 enters level k+1,
    // moving from k to k-1 leaves level k.
    const int level = delta > 0 ? s.jobs + 1 : s.jobs;
    if (level <= occupancy_max_) change(occupancy_[idx(level - 1)], t, delta);
    s.jobs += delta;
  }

  bool observing_ = false;
  double start_ = 0.0, last_ = 0.0;
  std::size_t Q_ = 0;
  double area_Q_ = 0.0, area_Q2_ = 0.0;
  std::vector<double> time_at_q_;  // q = 0..qmax, then one overflow slot
  std::vector<Server> servers_;
  std::vector<Level> types_;
  std::vector<Level> occupancy_;  // level i-1 counts servers with >= i jobs
  int occupancy_max_;
  double sojourn_sum_ = 0.0;
  std::uint64_t departures_ = 0;
  std::vector<double> sojourn_sum_type_;
  std::vector<std::uint64_t> departures_type_;
  SojournHistogram histogram_;
  double trace_window_, trace_end_ = 0.0, trace_area_ = 0.0;
  std::vector<double> trace_;
};

}  // namespace qsweep::sim
