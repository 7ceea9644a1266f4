#pragma once
// The simulation kernels (internal to src/sim): redundancy.cpp (cancel-on-completion) and
// dispatch.cpp (one server per job: jsq, random, jiq, power_of_d, cancel-on-start).
#include <algorithm>
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
  const std::vector<std::uint32_t>& start;  // queue lengths at time 0 (empty: none)
};

// Runs the system from empty through plan.warmup (counting only), starts the observer there and
// runs on to warmup + horizon. Returns the number of events.
std::uint64_t run_redundancy(const KernelContext& context, Kernel kernel,
                             const ReplicationPlan& plan);
std::uint64_t run_dispatch(const KernelContext& context, Kernel kernel,
                           const ReplicationPlan& plan);
// Kernel::pooled (dispatch_pooled.cpp); the observer must be pooled.
std::uint64_t run_pooled_dispatch(const KernelContext& context, const ReplicationPlan& plan);
// The pooled kernel draws the servers a policy looks at itself (random: 1, power_of_d: policy_d,
// jsq and jiq: d) when types are untracked and they are at most this many; otherwise it takes
// the family's draw, which it needs in uniformly random order.
inline constexpr int kMaxPooledDraw = 16;
inline int pooled_draw_size(const Options& options, const model::Family& family) {
  const int d = family.params().d;
  if (options.policy == Policy::random) return 1;
  return options.policy == Policy::power_of_d ? std::min(options.policy_d, d) : d;
}

// 32-bit uniforms, two per 64-bit draw of the stream: enough to pick a race's winner (each
// probability exact to 2^-32) or a server among fewer than 2^32, at half the generator's cost.
class HalfDraws {
 public:
  explicit HalfDraws(Rng& rng) : rng_(rng) {}
  // Inlined into the kernels' loops (out of line they cost a call per draw).
  [[gnu::always_inline]] std::uint32_t next() {
    if (spare_half_) {
      spare_half_ = false;
      return static_cast<std::uint32_t>(bits_ >> 32);
    }
    bits_ = rng_.next_u64();
    spare_half_ = true;
    return static_cast<std::uint32_t>(bits_);
  }
  // Uniform in [0, 1).
  [[gnu::always_inline]] double uniform() { return static_cast<double>(next()) * 0x1.0p-32; }
  // Uniform in [0, n), n >= 1 (Lemire's multiply-shift with rejection: unbiased).
  [[gnu::always_inline]] std::uint32_t below(std::uint32_t n) {
    std::uint64_t m = std::uint64_t{next()} * n;
    if (static_cast<std::uint32_t>(m) < n) {
      const std::uint32_t threshold = (0U - n) % n;
      while (static_cast<std::uint32_t>(m) < threshold) m = std::uint64_t{next()} * n;
    }
    return static_cast<std::uint32_t>(m >> 32);
  }

 private:
  Rng& rng_;
  std::uint64_t bits_ = 0;
  bool spare_half_ = false;
};

// How a Markov kernel advances time: by a drawn Exp(rate) holding time, or by its mean 1 / rate
// (the time averages are then conditional expectations given the sequence of states: same limits,
// lower variance, no draw; sojourn times must then come from their laws, see docs/sim.md).
enum class HoldingTimes { sampled, expected };

// Time and events of a Markov kernel (exponential sizes, independent replicas): every busy server
// completes its head job at rate mu_n, so the next event is a race of total rate
// N lambda + mu(busy servers), decided by one holding time and one uniform.
class RaceClock {
 public:
  RaceClock(const KernelContext& c, HoldingTimes holding)
      : busy(c.system.speeds),
        rng_(c.rng),
        sampled_(holding == HoldingTimes::sampled),
        arrival_rate_(c.system.total_arrival_rate()),
        next_(holding_time(arrival_rate_)) {}
  BusySet busy;

  double now() const { return t_; }
  std::uint64_t events() const { return events_; }
  // After jobs were placed at time 0: the first event's rate includes their servers.
  void restart() {
    rate_ = arrival_rate_ + busy.rate();
    next_ = t_ + holding_time(rate_);
  }

  // Runs events until t_end (an event after t_end stays pending); `arrive()` and `depart(n)`
  // change the state and keep `busy` current.
  template <class Arrive, class Depart>
  void run_until(double t_end, Arrive&& arrive, Depart&& depart) {
    while (next_ <= t_end) {
      t_ = next_;
      ++events_;
      const double u = half_draws_.uniform() * rate_;
      if (u < arrival_rate_) {
        arrive();
      } else {
        depart(busy.pick(u - arrival_rate_));
      }
      rate_ = arrival_rate_ + busy.rate();
      next_ = t_ + holding_time(rate_);
    }
    t_ = t_end;
  }

 private:
  double holding_time(double rate) const { return (sampled_ ? exponential_(rng_) : 1.0) / rate; }

  Rng& rng_;
  const ExponentialZiggurat& exponential_ = ExponentialZiggurat::instance();
  bool sampled_;
  double arrival_rate_;
  double rate_ = arrival_rate_;  // arrival_rate_ + busy.rate()
  double t_ = 0.0, next_;        // now and the next event
  std::uint64_t events_ = 0;
  HalfDraws half_draws_{rng_};
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

// Runs kernel K (built from the context, which places the start's jobs; a clock member `clock`,
// RaceClock or EventClock, and members arrive() and depart(n) that change the state) through
// plan.warmup (counting
// only), starts the observer there and runs on to warmup + horizon. Returns the number of events.
template <class K>
std::uint64_t run(const KernelContext& context, const ReplicationPlan& plan) {
  K kernel(context);
  const auto run_until = [&kernel](double t_end) {
    kernel.clock.run_until(
        t_end, [&kernel] { kernel.arrive(); }, [&kernel](int n) { kernel.depart(n); });
  };
  run_until(plan.warmup);
  context.observer.start(plan.warmup);
  run_until(plan.warmup + plan.horizon);
  return kernel.clock.events();
}

}  // namespace qsweep::sim
