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

// The random streams (docs/sim.md, "Common random numbers"): `rng` draws the arrivals (times,
// types, sizes drawn at arrival) and the race; `policy_rng` the policy's choices (ties, samples);
// `service_rng` the sizes drawn when a replica starts. Without coupled streams all three are the
// one stream of the replication, as before they existed.
struct KernelContext {
  const model::System& system;
  const Options& options;
  const JobTypes& types;
  Rng& rng;
  Observer& observer;
  Rng& policy_rng;
  Rng& service_rng;
  const std::vector<std::uint32_t>& start;  // queue lengths at time 0 (empty: none)
};

// Substreams (Rng's counter word 2) of a replication with coupled streams.
inline constexpr std::uint64_t kPolicySubstream = 1;
inline constexpr std::uint64_t kServiceSubstream = 2;

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
// N lambda + mu(busy servers), decided by one holding time and one uniform. With coupled streams
// the race is uniformized: every server, busy or not, has a potential completion at rate mu_n
// (total N lambda + mu(all servers), the same in every state and policy); one that falls past
// the busy servers changes nothing. Tasks that differ only in their policy then see the same
// arrivals and the same potential completions at the same times.
class RaceClock {
 public:
  RaceClock(const KernelContext& c, HoldingTimes holding)
      : busy(c.system.speeds),
        rng_(c.rng),
        sampled_(holding == HoldingTimes::sampled),
        uniformized_(c.options.coupled_streams()),
        arrival_rate_(c.system.total_arrival_rate()),
        all_servers_rate_(total(c.system.speeds)),
        rate_(arrival_rate_ + (uniformized_ ? all_servers_rate_ : 0.0)),
        next_(holding_time(rate_)) {}
  BusySet busy;

  double now() const { return t_; }
  std::uint64_t events() const { return events_; }
  // After jobs were placed at time 0: the first event's rate includes their servers.
  // (Uniformized, the rate is that of all servers in every state already.)
  void restart() {
    if (uniformized_) return;
    rate_ = arrival_rate_ + busy.rate();
    next_ = t_ + holding_time(rate_);
  }

  // Identical speeds, uniformized: potential completion i (the i-th of the N equal clocks) goes
  // to the server i-th longest in `by_length` (kept current by the kernel) rather than to the
  // i-th in the busy set's arbitrary order. Each busy server still completes at its speed, and
  // two policies' systems then lose a job from corresponding places of their profiles.
  void rank_departures(const LengthBuckets* by_length) { by_length_ = by_length; }

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
      } else if (!uniformized_ || u - arrival_rate_ < busy.rate()) {
        depart(by_length_ != nullptr ? longest(u - arrival_rate_) : busy.pick(u - arrival_rate_));
      } else {
        --events_;  // an idle server's potential completion: no event
      }
      if (!uniformized_) rate_ = arrival_rate_ + busy.rate();
      next_ = t_ + holding_time(rate_);
    }
    t_ = t_end;
  }

 private:
  double holding_time(double rate) const { return (sampled_ ? exponential_(rng_) : 1.0) / rate; }
  int longest(double v) const {
    const auto i =
        std::min(static_cast<std::size_t>(v / busy.rate() * static_cast<double>(busy.count())),
                 busy.count() - 1);
    return by_length_->at(by_length_->size() - 1 - static_cast<int>(i));
  }
  static double total(const std::vector<double>& speeds) {
    double sum = 0.0;
    for (double s : speeds) sum += s;
    return sum;
  }

  Rng& rng_;
  const ExponentialZiggurat& exponential_ = ExponentialZiggurat::instance();
  bool sampled_;
  bool uniformized_;
  const LengthBuckets* by_length_ = nullptr;
  double arrival_rate_;
  double all_servers_rate_;
  double rate_;            // arrival_rate_ + busy.rate(), or + all_servers_rate_ if uniformized
  double t_ = 0.0, next_;  // now and the next event
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
