#pragma once
// Discrete-event simulation of redundancy and dispatching on compatibility graphs (docs/sim.md).
#include <algorithm>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "qsweep/model/model.hpp"
#include "qsweep/sim/kernel.hpp"
#include "qsweep/sim/options.hpp"

namespace qsweep::sim {

// Per-type estimates (E[Q_S], E[T_S]) are reported when the family has N <= 64 servers and at
// most this many job types; otherwise those vectors are empty.
inline constexpr double kMaxTrackedTypes = 1024;

// Result::cumulative_time holds at most this many times: the ends of the batches of the series
// at 1/1024 .. 1/2 and 1 of the run (kSeriesBatches), from which the totals are summed.
inline constexpr int kMaxCumulativeTimes = 11;

// A value per server n = 0..N-1. The pooled kernel (docs/sim.md, "Pooled dispatching") gives
// every server the same values: then one value stands for all N, so that a result of a million
// servers holds a few doubles, and its per-server columns are not made at all (the row holds the
// value and the count, sweep's `Repeated`; the store writes them in pieces).
class ServerValues {
 public:
  ServerValues() = default;
  explicit ServerValues(std::vector<double> values)
      : values_(std::move(values)), size_(values_.size()) {}
  // `value` at each of `servers` servers.
  ServerValues(double value, std::size_t servers) : values_{value}, size_(servers) {}

  std::size_t size() const { return static_cast<std::size_t>(size_); }
  bool empty() const { return size_ == 0; }
  bool one_value() const { return values_.size() == 1; }  // one value stands for every server
  double operator[](std::size_t n) const { return values_.size() == 1 ? values_[0] : values_[n]; }
  double front() const { return values_.front(); }
  double back() const { return values_.back(); }
  std::vector<double> to_vector() const {
    return values_.size() == 1 ? std::vector<double>(size(), values_[0]) : values_;
  }
  void fill(double value) { std::fill(values_.begin(), values_.end(), value); }

  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    ar& values_;
    ar& size_;
  }

 private:
  std::vector<double> values_;  // one per server, or one for all
  std::uint64_t size_ = 0;      // servers
};

// Result::flags: the diagnostics that failed, one bit each (docs/sim.md, "Output analysis"; the
// column `flags` of /simulate). 0: the intervals can be trusted.
inline constexpr std::uint32_t flag_warmup_not_over = 1;  // truncation at its cap (half the run)
inline constexpr std::uint32_t flag_correlated = 2;       // batch means correlated (von Neumann)
inline constexpr std::uint32_t flag_short_run = 4;        // batches short against tau_int of Q
inline constexpr std::uint32_t flag_replications_disagree = 8;  // F test of replication means
inline constexpr std::uint32_t flag_budget_spent = 16;      // max_events before validity or target
inline constexpr std::uint32_t flag_few_observations = 32;  // replications without events or ET
inline constexpr std::uint32_t flag_saturated = 64;         // a server (almost) never idle

