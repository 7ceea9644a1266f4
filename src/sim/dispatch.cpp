// Dispatching: every job is sent on arrival to one server of its type and served there FCFS.
// jsq, random, jiq and power_of_d look at queue lengths; redundancy_cos (cancel-on-start) sends
// the job to the server of its type where it would start first, i.e. join the smallest workload
// (paper section 6): with FCFS servers, the replicas that would wait elsewhere are the ones
// cancelled when this one starts, so they never change anything.
#include <algorithm>

#include "kernels.hpp"

namespace qsweep::sim {

namespace {

struct QueuedJob {
  double arrival = 0.0;
  double size = 0.0;  // unused by the Markov kernel
  int type = -1;
};

// Queues and the server choice, shared by both kernels.
class Servers {
 public:
  explicit Servers(const KernelContext& c)
      : c_(c),
        queues_(idx(c.system.N())),
        // JSQ and JIQ over all servers read the shortest and the idle servers off the buckets.
        use_buckets_(c.types.all_servers() &&
                     (c.options.policy == Policy::jsq || c.options.policy == Policy::jiq)),
        buckets_(use_buckets_ ? c.system.N() : 0) {}

  const RingQueue<QueuedJob>& queue(int n) const { return queues_[idx(n)]; }
  void push(int n, const QueuedJob& job) {
    queues_[idx(n)].push(job);
    if (use_buckets_) buckets_.increment(n);
  }
  QueuedJob pop(int n) {
    auto& queue = queues_[idx(n)];
    const QueuedJob job = queue.front();
    queue.pop();
    if (use_buckets_) buckets_.decrement(n);
    return job;
  }

  // The server chosen for a job of type `servers` (which may be reordered).
  int choose(std::vector<int>& servers) {
    const auto k = servers.size();
    switch (c_.options.policy) {
      case Policy::random:
        return servers[c_.rng.below(k)];
      case Policy::jsq:
        if (use_buckets_) return buckets_.at(uniform_index(buckets_.shortest_count()));
        return shortest(servers.data(), k);
      case Policy::jiq: {
        if (use_buckets_) {
          const int idle = buckets_.idle_count();
          return idle > 0 ? buckets_.at(uniform_index(idle)) : servers[c_.rng.below(k)];
        }
        int pick = -1;
        std::uint64_t idle = 0;
        for (int n : servers)  // reservoir sampling: uniform among the idle servers
          if (queues_[idx(n)].empty() && (++idle == 1 || c_.rng.below(idle) == 0)) pick = n;
        return idle > 0 ? pick : servers[c_.rng.below(k)];
      }
      case Policy::power_of_d: {
        const auto d = std::min(k, static_cast<std::size_t>(c_.options.policy_d));
        for (std::size_t i = 0; i < d && d < k; ++i)  // partial Fisher-Yates: d distinct servers
          std::swap(servers[i], servers[i + c_.rng.below(k - i)]);
        return shortest(servers.data(), d);
      }
      case Policy::redundancy_coc:
      case Policy::redundancy_cos:
        break;
    }
    return servers.front();
  }

 private:
  // Uniform in [0, count), count >= 1, without a draw when there is no choice.
  int uniform_index(int count) {
    return count == 1 ? 0 : static_cast<int>(c_.rng.below(static_cast<std::uint64_t>(count)));
  }

  // Shortest queue among servers[0..k), ties uniformly at random (reservoir sampling).
  int shortest(const int* servers, std::size_t k) {
    int best = servers[0];
    std::size_t best_length = queues_[idx(best)].size();
    std::uint64_t ties = 1;
    for (std::size_t i = 1; i < k; ++i) {
      const std::size_t length = queues_[idx(servers[i])].size();
      if (length < best_length) {
        best = servers[i];
        best_length = length;
        ties = 1;
      } else if (length == best_length && c_.rng.below(++ties) == 0) {
        best = servers[i];
      }
    }
    return best;
  }

