#pragma once
// The Poisson distribution: the clock of a uniformized chain.
#include <cstdint>

#include "qsweep/common/rng.hpp"

namespace qsweep::ldp {

// log P(Poisson(mu) >= k), accurate in both tails (k >= 0, mu >= 0); -inf where it is 0.
double log_poisson_tail(std::int64_t k, double mu);

// Chernoff bound: log P(Poisson(mu) >= k) <= -(k log(k / mu) - k + mu) for k >= mu; 0 below.
double log_poisson_tail_bound(std::int64_t k, double mu);

// An exact Poisson(mean) variate (mean >= 0): inversion below mean 10, else Hormann's
// transformed rejection (PTRS, 1993).
std::int64_t sample_poisson(double mean, Rng& rng);

}  // namespace qsweep::ldp
