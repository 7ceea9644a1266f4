#pragma once
// Helpers shared by the simulator tests.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "qsweep/model/model.hpp"
#include "qsweep/sim/simulate.hpp"

namespace qsweep::sim::testing {

inline model::FamilyParams family(model::FamilyKind kind, int N, int d = 2) {
  model::FamilyParams p;
  p.kind = kind;
  p.N = N;
  if (kind == model::FamilyKind::complete) p.d = d;
  return p;
}

inline model::System make_system(model::FamilyParams params, double lambda,
                                 std::vector<double> speeds = {}) {
  return model::System(model::Family(std::move(params)), std::move(speeds), lambda);
}

inline Options options(Policy policy, double horizon, double warmup, int replications,
                       ServiceKind service = ServiceKind::exponential) {
  Options o;
  o.policy = policy;
  o.horizon = horizon;
  o.warmup = warmup;
  o.replications = replications;
  o.max_events = 1;  // one round of the output analysis: the run asked for, flagged or not
  o.service.kind = service;
  return o;
}

// Statistical checks use fixed seeds. `expect_close` accepts |estimate - truth| <= 2 * (95%
// half-width), about 4 standard errors at the replication counts used here (two-sided
// probability of a false alarm below 1e-3 per check), plus `slack` for known deterministic
// errors (histogram resolution).
inline ::testing::AssertionResult close(double estimate, double hw95, double truth,
                                        double slack = 0.0) {
  const double tolerance = 2.0 * hw95 + slack;
  if (std::abs(estimate - truth) <= tolerance) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "estimate " << estimate << " vs truth " << truth
                                       << ": |diff| = " << std::abs(estimate - truth)
                                       << " > tolerance " << tolerance << " (hw95 " << hw95 << ")";
}

}  // namespace qsweep::sim::testing
