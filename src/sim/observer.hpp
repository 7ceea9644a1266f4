#pragma once
// Counts of jobs in the system and their time integrals over the observation window
// (internal to src/sim). A count changes by +-1 at events; its integral over the observation
// [0, H] (time measured from its start) is, by parts, count(H) H - sum of jump x jump time, so a
// change costs one addition and no clock per quantity. An event costs O(servers it touches),
// independent of N and of the number of types, and touches little memory.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "qsweep/sim/kernel.hpp"

namespace qsweep::sim {

// sum over k >= 1 of weight[k] P(Erlang(k, 1) <= y), with prefix[k] = weight[1] + ... +
// weight[k-1] (p: scratch); replication.cpp.
double erlang_mixture_cdf(double y, const std::vector<double>& weight,
                          const std::vector<double>& prefix, std::vector<double>& p);

class Observer {
 public:
  // pooled: the servers are exchangeable and observed together (no per-server state): the kernel
  // reports jobs with add_job_pooled() and remove_job_pooled(), and finish() gives one E[R_n] and
  // one utilisation, the means over all servers, for every server.
  // batches > 0: also record the series of batch statistics over the observation (horizon /
  // batches each) and the windows that start at kTruncationBatches (ReplicationStats).
  // tail_times: count the sojourn times above each (increasing); observe_times: record Q and the
  // occupancy at each (increasing; the transient mode, observed from time 0).
  Observer(const std::vector<double>& speeds, std::size_t num_types, int qmax, int occupancy_max,
           double horizon, int batches, bool pooled = false,
           const std::vector<double>& tail_times = {},
           const std::vector<double>& observe_times = {});

  // A job of `type` (-1: untracked) enters or leaves; `servers` are those whose count of jobs
  // (replicas) changes by one. Throws Error beyond kMaxJobsInSystem jobs.
  void add_job(double t, int type, const int* servers, std::size_t count) {
    if (Q_.count >= static_cast<int>(kMaxJobsInSystem)) too_many_jobs(t);
    change(t, type, servers, count, +1);
  }
  void remove_job(double t, int type, const int* servers, std::size_t count) {
    change(t, type, servers, count, -1);
  }
  // Pooled servers: a job joins, or leaves, a server that had `length` jobs before.
  void add_job_pooled(double t, int length) {
    if (Q_.count >= static_cast<int>(kMaxJobsInSystem)) too_many_jobs(t);
    change_pooled(length + 1, +1, change(t, -1, nullptr, 0, +1));
  }
  void remove_job_pooled(double t, int length) {
    change_pooled(length, -1, change(t, -1, nullptr, 0, -1));
  }

  // A job of `type` leaves after `sojourn` time units (counted during the observation only).
  void record_sojourn(int type, double sojourn) {
    if (!observing_) return;
    sojourn_sum_ += sojourn;
    ++sojourn_count_;
    batch_T_sum_ += sojourn;
    batch_T_count_ += 1.0;
    if (type >= 0) count_type_sojourn(type, sojourn);
    histogram_.add(sojourn);
    for (std::size_t i = 0; i < tail_times_.size() && sojourn > tail_times_[i]; ++i)
      above_[i] += 1.0;
  }
  // Or, in place of that (the dispatching Markov kernel): a job of `type` arrives at server n
  // behind phases - 1 jobs, so that its sojourn time is the sum of `phases` Exp(speed_n) times
  // (mean phases / speed_n). The totals follow from the weights in finish().
  void record_erlang_sojourn(int type, int n, int phases) {
    if (!observing_) return;
    const auto c = speed_class_.empty() ? 0 : idx(speed_class_[idx(n)]);
    const double mean = phases / class_speed_[c];
    sojourn_sum_ += mean;
    ++sojourn_count_;
    batch_T_sum_ += mean;
    batch_T_count_ += 1.0;
    if (type >= 0) count_type_sojourn(type, mean);
    auto& weight = erlang_weight_[c];
    if (weight.size() <= idx(phases)) weight.resize(idx(phases) + 1, 0.0);
    weight[idx(phases)] += 1.0;
  }

  // Observation runs from start() to finish(); state changes before start() are counted only.
  void start(double t);
  ReplicationStats finish(double t);

 private:
  // A count and the sum of its jumps times their times since the start of the observation:
  // its integral over [0, H] is count H - jump_time.
  struct Level {
    double jump_time = 0.0;
    int count = 0;
    void change(int delta, double delta_tau) {  // delta_tau = delta x time of the jump
      count += delta;
      jump_time += delta_tau;
    }
    double integral(double horizon) const { return count * horizon - jump_time; }
  };
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  [[noreturn]] static void too_many_jobs(double t);
  void count_type_sojourn(int type, double sojourn) {
    sojourn_sum_type_[idx(type)] += sojourn;
    ++sojourn_count_type_[idx(type)];
  }
  // Integrals (not means) of everything observed over [0, tau] of the observation, with the
  // Erlang weights so far (their sojourn sums are already in the totals).
  struct Totals {
    double tau = 0.0;
    ReplicationStats stats;
    std::vector<std::vector<double>> erlang;
  };
  Totals totals(double tau) const;
  // The means over the window between two totals (begin: nullptr for the start).
  ReplicationStats window(const Totals& end, const Totals* begin) const;
  void close_batches(double tau);

