#pragma once
// One replication of the simulator, below simulate(): what the estimators in simulate.cpp are
// built from, and what the tests and benchmarks drive directly (docs/sim.md).
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "qsweep/model/model.hpp"
#include "qsweep/sim/options.hpp"

namespace qsweep::sim {

enum class Kernel {
  automatic,     // markov where it applies, else event_driven
  markov,        // race of exponential clocks (exponential service, independent replica sizes,
                 // any policy but redundancy_cos): no residual sizes, no event queue
  event_driven,  // per-server completion times in an indexed heap: any service distribution
  pooled,        // the markov race on queue lengths alone, servers observed together: dispatching
                 // (jsq, random, jiq, power_of_d) on complete with d < N, identical speeds and
                 // exponential service (all conditions: docs/sim.md, "Pooled dispatching")
};

// More jobs than this in the system at once ends a replication with an Error (unstable system).
inline constexpr std::size_t kMaxJobsInSystem = std::size_t{1} << 22;

// The kernel `automatic` resolves to for these options (markov or event_driven), and for these
// options on this system (pooled where it applies).
Kernel resolve_kernel(const Options& options);
Kernel resolve_kernel(const model::System& system, const Options& options);
// The same with system.identical_speeds() given (the planner keeps it per system).
Kernel resolve_kernel(const model::System& system, const Options& options, bool identical_speeds);

// Sojourn times in log-spaced bins: 2^7 bins per octave over [2^-32, 2^32) (relative width
// 2^-7 < 0.8%); values outside land in the first or last bin. Memory is fixed (64 KiB). Counts
// are real numbers: a law can be added by its expected counts (add_erlang).
class SojournHistogram {
 public:
  static constexpr int kMantissaBits = 7;
  static constexpr int kMinExponent = -32, kMaxExponent = 32;
  static constexpr int kBins = (kMaxExponent - kMinExponent) << kMantissaBits;
  static_assert(kMinExponent == -32 && kMaxExponent == 32, "bin() tests against 2^-32 and 2^32");

  SojournHistogram() : counts_(kBins, 0.0) {}
  void add(double x) {
    counts_[static_cast<std::size_t>(bin(x))] += 1.0;
    total_ += 1.0;
  }
  // Adds weight[k] sojourn times distributed as the sum of k independent Exp(rate) times
  // (Erlang; k >= 1, weight[0] is ignored) by their expected counts in every bin.
  void add_erlang(double rate, const std::vector<double>& weight);
  // Adds other's counts times `weight` (-1: removes a histogram contained in this one).
  void merge(const SojournHistogram& other, double weight = 1.0);
  double total() const { return total_; }
  // The p-quantile, interpolated linearly inside its bin; NaN if empty.
  double quantile(double p) const;
  // The same at every level of `levels` (increasing), in one pass over the bins.
  std::vector<double> quantiles(const std::vector<double>& levels) const;

  static int bin(double x) {
    if (!(x >= 0x1.0p-32)) return 0;
    if (x >= 0x1.0p32) return kBins - 1;
    // The binary exponent and the leading mantissa bits of a positive normal double.
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const auto exponent = static_cast<int>(bits >> 52) - 1023;
    const auto mantissa =
        static_cast<int>((bits >> (52 - kMantissaBits)) & ((1U << kMantissaBits) - 1));
    return ((exponent - kMinExponent) << kMantissaBits) | mantissa;
  }
  static double lower_edge(int bin);

  friend bool operator==(const SojournHistogram&, const SojournHistogram&) = default;

