// Dispatching: every job is sent on arrival to one server of its type and served there FCFS.
// jsq, random, jiq and power_of_d look at queue lengths; redundancy_cos (cancel-on-start) sends
// the job to the server of its type where it would start first, i.e. join the smallest workload
// (paper section 6): with FCFS servers, the replicas that would wait elsewhere are the ones
// cancelled when this one starts, so they never change anything.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels.hpp"
#include "qsweep/common/error.hpp"

namespace qsweep::sim {

namespace {

// A job waiting or in service at its server in the event-driven kernel (the Markov kernel
// queues only job types: it records sojourn times on arrival).
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct QueuedJob {
  double arrival = 0.0;
  double size = 0.0;
  int type = -1;
};

// The server of servers[0..k) with the smallest key(n), ties uniformly at random (reservoir
// sampling: the i-th tie replaces the pick with probability 1/i).
template <class Key>
int smallest_key(const int* servers, std::size_t k, const Key& key, Rng& rng) {
  int best = servers[0];
  auto best_key = key(best);
  std::uint64_t ties = 1;
  for (std::size_t i = 1; i < k; ++i) {
    const auto value = key(servers[i]);
    if (value < best_key) {
      best = servers[i];
      best_key = value;
      ties = 1;
    } else if (value == best_key && rng.below(++ties) == 0) {
      best = servers[i];
    }
  }
  return best;
}

// Queues of `Job`s and the server choice of policy P, shared by both kernels (a template, so
// that each policy's choice inlines into its kernel's arrivals).
template <Policy P, class Job>
class Servers {
 public:
  explicit Servers(const KernelContext& c)
      : c_(c),
        queues_(idx(c.system.N())),
        // JSQ and JIQ over all servers read the shortest and the idle servers off the buckets.
        // Coupled streams on identical servers: departures by rank (RaceClock::rank_departures).
        use_buckets_((c.types.all_servers() && (P == Policy::jsq || P == Policy::jiq)) ||
                     (c.options.coupled_streams() && c.system.identical_speeds())),
        buckets_(use_buckets_ ? c.system.N() : 0),
        random_order_(c.types.random_order()),
        coupled_(c.options.coupled_streams()),
        by_quantile_(coupled_ && use_buckets_ && c.types.all_servers()) {}

  const RingQueue<Job>& queue(int n) const { return queues_[idx(n)]; }
  const LengthBuckets* buckets() const { return use_buckets_ ? &buckets_ : nullptr; }
  void push(int n, const Job& job) {
    queues_[idx(n)].push(job);
    if (use_buckets_) buckets_.increment(n);
  }
  Job pop(int n) {
    auto& queue = queues_[idx(n)];
    const Job job = queue.front();
    queue.pop();
    if (use_buckets_) buckets_.decrement(n);
    return job;
  }

  // The server chosen for a job of type `servers` (which may be reordered).
  int choose(std::vector<int>& servers) {
    if (coupled_) c_.policy_rng.restart(++arrivals_);
    if constexpr (P == Policy::random || P == Policy::power_of_d) {
      if (by_quantile_) {
        const int d = P == Policy::random ? 1 : c_.options.policy_d;
        return shortest_of_sample(std::min(d, buckets_.size()));
      }
    }
    if constexpr (P == Policy::random) {
      return uniform(servers);
    } else if constexpr (P == Policy::jsq) {
      if (use_buckets_) return buckets_.at(uniform_index(buckets_.shortest_count()));
      return shortest(servers.data(), servers.size(), random_order_);
    } else if constexpr (P == Policy::jiq) {
      if (use_buckets_) {
        const int idle = buckets_.idle_count();
        return idle > 0 ? buckets_.at(uniform_index(idle)) : uniform(servers);
      }
      int pick = -1;
      std::uint64_t idle = 0;
      for (int n : servers) {  // uniform among the idle servers: the first, or reservoir sampling
        if (!queues_[idx(n)].empty()) continue;
        if (random_order_) return n;
        if (++idle == 1 || c_.policy_rng.below(idle) == 0) pick = n;
      }
      return idle > 0 ? pick : uniform(servers);
    } else {
      static_assert(P == Policy::power_of_d, "redundancy policies choose no single server");
      // d distinct servers in random order: the first d if the type's order is random already,
      // else by a partial Fisher-Yates shuffle (not needed when d is all of them).
      const auto k = servers.size();
      const auto d = std::min(k, static_cast<std::size_t>(c_.options.policy_d));
      // Coupled: distinct servers by rejection in draw order, from the arrival's fresh draws,
      // leaving `servers` as it is, so that d = 3 samples d = 2's servers and one more.
      if (coupled_ && !random_order_ && 2 * d <= k) {
        sample_.clear();
        while (sample_.size() < d) {
          const int n = drawn(servers, c_.policy_rng.below(k));
          if (std::find(sample_.begin(), sample_.end(), n) == sample_.end()) sample_.push_back(n);
        }
        return shortest(sample_.data(), d, true);
      }
      if (!random_order_ && d < k)
        for (std::size_t i = 0; i < d; ++i)
          std::swap(servers[i], servers[i + c_.policy_rng.below(k - i)]);
      return shortest(servers.data(), d, random_order_ || d < k);
    }
  }