  // The state before the event at t is the state at every observation time before t.
  void observe_until(double t);

  // Returns delta x the time of the change (0 in the warm-up).
  double change(double t, int type, const int* servers, std::size_t count, int delta) {
    if (t > next_observation_) observe_until(t);
    const double tau = observing_ ? t - start_ : 0.0;  // 0 in the warm-up: nothing is summed
    observed_events_ += observing_ ? 1U : 0U;
    if (tau >= batch_end_) close_batches(tau);
    const double delta_tau = delta * tau;
    const int q = Q_.count;
    Q_.change(delta, delta_tau);
    jump_time_Q2_ += (2 * q + delta) * delta_tau;  // Q^2 jumps by (q + delta)^2 - q^2
    time_at_q_[pmf_slot(q)].change(-1, -tau);
    time_at_q_[pmf_slot(q + delta)].change(+1, tau);
    if (type >= 0) types_[idx(type)].change(delta, delta_tau);
    for (std::size_t i = 0; i < count; ++i) change_server(servers[i], delta, delta_tau);
    return delta_tau;
  }
  std::size_t pmf_slot(int q) const { return q < overflow_q_ ? idx(q) : idx(overflow_q_); }
  void change_server(int n, int delta, double delta_tau) {
    Level& s = servers_[idx(n)];
    // Occupancy level i counts servers with >= i jobs: moving from k to k+1 enters level k+1,
    // moving from k to k-1 leaves level k.
    const int level = delta > 0 ? s.count + 1 : s.count;
    if (level <= occupancy_max_) occupancy_[idx(level - 1)].change(delta, delta_tau);
    if (level == 1) busy_jump_time_[idx(n)] += delta_tau;  // idle <-> busy
    s.change(delta, delta_tau);
  }
  // The same for pooled servers: `level` as above, from the server's length before the change.
  void change_pooled(int level, int delta, double delta_tau) {
    if (level <= occupancy_max_) occupancy_[idx(level - 1)].change(delta, delta_tau);
    if (level == 1) busy_.change(delta, delta_tau);
  }

  bool observing_ = false;
  double start_ = 0.0;
  std::uint64_t observed_events_ = 0;  // arrivals + departures after start()
  Level Q_;
  double jump_time_Q2_ = 0.0;
  std::vector<Level> time_at_q_;  // 1 while Q = q, q = 0..qmax, then one slot for Q > qmax
  int overflow_q_;                // qmax + 1
  std::size_t num_servers_;
  bool pooled_;
  std::vector<Level> servers_;          // jobs (replicas) at each server (empty if pooled_)
  std::vector<double> busy_jump_time_;  // of the indicator "server n has a job"
  Level busy_;                          // pooled_: number of busy servers
  std::vector<Level> types_;
  std::vector<Level> occupancy_;  // level i-1 counts servers with >= i jobs
  int occupancy_max_;
  double sojourn_sum_ = 0.0;
  std::uint64_t sojourn_count_ = 0;
  std::vector<double> sojourn_sum_type_;
  std::vector<std::uint64_t> sojourn_count_type_;
  SojournHistogram histogram_;
  // Erlang sojourn laws: servers grouped by speed; erlang_weight_[c][k]: jobs with k phases at
  // speed class_speed_[c]. speed_class_ is empty when all speeds are equal (one class).
  std::vector<int> speed_class_;
  std::vector<double> class_speed_;
  std::vector<std::vector<double>> erlang_weight_;
  // The batch series (batches_ > 0): per closed batch the mean of Q and the sum and number of
  // the sojourn times recorded in it; totals at the starts of the truncated windows.
  int batches_;
  double batch_width_;
  double batch_end_ = std::numeric_limits<double>::infinity();  // of the open batch
  double batch_area_ = 0.0;  // integral of Q up to the end of the last closed batch
  double batch_T_sum_ = 0.0, batch_T_count_ = 0.0;  // of the open batch
  std::vector<double> series_Q_, series_T_sum_, series_T_count_;
  std::vector<Totals> truncation_totals_;
  // The sojourn-time distribution: the tail times and the number of sojourn times above each.
  std::vector<double> tail_times_, above_;
  // Transient mode: the observation times, the next one (infinity: none left), and Q and the
  // occupancy counts (servers) at those passed.
  std::vector<double> observe_times_;
  double next_observation_ = std::numeric_limits<double>::infinity();
  std::vector<double> observed_Q_, observed_occupancy_;
};

}  // namespace qsweep::sim
