// Redundancy with cancel-on-completion: every job has a replica at each server of its type, each
// server serves its replicas FCFS, and the first replica to finish removes the job everywhere.
#include "kernels.hpp"

namespace qsweep::sim {

namespace {

// Exponential sizes, independent replicas: by memorylessness the state is the central queue
// (paper Fig. 1c), held as per-server replica lists, and every busy server completes its head
// job at rate mu_n: no residual sizes, no event queue.
class RedundancyMarkov {
 public:
  explicit RedundancyMarkov(const KernelContext& c) : c_(c), clock_(c), lists_(c.system.N()) {}

  void run_until(double t_end) {
    clock_.run_until(
        t_end, [this] { arrive(); }, [this](int n) { depart(n); });
  }
  std::uint64_t events() const { return clock_.events(); }

 private:
  void arrive() {
    const int type = c_.types.sample(c_.rng, servers_);
    for (int n : servers_)
      if (lists_.idle(n)) clock_.busy.add(n);
    lists_.add(servers_, type, clock_.now(), 0.0);
    c_.observer.add_job(clock_.now(), type, servers_.data(), servers_.size());
  }

  void depart(int n) {
    const int job = lists_.head_job(n);
    const int count = lists_.replicas(job);
    const int* servers = lists_.servers(job);
    for (int s = 0; s < count; ++s) {
      lists_.unlink(job, s);
      if (lists_.idle(servers[s])) clock_.busy.remove(servers[s]);
    }
    c_.observer.remove_job(clock_.now(), lists_.type(job), servers, static_cast<std::size_t>(count),
                           lists_.arrival(job));
    lists_.release(job);
  }

  KernelContext c_;
  RaceClock clock_;
  ReplicaLists lists_;
  std::vector<int> servers_;
};

// Any size distribution: a replica's size is drawn when it starts service (independent
// replicas) or once per job at arrival (identical replicas).
class RedundancyEvents {
 public:
  explicit RedundancyEvents(const KernelContext& c)
      : c_(c), clock_(c), sizes_(c.options.service), lists_(c.system.N()) {}

  void run_until(double t_end) {
    clock_.run_until(
        t_end, [this] { arrive(); }, [this](int n) { depart(n); });
  }
  std::uint64_t events() const { return clock_.events(); }

 private:
  void start_service(int n, int job) {
    const double size = c_.options.identical_replicas ? lists_.size(job) : sizes_(c_.rng);
    clock_.completions.set(n, clock_.now() + size / c_.system.speeds[idx(n)]);
  }

  void arrive() {
    const int type = c_.types.sample(c_.rng, servers_);
    const double size = c_.options.identical_replicas ? sizes_(c_.rng) : 0.0;
    const int job = lists_.add(servers_, type, clock_.now(), size);
    for (int n : servers_)
      if (lists_.head_job(n) == job) start_service(n, job);
    c_.observer.add_job(clock_.now(), type, servers_.data(), servers_.size());
  }

  void depart(int n) {
    const int job = lists_.head_job(n);
    const int count = lists_.replicas(job);
    const int* servers = lists_.servers(job);
    for (int s = 0; s < count; ++s) {
      const int m = servers[s];
      if (!lists_.unlink(job, s)) continue;  // m was serving an older job: nothing changes
      if (lists_.idle(m)) {
        clock_.completions.remove(m);
      } else {
        start_service(m, lists_.head_job(m));
      }
    }
    c_.observer.remove_job(clock_.now(), lists_.type(job), servers, static_cast<std::size_t>(count),
                           lists_.arrival(job));
    lists_.release(job);
  }

  KernelContext c_;
  EventClock clock_;
  SizeSampler sizes_;
  ReplicaLists lists_;
  std::vector<int> servers_;
};

}  // namespace

std::uint64_t run_redundancy(const KernelContext& context, Kernel kernel,
                             const ReplicationPlan& plan) {
  if (kernel == Kernel::markov) {
    RedundancyMarkov k(context);
    return drive(k, context.observer, plan);
  }
  RedundancyEvents k(context);
  return drive(k, context.observer, plan);
}

}  // namespace qsweep::sim
