#pragma once
// Occupancy-vector simulator of n exchangeable rate-1 servers: the state is the number of queues
// of each length, which is exact in distribution for jsq, jiq and power_of_d because the queues
// are exchangeable. Work per event is O(number of distinct lengths), independent of n.
//
// Time runs as the chain uniformized at rate n (1 + lambda): steps come at the times of a Poisson
// clock; a step is an arrival with probability lambda / (1 + lambda), else the service clock of a
// uniformly chosen server, a departure if that server is busy and nothing if it is idle. This is
// the continuous-time process exactly, and needs no logarithm per event.
#include <cstdint>
#include <vector>

#include "qsweep/common/rng.hpp"
#include "qsweep/ldp/options.hpp"

namespace qsweep::ldp {

class OccupancySimulator {
 public:
  // counts[k] = queues of length k at time 0 (summing to n); empty: all n queues of length 1.
  // Arrivals have rate n * lambda; power_of_d samples d distinct queues (1 <= d <= n).
  OccupancySimulator(Policy policy, int d, std::int64_t n, double lambda,
                     std::vector<std::int64_t> counts = {});

  // Runs for `duration` more time units (Poisson(n (1 + lambda) duration) steps). Returns true,
  // early, right after the arrival that makes some queue reach stop_length (the moment within
  // the interval is not sampled); false with the state at the end of the interval otherwise.
  bool run_for(double duration, int stop_length, Rng& rng);

  // One step of a uniformized chain whose arrival steps have probability arrival_probability
  // (importance sampling uses a tilted one).
  enum class Step { arrival, departure, idle };
  Step step(double arrival_probability, Rng& rng);

  std::uint64_t events() const { return events_; }  // arrivals and departures
  std::uint64_t steps() const { return steps_; }    // events and idle steps
  std::int64_t n() const { return n_; }
  std::int64_t busy() const { return n_ - counts_[0]; }
  // Queues with exactly `length` jobs, and the fraction X_length with at least `length` jobs.
  std::int64_t count(int length) const;
  double fraction_at_least(int length) const;
  int min_length() const { return min_; }
  int max_length() const { return max_; }

  // Single transitions: an arrival routed by the policy (returns the new length of the queue it
  // joined), and the end of service at the queue of rank `rank` in [0, n) when queues are
  // ordered by length (nothing happens if that queue is empty).
  int arrive(Rng& rng);
  void serve_rank(std::int64_t rank);

 private:
  int length_of_rank(std::int64_t rank) const;
  int route(Rng& rng) const;
  void move(int from, int to);

  Policy policy_;
  int d_;
  std::int64_t n_;
  double lambda_;
  std::vector<std::int64_t> counts_;  // counts_[k] = queues of length k; a 0 above max_
  int min_ = 0;
  int max_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t steps_ = 0;
};

}  // namespace qsweep::ldp
