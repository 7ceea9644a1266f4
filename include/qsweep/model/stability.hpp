#pragma once
// Stability (paper eq. 2) and local stability (eq. 5) checks.
// Both are minimisations of a submodular set function f(U) = mu(U) - L * sum_{S subset U} p_S
// over server sets U; they are solved exactly as min cuts (types -> servers bipartite network),
// or in closed form for families whose subset sums depend only on |U| (complete, singletons_full,
// independent), so they scale to the N the symmetric engine reaches.
#include <string>
#include <vector>

#include "qsweep/model/model.hpp"

namespace qsweep::model {

struct StabilityReport {
  bool ok = true;
  // When !ok: a violating server set (0-based, sorted) and the slack mu(U) - rate(U) <= 0 there.
  std::vector<int> violating_set;
  double slack = 0.0;
  // "servers {1,3,4}: arrival rate 2.1 >= service rate 2" with 1-based indices, as in files.
  std::string describe() const;
};

// Eq. (2): N*lambda * sum_{S subset U} p_S < mu(U) for every non-empty U.
// A relative tolerance of 1e-12 counts boundary cases as unstable.
StabilityReport check_stability(const System& system);

// A server set (0-based indices) as the messages print it: 1-based, the first few of a big set.
std::string set_text(const std::vector<int>& set);

// Eq. (5): sum_{S subset U} p_S < mu(U) / (N * mean speed) for every non-empty strict subset U.
StabilityReport check_local_stability(const Family& family, const std::vector<double>& speeds);

}  // namespace qsweep::model
