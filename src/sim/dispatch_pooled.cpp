// Pooled dispatching (Kernel::pooled, docs/sim.md "Pooled dispatching"): jsq, random, jiq and
// power_of_d on the complete family (each job samples a uniform d-subset of the N servers in
// uniformly random order, d < N) with identical speeds and exponential service. The servers are
// exchangeable, so the state is the vector of queue lengths alone (4 bytes per server) and the
// observer sees the servers together. An event touches the lengths of the sampled servers, or of
// the departing one: the busy server that completes (uniform among the busy ones, the race of
// equal clocks) is found by drawing servers uniformly until a busy one comes up, 1 / (fraction
// busy) draws on average, about 1 / load.
#include <algorithm>
#include <array>

#include "kernels.hpp"
#include "qsweep/common/error.hpp"

namespace qsweep::sim {

namespace {

template <Policy P>
class PooledDispatch {
 public:
  explicit PooledDispatch(const KernelContext& c)
      : c_(c),
        lengths_(idx(c.system.N()), 0),
        N_(static_cast<std::uint32_t>(c.system.N())),
        k_(pooled_draw_size(c.options, c.system.family)),
        own_draw_(c.types.tracked().empty() && k_ <= kMaxPooledDraw),
        speed_(c.system.speeds.front()),
        arrival_rate_(c.system.total_arrival_rate()),
        sampled_(c.options.transient()),
        next_(1.0 / arrival_rate_),
        half_draws_(c.rng) {
    for (std::size_t n = 0; n < c.start.size(); ++n)
      for (std::uint32_t k = 0; k < c.start[n]; ++k) place(static_cast<std::uint32_t>(n));
    rate_ = arrival_rate_ + speed_ * static_cast<double>(busy_);
    next_ = holding_time();
    if (own_draw_) draw_servers();
    probe_ = half_draws_.below(N_);
  }

  std::uint64_t events() const { return events_; }

  // The Markov race with expected holding times, as RaceClock: N lambda + speed x busy servers
  // (drawn ones in the transient mode, where the state at a given time is observed).
  void run_until(double t_end) {
    while (next_ <= t_end) {
      t_ = next_;
      ++events_;
      if (half_draws_.uniform() * rate_ < arrival_rate_) {
        arrive();
      } else {
        depart();
      }
      rate_ = arrival_rate_ + speed_ * static_cast<double>(busy_);
      next_ = t_ + holding_time();
    }
    t_ = t_end;
  }

 private:
  double holding_time() const { return (sampled_ ? exponential_(c_.rng) : 1.0) / rate_; }

  // A job of the start at server n.
  void place(std::uint32_t n) {
    c_.observer.add_job_pooled(0.0, static_cast<int>(lengths_[n]));
    if (lengths_[n]++ == 0) ++busy_;
  }

  void arrive() {
    int type = -1;
    const int* servers = drawn_.data();
    if (!own_draw_) {
      type = c_.types.sample(c_.rng, family_draw_);
      servers = family_draw_.data();
    }
    const int n = choose(servers);
    const std::uint32_t length = lengths_[idx(n)];
    c_.observer.add_job_pooled(t_, static_cast<int>(length));
    c_.observer.record_erlang_sojourn(type, n, static_cast<int>(length) + 1);
    if (length == 0) ++busy_;
    lengths_[idx(n)] = length + 1;
    if (own_draw_) draw_servers();
  }

  // k_ distinct servers, uniformly in uniformly random order: the second of two skips the first
  // (one 64-bit draw for both), more redraw repeats. Drawn one arrival ahead (the draw does not
  // depend on the state), so that their lengths can be fetched from memory meanwhile.
  void draw_servers() {
    const std::uint32_t first = half_draws_.below(N_);
    drawn_[0] = static_cast<int>(first);
    if (k_ == 2) {
      const std::uint32_t second = half_draws_.below(N_ - 1);
      drawn_[1] = static_cast<int>(second + (second >= first ? 1 : 0));
    } else {
      for (std::size_t i = 1; i < idx(k_); ++i) {
        int n = 0;
        do {
          n = static_cast<int>(half_draws_.below(N_));
        } while (std::find(drawn_.begin(), drawn_.begin() + static_cast<std::ptrdiff_t>(i), n) !=
                 drawn_.begin() + static_cast<std::ptrdiff_t>(i));
        drawn_[i] = n;
      }
    }
    for (std::size_t i = 0; i < idx(k_); ++i) __builtin_prefetch(&lengths_[idx(drawn_[i])]);
  }

  // The first server tried is drawn one departure ahead, as the arrivals' servers.
  void depart() {
    std::uint32_t n = probe_;
    while (lengths_[n] == 0) n = half_draws_.below(N_);
    const std::uint32_t length = lengths_[n];
    c_.observer.remove_job_pooled(t_, static_cast<int>(length));
    lengths_[n] = length - 1;
    if (length == 1) --busy_;
    probe_ = half_draws_.below(N_);
    __builtin_prefetch(&lengths_[probe_]);
  }

  // Among servers[0..k_), which come in uniformly random order: the first of those the policy
  // ranks best is uniform among them (ties at random, no draw).
  int choose(const int* servers) const {
    if constexpr (P == Policy::random) {
      return servers[0];
    } else if constexpr (P == Policy::jiq) {
      for (int i = 0; i < k_; ++i)
        if (lengths_[idx(servers[i])] == 0) return servers[i];
      return servers[0];
    } else {
      static_assert(P == Policy::jsq || P == Policy::power_of_d);
      int best = servers[0];
      for (int i = 1; i < k_; ++i)
        if (lengths_[idx(servers[i])] < lengths_[idx(best)]) best = servers[i];
      return best;
    }
  }

  KernelContext c_;
  std::vector<std::uint32_t> lengths_;  // jobs at each server
  std::uint32_t N_;
  int k_;          // servers a policy looks at
  bool own_draw_;  // drawn by draw_servers(), else by the family
  std::array<int, kMaxPooledDraw> drawn_{};
  std::vector<int> family_draw_;
  std::uint32_t busy_ = 0;   // servers with a job
  std::uint32_t probe_ = 0;  // the next departure's first server to try
  double speed_, arrival_rate_;
  bool sampled_;  // drawn holding times (transient mode), else their means
  const ExponentialZiggurat& exponential_ = ExponentialZiggurat::instance();
  double rate_ = arrival_rate_;  // arrival_rate_ + speed_ x busy_
  double t_ = 0.0, next_;        // now and the next event
  std::uint64_t events_ = 0;
  HalfDraws half_draws_;
};

template <Policy P>
std::uint64_t run_pooled(const KernelContext& context, const ReplicationPlan& plan) {
  PooledDispatch<P> kernel(context);
  kernel.run_until(plan.warmup);
  context.observer.start(plan.warmup);
  kernel.run_until(plan.warmup + plan.horizon);
  return kernel.events();
}

}  // namespace

std::uint64_t run_pooled_dispatch(const KernelContext& context, const ReplicationPlan& plan) {
  switch (context.options.policy) {
    case Policy::jsq:
      return run_pooled<Policy::jsq>(context, plan);
    case Policy::random:
      return run_pooled<Policy::random>(context, plan);
    case Policy::jiq:
      return run_pooled<Policy::jiq>(context, plan);
    case Policy::power_of_d:
      return run_pooled<Policy::power_of_d>(context, plan);
    case Policy::redundancy_coc:
    case Policy::redundancy_cos:
      break;
  }
  throw Error("run_pooled_dispatch: not a dispatching policy of the pooled kernel");
}

}  // namespace qsweep::sim
