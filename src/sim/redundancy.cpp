// Redundancy with cancel-on-completion: every job has a replica at each server of its type, each
// server serves its replicas FCFS, and the first replica to finish removes the job everywhere.
#include "kernels.hpp"

namespace qsweep::sim {

namespace {

// The jobs with their replicas threaded into per-server FCFS lists, and what the observer sees
// of them; shared by both kernels, which differ only in what a server does when its head changes.
class Jobs {
 public:
  explicit Jobs(const KernelContext& c) : c_(c), lists_(c.system.N()) {}
  const ReplicaLists& lists() const { return lists_; }

  // A job arrives at `now` (`size`: its size for identical replicas); started(n) for every
  // server n of its type where it is at the head, i.e. that was idle.
  template <class Started>
  void arrive(double now, double size, Started&& started) {
    const int type = c_.types.sample(c_.rng, servers_);
    const int job = lists_.add(servers_, type, now, size);
    for (int n : servers_)
      if (lists_.head_job(n) == job) started(n);
    c_.observer.add_job(now, type, servers_.data(), servers_.size());
  }

  // The job at the head of server n finishes at `now` and leaves every server; head_changed(m)
  // for every server m where it was at the head (m is now idle or serves its next job).
  template <class HeadChanged>
  void depart(double now, int n, HeadChanged&& head_changed) {
    const int job = lists_.head_job(n);
    const int count = lists_.replicas(job);
    const int* servers = lists_.servers(job);
    for (int s = 0; s < count; ++s)
      if (lists_.unlink(job, s)) head_changed(servers[s]);
    c_.observer.remove_job(now, lists_.type(job), servers, static_cast<std::size_t>(count));
    c_.observer.record_sojourn(lists_.type(job), now - lists_.arrival(job));
    lists_.release(job);
  }

 private:
  KernelContext c_;
  ReplicaLists lists_;
  std::vector<int> servers_;
};

// Exponential sizes, independent replicas: by memorylessness the state is the central queue
// (paper Fig. 1c), held as per-server replica lists, and every busy server completes its head
// job at rate mu_n: no residual sizes, no event queue.
class RedundancyMarkov {
 public:
  explicit RedundancyMarkov(const KernelContext& c) : clock(c, HoldingTimes::sampled), jobs_(c) {}
  RaceClock clock;

  void arrive() {
    jobs_.arrive(clock.now(), 0.0, [this](int n) { clock.busy.add(n); });
  }
  void depart(int n) {
    jobs_.depart(clock.now(), n, [this](int m) {
      if (jobs_.lists().idle(m)) clock.busy.remove(m);
    });
  }

 private:
  Jobs jobs_;
};

// Any size distribution: a replica's size is drawn when it starts service (independent
// replicas) or once per job at arrival (identical replicas).
class RedundancyEvents {
 public:
  explicit RedundancyEvents(const KernelContext& c)
      : clock(c), c_(c), sizes_(c.options.service), jobs_(c) {}
  EventClock clock;

  void arrive() {
    const double size = c_.options.identical_replicas ? sizes_(c_.rng) : 0.0;
    jobs_.arrive(clock.now(), size, [this](int n) { start_service(n); });
  }
  void depart(int n) {
    jobs_.depart(clock.now(), n, [this](int m) {
      if (jobs_.lists().idle(m)) {
        clock.completions.remove(m);
      } else {
        start_service(m);
      }
    });
  }

 private:
  // Server n starts its head replica.
  void start_service(int n) {
    const int job = jobs_.lists().head_job(n);
    const double size =
        c_.options.identical_replicas ? jobs_.lists().size(job) : sizes_(c_.service_rng);
    clock.completions.set(n, clock.now() + size / c_.system.speeds[idx(n)]);
  }

  KernelContext c_;
  SizeSampler sizes_;
  Jobs jobs_;
};

}  // namespace

std::uint64_t run_redundancy(const KernelContext& context, Kernel kernel,
                             const ReplicationPlan& plan) {
  return kernel == Kernel::markov ? run<RedundancyMarkov>(context, plan)
                                  : run<RedundancyEvents>(context, plan);
}

}  // namespace qsweep::sim
