#pragma once
// The three estimators behind ldp::estimate (options already validated).
#include <cstdint>
#include <vector>

#include "qsweep/ldp/ldp.hpp"

namespace qsweep::ldp::detail {

inline constexpr double z95 = 1.959963984540054;  // two-sided 95% normal quantile

Result monte_carlo(const Options& options, std::uint64_t seed, std::uint64_t task_id);
Result importance(const Options& options, std::uint64_t seed, std::uint64_t task_id);
// The exact chain untilted (the vector only rescaled), or tilted by u* of the optimal path when
// the event is too rare for that (jsq from the default start by the theory's rate, or any
// start after an untilted run that underflowed).
Result exact_chain(const Options& options);
// One run with the given tilt a >= 1 (1: untilted); exact_chain_tilt is the a it would use.
Result exact_chain(const Options& options, double tilt);
double exact_chain_tilt(const Options& options);

// Queues of each length at time 0 (options.initial_counts or all n of length 1).
std::vector<std::int64_t> initial_counts(const Options& options);

// States of the lumped chain the exact estimator would solve (as a double: it may be huge).
double exact_state_count(const Options& options);

// Sets probability, log_probability, the interval and the log rates from logs of p and of the
// interval ends (natural logs; -inf allowed; the upper end is capped at 1).
void set_from_logs(Result& result, double log_p, double log_low, double log_high, std::int64_t n);

}  // namespace qsweep::ldp::detail
