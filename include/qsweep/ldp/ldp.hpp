#pragma once
// Rare-event estimates for many-server JSQ / JIQ / power-of-d: p = P(E_j^n(T)), the probability
// that some queue reaches j jobs by time T (docs/ldp.md).
#include <boost/serialization/string.hpp>
#include <cstdint>
#include <string>

#include "qsweep/ldp/options.hpp"

namespace qsweep::ldp {

struct Result {
  // p and its 95% interval. exact: [ci_low, ci_high] are guaranteed bounds (truncation and
  // underflow accounted for), probability = ci_low. Values below ~1e-308 underflow to 0 here;
  // log_probability never does.
  double probability = 0.0;
  double ci_low = 0.0;
  double ci_high = 0.0;
  double log_probability = 0.0;  // natural log of p (-inf if no path hit)
  double log_rate = 0.0;         // (1/n) log p; tends to -theory_rate as n grows
  double log_rate_low = 0.0;     // (1/n) log ci_low
  double log_rate_high = 0.0;    // (1/n) log ci_high
  double relative_error = 0.0;   // standard error / p (exact: (ci_high - ci_low) / p)
  double samples = 0.0;          // sample paths used (exact: 0)
  double hits = 0.0;             // sample paths that reached the event (exact: 0)
  double cpu_seconds = 0.0;      // thread CPU time of the estimate
  double theory_rate = 0.0;      // -lim (1/n) log p (jsq, decay_rate_fixed_lambda); NaN otherwise
  double events = 0.0;  // simulated events (importance: chain steps; exact: uniformization steps)
  double tilt = 1.0;    // importance: u (arrivals x u, service x 1/u); exact: the
                        // tilt a of the vector (docs/ldp.md, "Range"); else 1
  double states = 0.0;  // exact: states of the lumped chain; else 0
  // Paths the estimate effectively rests on, (sum of weights)^2 / sum of squared weights:
  // monte_carlo: hits; importance: at most hits; exact: 0.
  double effective_samples = 0.0;
  // Empty, or "; "-separated sentences, the most serious first (docs/ldp.md, "Warnings").
  std::string warning;

  friend bool operator==(const Result&, const Result&) = default;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // `ar & a & b` is an expression; clang-format would write `ar& a& b`.
    // clang-format off
    ar & probability & ci_low & ci_high & log_probability & log_rate & log_rate_low &
        log_rate_high & relative_error & samples & hits & cpu_seconds & theory_rate & events &
        tilt & states & effective_samples & warning;
    // clang-format on
  }
};

// Throws qsweep::InputError (one line) unless the options describe a supported estimate.
void validate(const Options& options);

// Validates, then estimates. Randomness comes only from qsweep::Rng(seed, task_id, path) with one
// stream per sample path, so results do not depend on where or in which order tasks run.
Result estimate(const Options& options, std::uint64_t seed, std::uint64_t task_id);

}  // namespace qsweep::ldp