// Every estimate comes with the half-width of its 95% confidence interval (*_hw): EQ and ET by
// replicated batch means (32 per replication after truncation), every other estimate
// by Student t over the replications' means of the same truncated window (docs/sim.md, "Output
// analysis"). hw99_factor turns the latter into 99% half-widths; for EQ and ET (R 32 - 1 degrees
// of freedom) it is at most t_{0.995} / t_{0.975} = 1.32, so hw99_factor is conservative there.
struct Result {
  double EQ = 0.0, EQ_hw = 0.0;      // time-average number of jobs in the system
  double VarQ = 0.0, VarQ_hw = 0.0;  // time-average variance of that number
  double ET = 0.0, ET_hw = 0.0;      // mean sojourn time (ratio estimator over departures)
  std::vector<double> pmf, pmf_hw;   // P(Q = q), q = 0..qmax
  // Fraction of servers holding >= i jobs (replicas for redundancy_coc), i = 1..occupancy_max;
  // entry i-1 is x_i of the mean-field literature.
  std::vector<double> occupancy, occupancy_hw;
  // Per type in Family::enumerate() order (empty beyond kMaxTrackedTypes, see above).
  std::vector<model::ServerMask> type_servers;
  std::vector<double> type_p;
  std::vector<double> EQ_type, EQ_type_hw, ET_type, ET_type_hw;
  // Per server n = 0..N-1: mean number of jobs (replicas) there, and fraction of time busy.
  ServerValues ER_server, ER_server_hw, utilisation, utilisation_hw;
  // Sojourn-time quantiles at options.quantiles (point estimate from all replications pooled,
  // half-width by sectioning over the replications; resolution 0.8% relative) and P(T > t) at
  // options.tail_times (exact counts, a ratio estimator over the replications); docs/sim.md,
  // "Sojourn-time distribution".
  std::vector<double> T_quantile, T_quantile_hw, T_tail, T_tail_hw;
  // Transient mode (options.observe_times): E[Q(t)] at each of the times and, row-major (times x
  // occupancy_max), the occupancy x_i(t), with 95% half-widths over the replications.
  std::vector<double> EQ_t, EQ_t_hw, occupancy_t, occupancy_t_hw;
  // Each replication's own E[Q] and E[T] over the window kept (replication r draws from
  // Rng(seed, task_id, r)): with common random numbers, tasks pair by replication.
  std::vector<double> EQ_replications, ET_replications;
  // With coupled streams (options.common_random_numbers), what a paired comparison over a window
  // two tasks share needs (docs/sim.md, "Common random numbers"): the times, after the warm-up
  // asked for, at which every round's windows start or end (horizon x 2^i, i = -4 .. the last
  // round, the last kMaxCumulativeTimes of them), and per replication r and time k the totals
  // from the start of the observation: cumulative_replications[3 (r K + k) + j] is the integral
  // of Q (j = 0), the sum of the sojourn times (1) and their number (2) over [0, time k] (K the
  // number of times). Empty without coupled streams.
  std::vector<double> cumulative_time, cumulative_replications;
  double warmup = 0.0;           // simulated time discarded at the start of every replication
  bool warmup_detected = false;  // true: options.warmup < 0 (MSER-5 chose all of it)
  double horizon = 0.0;          // observed simulated time per replication (after warm-up)
  int replications = 0;
  double hw99_factor = 0.0;  // t_{0.995, R-1} / t_{0.975, R-1}
  std::uint64_t events = 0;  // arrivals + departures simulated in all rounds, warm-up included
  // Signs of an untrustworthy result (docs/sim.md, "Warnings"):
  std::uint32_t flags = 0;      // flag_* above
  double correlation_time = 0;  // estimated integrated autocorrelation time of Q
  int quiet_replications = 0;   // replications with no arrival or departure after the warm-up
  // Empty, or "; "-separated sentences, the most serious first (thresholds in docs/sim.md).
  std::string warning;

  // Equality treats NaN (an estimate without observations) as equal to NaN, so that a result
  // equals its copy and its serialized round trip.
  friend bool operator==(const Result& a, const Result& b);
  // Every member, once: serialize() and operator== both walk this list.
  template <class Self>
  static auto fields(Self& r) {
    return std::tie(r.EQ, r.EQ_hw, r.VarQ, r.VarQ_hw, r.ET, r.ET_hw, r.pmf, r.pmf_hw, r.occupancy,
                    r.occupancy_hw, r.type_servers, r.type_p, r.EQ_type, r.EQ_type_hw, r.ET_type,
                    r.ET_type_hw, r.ER_server, r.ER_server_hw, r.utilisation, r.utilisation_hw,
                    r.T_quantile, r.T_quantile_hw, r.T_tail, r.T_tail_hw, r.EQ_t, r.EQ_t_hw,
                    r.occupancy_t, r.occupancy_t_hw, r.EQ_replications, r.ET_replications,
                    r.cumulative_time, r.cumulative_replications, r.warmup, r.warmup_detected,
                    r.horizon, r.replications, r.hw99_factor, r.events, r.flags, r.correlation_time,
                    r.quiet_replications, r.warning);
  }
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    std::apply([&ar](auto&... field) { ((ar & field), ...); }, fields(*this));
  }
};

// Simulates `system` under `options`. Replication r draws all its randomness from
// Rng(seed, task_id, r), in every round of the output analysis. Throws InputError for invalid
// options (one line), and Error if the number of jobs in the system exceeds kMaxJobsInSystem (an
// unstable system). `kernel` forces a kernel (tests compare them); the default picks the fastest
// that applies.
Result simulate(const model::System& system, const Options& options, std::uint64_t seed,
                std::uint64_t task_id, Kernel kernel = Kernel::automatic);

// Throws InputError naming the first invalid option (simulate() calls it first).
void validate(const Options& options);

}  // namespace qsweep::sim