  KernelContext c_;
  std::vector<RingQueue<QueuedJob>> queues_;
  bool use_buckets_;
  LengthBuckets buckets_;
};

// Exponential sizes: the Markov race (RaceClock).
class DispatchMarkov {
 public:
  explicit DispatchMarkov(const KernelContext& c) : c_(c), clock_(c), servers_(c) {}

  void run_until(double t_end) {
    clock_.run_until(
        t_end, [this] { arrive(); }, [this](int n) { depart(n); });
  }
  std::uint64_t events() const { return clock_.events(); }

 private:
  void arrive() {
    const int type = c_.types.sample(c_.rng, type_);
    const int n = servers_.choose(type_);
    if (servers_.queue(n).empty()) clock_.busy.add(n);
    servers_.push(n, {clock_.now(), 0.0, type});
    c_.observer.add_job(clock_.now(), type, &n, 1);
  }

  void depart(int n) {
    const QueuedJob job = servers_.pop(n);
    if (servers_.queue(n).empty()) clock_.busy.remove(n);
    c_.observer.remove_job(clock_.now(), job.type, &n, 1, job.arrival);
  }

  KernelContext c_;
  RaceClock clock_;
  Servers servers_;
  std::vector<int> type_;
};

// Any size distribution: sizes drawn at arrival (EventClock).
class DispatchEvents {
 public:
  explicit DispatchEvents(const KernelContext& c)
      : c_(c),
        clock_(c),
        sizes_(c.options.service),
        servers_(c),
        free_at_(idx(c.system.N()), 0.0) {}

  void run_until(double t_end) {
    clock_.run_until(
        t_end, [this] { arrive(); }, [this](int n) { depart(n); });
  }
  std::uint64_t events() const { return clock_.events(); }

 private:
  double service_time(int n, double size) const { return size / c_.system.speeds[idx(n)]; }

  // Cancel-on-start: the server where the job would start first (it frees first); servers that
  // tie (several idle ones, or equal deterministic backlogs) are chosen uniformly.
  int earliest_start(const std::vector<int>& servers) {
    const double now = clock_.now();
    int best = servers[0];
    double best_start = std::max(free_at_[idx(best)], now);
    std::uint64_t ties = 1;
    for (std::size_t i = 1; i < servers.size(); ++i) {
      const double start = std::max(free_at_[idx(servers[i])], now);
      if (start < best_start) {
        best = servers[i];
        best_start = start;
        ties = 1;
      } else if (start == best_start && c_.rng.below(++ties) == 0) {
        best = servers[i];
      }
    }
    return best;
  }

  void arrive() {
    const double now = clock_.now();
    const int type = c_.types.sample(c_.rng, type_);
    const double size = sizes_(c_.rng);
    const int n = c_.options.policy == Policy::redundancy_cos ? earliest_start(type_)
                                                              : servers_.choose(type_);
    if (servers_.queue(n).empty()) clock_.completions.set(n, now + service_time(n, size));
    servers_.push(n, {now, size, type});
    free_at_[idx(n)] = std::max(free_at_[idx(n)], now) + service_time(n, size);
    c_.observer.add_job(now, type, &n, 1);
  }

  void depart(int n) {
    const QueuedJob job = servers_.pop(n);
    const auto& queue = servers_.queue(n);
    if (queue.empty()) {
      clock_.completions.remove(n);
    } else {
      clock_.completions.set(n, clock_.now() + service_time(n, queue.front().size));
    }
    c_.observer.remove_job(clock_.now(), job.type, &n, 1, job.arrival);
  }

  KernelContext c_;
  EventClock clock_;
  SizeSampler sizes_;
  Servers servers_;
  std::vector<double> free_at_;  // when each server's queue empties (cancel-on-start)
  std::vector<int> type_;
};

}  // namespace

std::uint64_t run_dispatch(const KernelContext& context, Kernel kernel,
                           const ReplicationPlan& plan) {
  if (kernel == Kernel::markov) {
    DispatchMarkov k(context);
    return drive(k, context.observer, plan);
  }
  DispatchEvents k(context);
  return drive(k, context.observer, plan);
}

}  // namespace qsweep::sim