 private:
  // Coupled, every server a job's, identical servers in length order: the position of the
  // shortest of d servers sampled uniformly, by inversion of its law from one uniform
  // (P(position >= j) = C(N - j, d) / C(N, d)), so that every d turns the same uniform into
  // positions in the same order (d = 3 never longer than d = 2); then a server of that length
  // uniformly, as the shortest sampled one is.
  int shortest_of_sample(int d) {
    const int N = buckets_.size();
    const double survive = 1.0 - c_.policy_rng.uniform();  // in (0, 1]
    const auto at_least = [N, d](int j) {                  // P(position >= j)
      double p = 1.0;
      for (int i = 0; i < d && p > 0.0; ++i)
        p *= std::max(0.0, static_cast<double>(N - j - i)) / (N - i);
      return p;
    };
    int j = std::clamp(static_cast<int>(N * (1.0 - std::pow(survive, 1.0 / d))), 0, N - d);
    while (j > 0 && at_least(j) < survive) --j;
    while (j + 1 <= N - d && at_least(j + 1) >= survive) ++j;
    const int first = buckets_.group_start(buckets_.at(j));
    const int count = buckets_.group_end(buckets_.at(j)) - first;
    return buckets_.at(first + uniform_index(count));
  }

  // A server of the type uniformly: the first if the type's order is random.
  int uniform(const std::vector<int>& servers) {
    return random_order_ ? servers[0] : drawn(servers, c_.policy_rng.below(servers.size()));
  }

  // The server at position i of the type, drawn uniformly: coupled with all servers, the i-th
  // shortest, so that two policies' systems receive at corresponding places of their profiles.
  int drawn(const std::vector<int>& servers, std::uint64_t i) const {
    const bool by_length = coupled_ && use_buckets_ && c_.types.all_servers();
    return by_length ? buckets_.at(static_cast<int>(i)) : servers[i];
  }

  // Uniform in [0, count), count >= 1, without a draw when there is no choice.
  int uniform_index(int count) {
    return count == 1 ? 0
                      : static_cast<int>(c_.policy_rng.below(static_cast<std::uint64_t>(count)));
  }

  // Shortest queue among servers[0..k), ties uniformly at random: in a uniformly random order
  // the first shortest is uniform among the shortest.
  int shortest(const int* servers, std::size_t k, bool random_order) {
    const auto length = [this](int n) { return queues_[idx(n)].size(); };
    if (!random_order) return smallest_key(servers, k, length, c_.policy_rng);
    int best = servers[0];
    for (std::size_t i = 1; i < k; ++i)
      if (length(servers[i]) < length(best)) best = servers[i];
    return best;
  }

  KernelContext c_;
  std::vector<RingQueue<Job>> queues_;
  bool use_buckets_;
  LengthBuckets buckets_;
  bool random_order_;  // job types come in uniformly random order
  bool coupled_;       // common random numbers: the policy's draws start afresh per arrival
  bool by_quantile_;   // coupled over all servers by length: shortest_of_sample()
  std::uint64_t arrivals_ = 0;
  std::vector<int> sample_;  // power_of_d's servers, coupled
};

// Exponential sizes: the Markov race (RaceClock), advanced by expected holding times. A job
// that joins a queue of k jobs at server n leaves after k + 1 services, whatever happens later
// (FCFS, no overtaking): its sojourn time is Erlang(k + 1, mu_n), recorded as that law. The
// transient mode draws the holding times: the state at a given time needs the real clock.
template <Policy P>
class DispatchMarkov {
 public:
  explicit DispatchMarkov(const KernelContext& c)
      : clock(c, c.options.transient() ? HoldingTimes::sampled : HoldingTimes::expected),
        c_(c),
        servers_(c) {
    if (c.options.coupled_streams() && c.system.identical_speeds())
      clock.rank_departures(servers_.buckets());
    for (std::size_t n = 0; n < c.start.size(); ++n)
      for (std::uint32_t k = 0; k < c.start[n]; ++k) place(static_cast<int>(n));
    if (!c.start.empty()) clock.restart();
  }
  RaceClock clock;

  void arrive() {
    const int type = c_.types.sample(c_.rng, type_);
    const int n = servers_.choose(type_);
    const auto ahead = servers_.queue(n).size();
    if (ahead == 0) clock.busy.add(n);
    servers_.push(n, type);
    c_.observer.add_job(clock.now(), type, &n, 1);
    c_.observer.record_erlang_sojourn(type, n, static_cast<int>(ahead) + 1);
  }