 private:
  std::vector<double> counts_;
  double total_ = 0.0;
};

// The batch series of a replication (ReplicationPlan::batches): this many batches of equal
// length over the observation, and the starts (in batches) of the windows it also reports; the
// truncation point chosen for the estimates is one of them (docs/sim.md, "Output analysis").
inline constexpr int kSeriesBatches = 1024;
inline constexpr std::array<int, 5> kTruncationBatches = {0, 64, 128, 256, 512};

struct ReplicationPlan {
  double warmup = 0.0;   // simulated time before observation starts (from options.start)
  double horizon = 0.0;  // observed time after warm-up
  int batches = 0;       // kSeriesBatches: record the series and the truncated windows; 0: none
};

// What one replication observed over [warmup, warmup + horizon]. Time averages are divided by
// the observed time. Sojourn times are those of the jobs that left during the observation; the
// dispatching Markov kernel instead records each job arriving during it by the law of its sojourn
// time given what it found (Erlang: the jobs ahead plus its own, at its server's speed).
// (docs/sim.md, "Expected holding times").
struct ReplicationStats {
  double mean_Q = 0.0, mean_Q2 = 0.0;
  std::vector<double> pmf;          // fraction of time with Q = q, q = 0..qmax
  std::vector<double> occupancy;    // mean fraction of servers with >= i jobs, i = 1..occupancy_max
  std::vector<double> mean_Q_type;  // tracked types only
  std::vector<double> sojourn_sum_type;           // tracked types only
  std::vector<std::uint64_t> sojourn_count_type;  // tracked types only
  double sojourn_sum = 0.0;
  std::uint64_t sojourn_count = 0;          // jobs whose sojourn time is in sojourn_sum
  std::vector<double> mean_R, utilisation;  // per server, or one value for all (pooled_servers)
  bool pooled_servers = false;  // exchangeable servers observed together (Kernel::pooled)
  SojournHistogram sojourn;
  // For each of options.tail_times, the number of the sojourn times counted in sojourn_count that
  // exceed it (with Erlang laws: their expected number, from the laws).
  std::vector<double> sojourn_above;
  // Transient mode (options.observe_times): Q and, row-major (times x occupancy_max), the
  // fraction of servers with >= i jobs at each of the times.
  std::vector<double> observed_Q, observed_occupancy;
  std::uint64_t events = 0;           // arrivals + departures, warm-up included
  std::uint64_t observed_events = 0;  // arrivals + departures during the observation
  // plan.batches > 0: per batch the mean of Q and the sum and number of the sojourn times
  // recorded in it; and truncated[k - 1], the same statistics over the window from batch
  // kTruncationBatches[k] to the end (k >= 1; without series and windows of their own).
  std::vector<double> batch_Q, batch_T_sum, batch_T_count;
  std::vector<ReplicationStats> truncated;
};

// The queue length of each server at time 0 for options.start (docs/sim.md, "Starting states"):
// empty; the mean-field fixed point of the policy at rho = lambda / speed (jsq, jiq, random and
// power_of_d on complete with identical speeds); or initial_counts, normalised, as counts of
// servers by largest remainders. Servers get the lengths in ascending order of their index.
// Throws InputError where the start does not apply; validate_start() checks that alone (no
// allocation of N lengths).
std::vector<std::uint32_t> start_lengths(const model::System& system, const Options& options);
void validate_start(const model::System& system, const Options& options);

// Runs replication `replication` with randomness from Rng(seed, task_id, replication).
// Does not validate `options` (simulate() does); throws InputError if `kernel` is markov where it
// does not apply, Error if more than kMaxJobsInSystem jobs accumulate.
ReplicationStats run_replication(const model::System& system, const Options& options,
                                 std::uint64_t seed, std::uint64_t task_id,
                                 std::uint64_t replication, const ReplicationPlan& plan,
                                 Kernel kernel = Kernel::automatic);

// MSER-5 truncation point (White 1997): the window means are grouped in batches of 5 and the start
// d (in batches, d <= half of them) minimising the variance of the remaining mean,
// sum_{i >= d} (b_i - mean_d)^2 / (m - d)^2, is returned as simulated time (d * 5 * window).
// from_empty: only starts whose cut-off batches have a lower mean than the rest count (from empty
// the initialisation bias is downwards, so cutting a high stretch would only remove a burst).
double mser5_warmup(const std::vector<double>& window_means, double window, bool from_empty);
// The largest warm-up mser5_warmup can return for this many windows (half the batches): a
// detected warm-up equal to it means the transient may be longer than the rule can see.
double mser5_max_warmup(std::size_t windows, double window);

}  // namespace qsweep::sim
