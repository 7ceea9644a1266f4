#include "qsweep/sim/stability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string_view>
#include <vector>

#include "qsweep/model/stability.hpp"

namespace qsweep::sim {
namespace {

// power_of_d on explicit types: at most this many sampled sets are listed for the exact check.
constexpr double kMaxSampledSets = 1e5;
constexpr double kUnit = 0x1p-53;  // unit roundoff of a double

std::size_t idx(int i) { return static_cast<std::size_t>(i); }

PolicyStability overloaded(std::string_view policy, const std::vector<int>& set, double rate,
                           double capacity) {
  const std::string text =
      set.size() == 1
          ? fmt::format("{}: server {} gets jobs at rate {:.6g} >= its service rate {:.6g}", policy,
                        set[0] + 1, rate, capacity)
          : fmt::format("{}: servers {} get jobs at rate {:.6g} >= their service rate {:.6g}",
                        policy, model::set_text(set), rate, capacity);
  return {false, text, ""};
}

// Random routing (also power_of_d with d = 1): the most overloaded server, decided exactly.
PolicyStability random_routing(std::string_view policy, const model::System& system) {
  const model::RoutingReport report = model::check_random_routing(system);
  if (report.overloaded_server < 0) return {};
  return overloaded(policy, {report.overloaded_server}, report.rate,
                    system.speeds[idx(report.overloaded_server)]);
}

double binomial(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  return std::round(
      std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0)));
}

// Eq. (2) for a family whose mass of types inside a set U depends only on |U| (mass(u), asked for
// u = 1, 2, ..., N in turn, with at most `roundings` roundings): for each size the worst U is the
// u slowest servers. Floating point with an error bound; a size it cannot decide makes a warning,
// not a verdict.
PolicyStability size_symmetric_check(std::string_view policy, const model::System& system,
                                     const std::function<double(int)>& mass, int roundings) {
  std::vector<int> order(idx(system.N()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return system.speeds[idx(a)] < system.speeds[idx(b)]; });
  double capacity = 0.0;
  std::string warning;
  for (int u = 1; u <= system.N(); ++u) {
    capacity += system.speeds[idx(order[idx(u - 1)])];
    const double rate = system.total_arrival_rate() * mass(u);
    const double slack = capacity - rate;
    // naive sum of u speeds, the rate's roundings and the subtraction
    const double error =
        ((u + 1) * capacity + (roundings + 2) * rate + std::fabs(slack)) * kUnit * 1.01;
    if (slack > error) continue;
    std::vector<int> set(order.begin(), order.begin() + u);
    std::sort(set.begin(), set.end());
    if (slack <= -error) return overloaded(policy, set, rate, capacity);
    if (warning.empty())
      warning = fmt::format(
          "{}: stability undecided: servers {} have slack {:.3g} within its rounding error {:.2g}; "
          "treated as stable",
          policy, model::set_text(set), slack, error);
  }
  return {true, "", warning};
}

// Eq. (2) for the family `sets` of the sets the policy samples, on the system's servers.
PolicyStability sets_check(std::string_view policy, const model::Family& sets,
                           const model::System& system) {
  const model::StabilityReport report = model::check_stability(sets, system.speeds, system.lambda);
  if (report.ok) return {true, "", report.warning};
  double capacity = 0.0;
  for (int n : report.violating_set) capacity += system.speeds[idx(n)];
  return overloaded(policy, report.violating_set, capacity - report.slack, capacity);
}

