#pragma once
// Stability (paper eq. 2) and local stability (eq. 5) checks.
// Both are minimisations of a submodular set function f(U) = mu(U) - L * sum_{S subset U} p_S
// over server sets U; they are solved exactly as min cuts (types -> servers bipartite network),
// or in closed form for families whose subset sums depend only on |U| (complete, singletons_full,
// independent), so they scale to the N the symmetric engine reaches.
#include <string>
#include <utility>
#include <vector>

#include "qsweep/model/model.hpp"

namespace qsweep::model {

struct StabilityReport {
  bool ok = true;
  // When !ok: a violating server set (0-based, sorted) and the slack mu(U) - rate(U) <= 0 there.
  std::vector<int> violating_set;
  double slack = 0.0;
  // When ok: empty, or why the check could not decide (a load within rounding of the boundary
  // and an exact check out of reach); the system is then treated as stable.
  std::string warning;
  // "servers {1,3,4}: arrival rate 2.1 >= service rate 2" with 1-based indices, as in files.
  std::string describe() const;
};

// Eq. (2): N*lambda * sum_{S subset U} p_S < mu(U) for every non-empty U; ties are unstable.
// Decided exactly for the inputs as given (speeds and lambda as the doubles they are, the
// family's probabilities as the rationals that define it): floating point with an error bound
// first, exact dyadic arithmetic where that cannot decide (within about 1e-15 relative of the
// boundary, 1e-11 for families checked by max flow). Only an exact max flow of more than 2e6
// edges is not attempted: the report is then ok with a warning.
StabilityReport check_stability(const System& system);
// The same for a family, speeds and lambda already validated (as a System's are), without
// copying the speeds into a System.
StabilityReport check_stability(const Family& family, const std::vector<double>& speeds,
                                double lambda);

// Random routing (each job joins one server of its type, uniformly): every server's arrival rate
// N lambda sum_{S contains n} p_S / |S| below its speed, decided exactly as check_stability.
struct RoutingReport {
  int overloaded_server = -1;  // 0-based: the most loaded server relative to its speed, if its
                               // rate >= its speed; -1 if none
  double rate = 0.0;           // that server's arrival rate
};
RoutingReport check_random_routing(const System& system);

// C(u, k) / C(N, k), the probability that k distinct uniform servers of N all lie in a set of u,
// for u = 1, 2, ..., N in turn: O(N + k) in all. A product of k ratios each took O(k), and the
// checks over every size O(N k): minutes at N = 10^7, k = 5 x 10^6.
class InsideFraction {
 public:
  InsideFraction(int N, int k) : N_(N), k_(k) {}
  // The value for the next u, and a bound on the roundings in it (each at most 2^-53 relative).
  std::pair<double, int> next() {
    ++u_;
    if (u_ < k_) return {0.0, 0};
    const int since = u_ % k_;  // afresh at every multiple of k: at most 4 k roundings
    if (since == 0) {
      value_ = 1.0;
      for (int i = 0; i < k_; ++i) value_ *= static_cast<double>(u_ - i) / (N_ - i);
    } else {  // C(u, k) = C(u - 1, k) u / (u - k)
      value_ *= static_cast<double>(u_) / (u_ - k_);
    }
    return {value_, 2 * k_ + 2 * since};
  }

 private:
  int N_, k_, u_ = 0;
  double value_ = 0.0;
};

// A server set (0-based indices) as the messages print it: 1-based, the first few of a big set.
std::string set_text(const std::vector<int>& set);

// Eq. (5): sum_{S subset U} p_S < mu(U) / (N * mean speed) for every non-empty strict subset U.
StabilityReport check_local_stability(const Family& family, const std::vector<double>& speeds);

}  // namespace qsweep::model
