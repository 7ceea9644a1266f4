#pragma once
// The simulation kernels (internal to src/sim): redundancy.cpp (cancel-on-completion) and
// dispatch.cpp (one server per job: jsq, random, jiq, power_of_d, cancel-on-start).
#include <cstdint>
#include <vector>

#include "observer.hpp"
#include "qsweep/common/rng.hpp"
#include "qsweep/model/model.hpp"
#include "qsweep/sim/exponential.hpp"
#include "qsweep/sim/kernel.hpp"
#include "sampling.hpp"
#include "structures.hpp"

namespace qsweep::sim {

struct KernelContext {
  const model::System& system;
  const Options& options;
  const JobTypes& types;
  Rng& rng;
  Observer& observer;
};

// Runs the system from empty through plan.warmup (counting only), starts the observer there and
// runs on to warmup + horizon. Returns the number of events.
std::uint64_t run_redundancy(const KernelContext& context, Kernel kernel,
                             const ReplicationPlan& plan);
std::uint64_t run_dispatch(const KernelContext& context, Kernel kernel,
                           const ReplicationPlan& plan);

// Time and events of a Markov kernel (exponential sizes, independent replicas): every busy server
// completes its head job at rate mu_n, so the next event is a race of total rate
// N lambda + mu(busy servers), decided by one exponential time and one uniform.
class RaceClock {
 public:
  explicit RaceClock(const KernelContext& c)
      : busy(c.system.speeds), rng_(c.rng), arrival_rate_(c.system.total_arrival_rate()) {}
  BusySet busy;

  double now() const { return t_; }
  std::uint64_t events() const { return events_; }

  // Runs events until t_end; `arrive()` and `depart(n)` change the state and keep `busy` current.
  template <class Arrive, class Depart>
  void run_until(double t_end, Arrive&& arrive, Depart&& depart) {
    while (true) {
      const double rate = arrival_rate_ + busy.rate();
      const double dt = exponential_(rng_) / rate;
      // Memorylessness: a race that would end past t_end can be dropped and redrawn later.
      if (t_ + dt > t_end) {
        t_ = t_end;
        return;
      }
      t_ += dt;
      ++events_;
      const double u = rng_.uniform() * rate;
      if (u < arrival_rate_) {
        arrive();
      } else {
        depart(busy.pick(u - arrival_rate_));
      }
    }
  }

 private:
  Rng& rng_;
  const ExponentialZiggurat& exponential_ = ExponentialZiggurat::instance();
  double arrival_rate_;
  double t_ = 0.0;
  std::uint64_t events_ = 0;
};

// Time and events of an event-driven kernel: a Poisson arrival clock and each busy server's
// completion time in an indexed heap (the kernel keeps `completions` current).
class EventClock {
 public:
  explicit EventClock(const KernelContext& c)
      : completions(c.system.N()),
        rng_(c.rng),
        arrival_rate_(c.system.total_arrival_rate()),
        next_arrival_(exponential_(rng_) / arrival_rate_) {}
  IndexedMinHeap completions;

  double now() const { return t_; }
  std::uint64_t events() const { return events_; }

  // Runs events until t_end (an event after t_end stays pending); `depart(n)`: server n completes.
  template <class Arrive, class Depart>
  void run_until(double t_end, Arrive&& arrive, Depart&& depart) {
    while (true) {
      const bool departure = !completions.empty() && completions.top_key() < next_arrival_;
      const double next = departure ? completions.top_key() : next_arrival_;
      if (next > t_end) return;
      t_ = next;
      ++events_;
      if (departure) {
        depart(completions.top());
      } else {
        arrive();
        next_arrival_ = t_ + exponential_(rng_) / arrival_rate_;
      }
    }
  }

 private:
  Rng& rng_;
  const ExponentialZiggurat& exponential_ = ExponentialZiggurat::instance();
  double arrival_rate_;
  double t_ = 0.0, next_arrival_;
  std::uint64_t events_ = 0;
};

template <class K>
std::uint64_t drive(K& kernel, Observer& observer, const ReplicationPlan& plan) {
  kernel.run_until(plan.warmup);
  observer.start(plan.warmup);
  kernel.run_until(plan.warmup + plan.horizon);
  return kernel.events();
}

}  // namespace qsweep::sim