// power_of_d with 1 < d < the largest type: the job joins the shortest of d servers drawn from
// S, i.e. JSQ on the family of those d-sets (type T with probability sum_S p_S / C(|S|, d)), which
// is stable exactly under eq. (2) for that family (see jsq below).
PolicyStability sampled_sets_check(const model::System& system, int d) {
  const std::string policy = fmt::format("power_of_d (d = {})", d);
  const model::Family& family = system.family;
  const int N = system.N();
  if (family.kind() == model::FamilyKind::complete) {
    // the sampled sets are the d-subsets, uniformly: the complete family with d (exact check)
    model::FamilyParams sampled = family.params();
    sampled.d = std::min(d, family.params().d);
    return sets_check(policy, model::Family(sampled), system);
  }
  if (family.kind() == model::FamilyKind::singletons_full) {
    const double eps = family.params().eps;
    model::InsideFraction inside(N, d);
    return size_symmetric_check(
        policy, system,
        [&](int u) {
          return u * (N - 1 - eps) / (N * (N - 1.0)) + eps / (N - 1.0) * inside.next().first;
        },
        4 * d + 10);
  }
  // Listed types: enumerate the sampled sets if there are not too many.
  const auto& types = family.listed_types();
  const auto& p = family.listed_probs();
  double sets = 0.0;
  for (const auto& t : types) sets += binomial(static_cast<int>(t.size()), d);
  if (sets > kMaxSampledSets)
    return {
        true, "",
        fmt::format("{}: stability checked by eq. (2) only ({:.3g} sampled sets)", policy, sets)};
  model::FamilyParams derived;
  derived.kind = model::FamilyKind::explicit_types;
  derived.N = N;
  for (std::size_t t = 0; t < types.size(); ++t) {
    const int size = static_cast<int>(types[t].size());
    if (size <= d) {
      derived.types.push_back({types[t], p[t]});
      continue;
    }
    const double share = p[t] / binomial(size, d);
    std::vector<bool> chosen(idx(size), false);
    std::fill(chosen.begin(), chosen.begin() + d, true);
    do {
      model::ExplicitType sampled{{}, share};
      for (int i = 0; i < size; ++i)
        if (chosen[idx(i)]) sampled.servers.push_back(types[t][idx(i)]);
      derived.types.push_back(std::move(sampled));
    } while (std::prev_permutation(chosen.begin(), chosen.end()));
  }
  return sets_check(policy, model::Family(derived), system);
}

// The policy's own condition beyond eq. (2).
PolicyStability policy_check(const model::System& system, const Options& options) {
  switch (options.policy) {
    case Policy::redundancy_coc:
    case Policy::redundancy_cos:
    case Policy::jsq:
      return {};
    case Policy::random:
      // Random routing splits the arrivals into independent streams, one per server.
      return random_routing("random routing", system);
    case Policy::power_of_d: {
      const int d = options.policy_d;
      if (d >= system.family.max_type_size()) return {};  // the whole of S: jsq
      if (d == 1) return random_routing("power_of_d (d = 1, random routing)", system);
      return sampled_sets_check(system, d);
    }
    case Policy::jiq: {
      // No closed form is known. When every server of S is busy jiq routes at random, so
      // where random routing overloads a server jiq may be unstable too.
      const model::RoutingReport report = model::check_random_routing(system);
      if (report.overloaded_server < 0) return {};
      return {true, "",
              fmt::format("jiq may be unstable: random routing (jiq's rule when S is busy) "
                          "gives server {} rate {:.3g} >= {:.3g}",
                          report.overloaded_server + 1, report.rate,
                          system.speeds[idx(report.overloaded_server)])};
    }
  }
  return {};
}

}  // namespace

PolicyStability check_stability(const model::System& system, const Options& options) {
  // Eq. (2) is necessary for every policy: the jobs that only servers in U can serve must be
  // served there. It is also sufficient for redundancy_coc (exponential, independent replicas:
  // the paper), and for jsq and redundancy_cos: with a routing that meets eq. (2), the drift
  // of sum_n Q_n^2 (jsq) or sum_n mu_n W_n^2 (cos, W_n the backlog in time) is negative.
  const model::StabilityReport eq2 = model::check_stability(system);
  if (!eq2.ok) return {false, eq2.describe(), ""};
  PolicyStability own = policy_check(system, options);
  if (own.stable && !eq2.warning.empty())
    own.warning = eq2.warning + (own.warning.empty() ? "" : "; " + own.warning);
  return own;
}

}  // namespace qsweep::sim