  // A job of the start at server n (untracked type; no sojourn time: it did not arrive).
  void place(int n) {
    if (servers_.queue(n).empty()) clock.busy.add(n);
    servers_.push(n, -1);
    c_.observer.add_job(0.0, -1, &n, 1);
  }

  void depart(int n) {
    const int type = servers_.pop(n);
    if (servers_.queue(n).empty()) clock.busy.remove(n);
    c_.observer.remove_job(clock.now(), type, &n, 1);
  }

 private:
  KernelContext c_;
  Servers<P, int> servers_;  // queues of job types
  std::vector<int> type_;
};

// Any size distribution: sizes drawn at arrival (EventClock). redundancy_cos sends the job where
// it starts first; the other policies choose as in the Markov kernel.
template <Policy P>
class DispatchEvents {
 public:
  explicit DispatchEvents(const KernelContext& c)
      : clock(c), c_(c), sizes_(c.options.service), servers_(c), free_at_(idx(c.system.N()), 0.0) {
    for (std::size_t n = 0; n < c.start.size(); ++n)
      for (std::uint32_t k = 0; k < c.start[n]; ++k) place(static_cast<int>(n));
  }
  EventClock clock;

  // A job of the start at server n, with a fresh size (untracked type; its arrival time NaN: it
  // has no sojourn time).
  void place(int n) {
    const double size = sizes_(c_.rng);
    if (servers_.queue(n).empty()) clock.completions.set(n, service_time(n, size));
    servers_.push(n, {kNaN, size, -1});
    free_at_[idx(n)] += service_time(n, size);
    c_.observer.add_job(0.0, -1, &n, 1);
  }

  void arrive() {
    const double now = clock.now();
    const int type = c_.types.sample(c_.rng, type_);
    const double size = sizes_(c_.rng);
    int n;
    if constexpr (P == Policy::redundancy_cos) {
      n = earliest_start(type_);
    } else {
      n = servers_.choose(type_);
    }
    if (servers_.queue(n).empty()) clock.completions.set(n, now + service_time(n, size));
    servers_.push(n, {now, size, type});
    free_at_[idx(n)] = std::max(free_at_[idx(n)], now) + service_time(n, size);
    c_.observer.add_job(now, type, &n, 1);
  }

  void depart(int n) {
    const QueuedJob job = servers_.pop(n);
    const auto& queue = servers_.queue(n);
    if (queue.empty()) {
      clock.completions.remove(n);
    } else {
      clock.completions.set(n, clock.now() + service_time(n, queue.front().size));
    }
    c_.observer.remove_job(clock.now(), job.type, &n, 1);
    if (!std::isnan(job.arrival)) c_.observer.record_sojourn(job.type, clock.now() - job.arrival);
  }

 private:
  double service_time(int n, double size) const { return size / c_.system.speeds[idx(n)]; }

  // Cancel-on-start: the server where the job would start first (it frees first); servers that
  // tie (several idle ones, or equal deterministic backlogs) are chosen uniformly, or with
  // longest_idle the idle one that emptied first: the smallest free_at_ is that server if any is
  // idle (an idle server's free_at_ <= now < a busy one's) and the earliest start otherwise.
  int earliest_start(const std::vector<int>& servers) {
    if (c_.options.longest_idle) {
      const auto emptied = [this](int n) { return free_at_[idx(n)]; };
      return smallest_key(servers.data(), servers.size(), emptied, c_.policy_rng);
    }
    const auto start = [this, now = clock.now()](int n) { return std::max(free_at_[idx(n)], now); };
    return smallest_key(servers.data(), servers.size(), start, c_.policy_rng);
  }

  KernelContext c_;
  SizeSampler sizes_;
  Servers<P, QueuedJob> servers_;
  std::vector<double> free_at_;  // when each server's queue empties (cancel-on-start)
  std::vector<int> type_;
};

template <Policy P>
std::uint64_t run_policy(const KernelContext& context, Kernel kernel, const ReplicationPlan& plan) {
  if constexpr (P != Policy::redundancy_cos) {
    if (kernel == Kernel::markov) return run<DispatchMarkov<P>>(context, plan);
  }
  return run<DispatchEvents<P>>(context, plan);
}

}  // namespace

std::uint64_t run_dispatch(const KernelContext& context, Kernel kernel,
                           const ReplicationPlan& plan) {
  switch (context.options.policy) {
    case Policy::jsq:
      return run_policy<Policy::jsq>(context, kernel, plan);
    case Policy::random:
      return run_policy<Policy::random>(context, kernel, plan);
    case Policy::jiq:
      return run_policy<Policy::jiq>(context, kernel, plan);
    case Policy::power_of_d:
      return run_policy<Policy::power_of_d>(context, kernel, plan);
    case Policy::redundancy_cos:
      return run_policy<Policy::redundancy_cos>(context, kernel, plan);
    case Policy::redundancy_coc:
      break;
  }
  throw Error("run_dispatch: redundancy_coc is not a dispatching policy");
}

}  // namespace qsweep::sim
