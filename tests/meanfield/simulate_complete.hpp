#pragma once
// The simulator on family complete with d = 2 (all 2-subsets of N servers) at lambda = 0.9,
// 8 replications of about `events` events in all after a warm-up: what the mean-field tests
// compare their N -> infinity limits with.
#include <cstdint>

#include "qsweep/model/model.hpp"
#include "qsweep/sim/simulate.hpp"

namespace qsweep::meanfield::testing {

inline sim::Result simulate_complete2(sim::Policy policy, int N, double events, int occupancy_max,
                                      std::uint64_t seed) {
  model::FamilyParams family;
  family.kind = model::FamilyKind::complete;
  family.N = N;
  family.d = 2;
  const model::System system(model::Family(family), {}, 0.9);
  sim::Options o;
  o.policy = policy;
  o.replications = 8;
  o.max_events = 1;  // one round: the events asked for
  o.warmup = 50.0;
  o.horizon = events / 8.0 / (2.0 * 0.9 * N);  // events (arrivals, departures) at rate 2 N lambda
  o.occupancy_max = occupancy_max;
  return sim::simulate(system, o, seed, static_cast<std::uint64_t>(N));
}

}  // namespace qsweep::meanfield::testing
