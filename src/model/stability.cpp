#include "qsweep/model/stability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <type_traits>

#include "dyadic.hpp"
#include "family_detail.hpp"
#include "qsweep/model/family_registry.hpp"

namespace qsweep::model {
namespace {

using detail::BigInt;
using detail::Dyadic;
using detail::ListedWeights;

// Both checks minimise f(U) = mu(U) - L * sum_{S subset U} p_S over non-empty server sets U
// (strict subsets for local stability); U violates if f(U) <= 0 (ties count as violations).
// The inputs are taken exactly as given: speeds, lambda and eps are the doubles read (the
// nearest doubles to the decimals of a sweep file), and the family's probabilities are the
// exact rationals that define it (1/E for a graph, C(u, d) / C(N, d), 2 eps / N, ...). Each
// f(U) is first computed in floating point with a bound on its error; only where |f| is within
// that bound (about 1e-15 relative, 1e-11 for max-flow families) is it decided exactly, in
// dyadic rationals. Where the exact check would be too large, the answer is "undecided".

constexpr double kUnit = 0x1p-53;  // unit roundoff of a double

// Exact networks beyond this many edges (types + type-server pairs + servers) are not solved:
// the decision is then reported as undecided (a warning) and the system treated as stable.
constexpr double kMaxExactNetworkEdges = 2e6;
// Size-symmetric families: exact binomials C(N, d) of more bits than this are not computed.
constexpr double kMaxExactBinomialBits = 1e5;

// Sign of an exact value known to lie within `error` of `value`.
enum class Sign { non_positive, positive, unknown };
Sign certain_sign(double value, double error) {
  if (value > error) return Sign::positive;
  if (value <= -error) return Sign::non_positive;
  return Sign::unknown;
}

// Neumaier's compensated sum of non-negative terms: error at most (2u + 8 n u^2) times the sum
// of the terms (Higham, Accuracy and Stability of Numerical Algorithms, sec. 4.3).
class CompensatedSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    compensation_ += std::fabs(sum_) >= std::fabs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
    ++terms_;
  }
  double value() const { return sum_ + compensation_; }
  double error() const {
    return (2 * kUnit + 8 * static_cast<double>(terms_) * kUnit * kUnit) * value() *
           (1 + 4 * kUnit);
  }

 private:
  double sum_ = 0.0, compensation_ = 0.0;
  std::int64_t terms_ = 0;
};

// The arrival rate L of the check: N lambda (stability) or the total speed (local stability),
// as a double with its relative error and exactly.
struct Load {
  double value = 0.0;
  double relative_error = 0.0;
  Dyadic exact;
};

Load arrival_load(int N, double lambda) {
  return {N * lambda, kUnit, Dyadic::of(static_cast<std::int64_t>(N)) * Dyadic::of(lambda)};
}

Load speed_load(const std::vector<double>& speeds) {
  CompensatedSum sum;
  Dyadic exact;
  for (double s : speeds) {
    sum.add(s);
    exact += Dyadic::of(s);
  }
  return {sum.value(), sum.error() / sum.value(), exact};
}

StabilityReport violation(std::vector<int> set, double slack) {
  StabilityReport report;
  report.ok = false;
  std::sort(set.begin(), set.end());
  report.violating_set = std::move(set);
  report.slack = std::min(slack, 0.0);
  return report;
}

std::string undecided_warning(bool local, const std::vector<int>& set, double slack, double error,
                              const std::string& why) {
  return fmt::format(
      "{} undecided: slack {:.2g} of servers {} is within rounding ({:.2g}) and {}; "
      "treated as {}",
      local ? "local stability (eq. 5)" : "stability (eq. 2)", slack, set_text(set), error, why,
      local ? "locally stable" : "stable");
}

// ---- families whose subset mass g(|U|) = sum_{S subset U} p_S depends only on |U| ----------
// For a fixed size u the worst U is the u slowest servers, so the minimum is over N prefixes.
bool size_symmetric(FamilyKind kind) { return family_info(kind).size_symmetric; }

// A size-symmetric family (registry trait) without its closed form of g(u) below: a family was
// marked size-symmetric without adding its formulas here.
std::logic_error no_subset_mass(const Family& family) {
  return std::logic_error(
      fmt::format("family {} is size-symmetric but has no subset mass formula in "
                  "src/model/stability.cpp",
                  name_of(family.kind())));
}

// g(u) in floating point for u = 1, 2, ..., N in turn, and the number of roundings in it (each
// at most u relative).
class SubsetMass {
 public:
  explicit SubsetMass(const Family& family)
      : family_(family),
        complete_(family.num_servers(),
                  family.kind() == FamilyKind::complete ? family.params().d : 1) {}
  std::pair<double, int> next() {
    const int N = family_.num_servers();
    const int u = ++u_;
    switch (family_.kind()) {
      case FamilyKind::independent:
        return {static_cast<double>(u) / N, 1};
      case FamilyKind::singletons_full: {
        const double eps = family_.params().eps;
        return {u == N ? 1.0 : u * (N - 1 - eps) / (N * (N - 1.0)), 5};
      }
      case FamilyKind::complete:  // C(u, d) / C(N, d) from ratios (no overflow)
        return complete_.next();
      default:
        throw no_subset_mass(family_);
    }
  }

 private:
  const Family& family_;
  InsideFraction complete_;
  int u_ = 0;
};

// g(u) exactly as numerator(u) / denominator.
class ExactSubsetMass {
 public:
  explicit ExactSubsetMass(const Family& family) : family_(family) {
    const int N = family.num_servers();
    switch (family.kind()) {
      case FamilyKind::independent:
        denominator_ = Dyadic::of(static_cast<std::int64_t>(N));
        break;
      case FamilyKind::singletons_full:
        denominator_ = Dyadic::of(static_cast<std::int64_t>(N) * (N - 1));
        break;
      case FamilyKind::complete:
        denominator_ = Dyadic::of_integer(binomial(N, family.params().d));
        break;
      default:
        throw no_subset_mass(family);
    }
  }
  // Whether the exact binomials stay small enough to compute.
  static bool feasible(const Family& family) {
    if (family.kind() != FamilyKind::complete) return true;
    const double N = family.num_servers(), d = family.params().d;
    return std::min(d, N - d) * std::log2(N + 1) <= kMaxExactBinomialBits;
  }
  const Dyadic& denominator() const { return denominator_; }
  Dyadic numerator(int u) const {
    const int N = family_.num_servers();
    switch (family_.kind()) {
      case FamilyKind::independent:
        return Dyadic::of(static_cast<std::int64_t>(u));
      case FamilyKind::singletons_full:
        if (u == N) return denominator_;
        return Dyadic::of(static_cast<std::int64_t>(u)) *
               (Dyadic::of(static_cast<std::int64_t>(N - 1)) - Dyadic::of(family_.params().eps));
      case FamilyKind::complete:
        return Dyadic::of_integer(binomial(u, family_.params().d));
      default:
        throw no_subset_mass(family_);
    }
  }

 private:
  static BigInt binomial(int n, int k) {
    if (k < 0 || k > n) return 0;
    k = std::min(k, n - k);
    BigInt c = 1;
    for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;  // exact: a binomial at every step
    return c;
  }
  const Family& family_;
  Dyadic denominator_;
};

StabilityReport min_over_sizes(const Family& family, const std::vector<double>& speeds,
                               const Load& load, bool strict) {
  const int N = family.num_servers();
  const int largest = strict ? N - 1 : N;
  std::vector<int> order(static_cast<std::size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return speeds[static_cast<std::size_t>(a)] < speeds[static_cast<std::size_t>(b)];
  });
  auto prefix_set = [&](int u) { return std::vector<int>(order.begin(), order.begin() + u); };
  CompensatedSum prefix;
  int worst_u = 0;
  double worst_f = std::numeric_limits<double>::infinity();
  std::vector<int> unknown;  // sizes floating point cannot decide
  double unknown_f = 0.0, unknown_error = 0.0;
  SubsetMass subset_mass(family);
  for (int u = 1; u <= largest; ++u) {
    prefix.add(speeds[static_cast<std::size_t>(order[static_cast<std::size_t>(u - 1)])]);
    const auto [mass, roundings] = subset_mass.next();
    const double rate = load.value * mass;
    const double f = prefix.value() - rate;
    const double error = (prefix.error() + rate * ((roundings + 2) * kUnit + load.relative_error) +
                          kUnit * std::fabs(f)) *
                         1.01;
    switch (certain_sign(f, error)) {
      case Sign::positive:
        break;
      case Sign::non_positive:
        if (f < worst_f) {
          worst_f = f;
          worst_u = u;
        }
        break;
      case Sign::unknown:
        if (unknown.empty()) unknown_f = f, unknown_error = error;
        unknown.push_back(u);
    }
  }
  if (worst_u > 0) return violation(prefix_set(worst_u), worst_f);
  if (unknown.empty()) return {};
  if (!ExactSubsetMass::feasible(family)) {
    StabilityReport report;
    report.warning = undecided_warning(strict, prefix_set(unknown.front()), unknown_f,
                                       unknown_error, "C(N, d) is too big to check exactly");
    return report;
  }
  // Exactly: f(u) denominator = prefix(u) denominator - L numerator(u).
  const ExactSubsetMass exact(family);
  Dyadic exact_prefix;
  int u = 0;
  for (int size : unknown) {
    for (; u < size; ++u)
      exact_prefix +=
          Dyadic::of(speeds[static_cast<std::size_t>(order[static_cast<std::size_t>(u)])]);
    const Dyadic scaled_f = exact_prefix * exact.denominator() - load.exact * exact.numerator(size);
    if (scaled_f.sign() <= 0)
      return violation(prefix_set(size), scaled_f.to_double() / exact.denominator().to_double());
  }
  return {};
}

// ---- listed families: min cut in source -> type (L p_S) -> servers (inf) -> sink (mu_n) --------
// A cut with server set U on the source side costs mu(U) + L * sum_{S not subset U} p_S
// = L + f(U).
template <class Cap>
class MaxFlow {
 public:
  explicit MaxFlow(int nodes) : adj_(static_cast<std::size_t>(nodes)) {}
  // A residual capacity at or below `zero` (the edge's and its reverse's) counts as saturated:
  // floating point leaves rounding residues. (A threshold, so a float: a double edge stays 16 B.)
  int add_edge(int from, int to, Cap cap, float zero = 0.0F) {
    const int id = static_cast<int>(edges_.size());
    adj_[static_cast<std::size_t>(from)].push_back(id);
    edges_.push_back({std::move(cap), to, zero});
    adj_[static_cast<std::size_t>(to)].push_back(id + 1);
    edges_.push_back({Cap(0), from, zero});
    return id;
  }
  // `infinite` exceeds any flow.
  Cap run(int s, int t, const Cap& infinite) {
    Cap flow = 0;
    while (bfs(s, t)) {
      it_.assign(adj_.size(), 0);
      while (true) {
        Cap f = dfs(s, t, infinite);
        if (!(f > Cap(0))) break;
        flow += f;
      }
    }
    return flow;
  }
  // The flow on an edge (what its reverse edge holds).
  const Cap& flow_on(int edge) const { return edges_[static_cast<std::size_t>(edge) ^ 1U].cap; }
  // Nodes reachable from s in the residual graph: the source side of the least min cut.
  std::vector<bool> reachable_from(int s) const { return search(s, false); }
  // Nodes that reach t in the residual graph: the complement is the source side of the
  // largest min cut.
  std::vector<bool> reaching(int t) const { return search(t, true); }

 private:
  struct Edge {
    Cap cap;
    int to;
    float zero;
    bool open() const {
      if constexpr (std::is_floating_point_v<Cap>) return cap > static_cast<Cap>(zero);
      return cap > 0;
    }
  };
  std::vector<bool> search(int start, bool backwards) const {
    std::vector<bool> seen(adj_.size(), false);
    std::vector<int> stack{start};
    seen[static_cast<std::size_t>(start)] = true;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (int e : adj_[static_cast<std::size_t>(v)]) {
        const auto& edge = edges_[static_cast<std::size_t>(e)];
        // backwards: the edge edge.to -> v, whose residual is the pair of e
        const bool open = backwards ? edges_[static_cast<std::size_t>(e) ^ 1U].open() : edge.open();
        if (open && !seen[static_cast<std::size_t>(edge.to)]) {
          seen[static_cast<std::size_t>(edge.to)] = true;
          stack.push_back(edge.to);
        }
      }
    }
    return seen;
  }
  bool bfs(int s, int t) {
    level_.assign(adj_.size(), -1);
    std::queue<int> q;
    level_[static_cast<std::size_t>(s)] = 0;
    q.push(s);
    while (!q.empty()) {
      const int v = q.front();
      q.pop();
      for (int e : adj_[static_cast<std::size_t>(v)]) {
        const auto& edge = edges_[static_cast<std::size_t>(e)];
        if (edge.open() && level_[static_cast<std::size_t>(edge.to)] < 0) {
          level_[static_cast<std::size_t>(edge.to)] = level_[static_cast<std::size_t>(v)] + 1;
          q.push(edge.to);
        }
      }
    }
    return level_[static_cast<std::size_t>(t)] >= 0;
  }
  Cap dfs(int v, int t, const Cap& pushed) {
    if (v == t) return pushed;
    auto& i = it_[static_cast<std::size_t>(v)];
    for (; i < adj_[static_cast<std::size_t>(v)].size(); ++i) {
      const int e = adj_[static_cast<std::size_t>(v)][i];
      auto& edge = edges_[static_cast<std::size_t>(e)];
      if (!edge.open() ||
          level_[static_cast<std::size_t>(edge.to)] != level_[static_cast<std::size_t>(v)] + 1)
        continue;
      Cap f = dfs(edge.to, t, std::min(pushed, edge.cap));
      if (f > Cap(0)) {
        edge.cap -= f;
        edges_[static_cast<std::size_t>(e) ^ 1U].cap += f;
        return f;
      }
    }
    return Cap(0);
  }
  std::vector<std::vector<int>> adj_;
  std::vector<Edge> edges_;
  std::vector<int> level_;
  std::vector<std::size_t> it_;
};

// The floating-point check inflates the arrivals by (1 + inflate), first kInflate: a flow that
// carries them all, scaled back by (1 - inflate / 2), certifies f(U) > 0 for every U with room
// to spare for its rounding (verified below, not assumed). If it finds instead a set U whose
// f(U) > 0 is certain, it tries once more with inflate = f(U) / (2 L), down to kMinInflate.
constexpr double kInflate = 1e-11;
constexpr double kMinInflate = 1e-13;
// An edge whose residual is at most this fraction of its capacity counts as saturated (well
// below kMinInflate, above the rounding residues of subtracting flows).
constexpr double kResidue = 1e-15;

// The probabilities of a listed family exactly: p_t = w_t / W, from its registry entry (graphs:
// uniform over the distinct edges).
ListedWeights exact_listed_weights(const Family& family) {
  const auto& types = family.listed_types();
  ListedWeights out;
  if (family.info().exact_weights != nullptr) {
    family.info().exact_weights(family, out);
  } else {
    out.w.assign(types.size(), Dyadic::of(std::int64_t{1}));
    out.W = Dyadic::of(static_cast<std::int64_t>(types.size()));
  }
  return out;
}

// Bound on the relative error of the family's floating-point probabilities: at most two
// roundings for most families (registry: probability_roundings).
double probability_error(const Family& family) {
  const auto roundings = family.info().probability_roundings;
  return (roundings != nullptr ? roundings(family.params()) : 4.0) * kUnit;
}

// f(U) for the server set `side` in floating point, with an error bound.
struct SetSlack {
  double f = 0.0, error = 0.0;
};
SetSlack float_slack(const Family& family, const std::vector<double>& speeds, const Load& load,
                     const std::vector<bool>& in_set) {
  const auto& types = family.listed_types();
  const auto& probs = family.listed_probs();
  CompensatedSum mu, mass;
  for (std::size_t n = 0; n < speeds.size(); ++n)
    if (in_set[n]) mu.add(speeds[n]);
  for (std::size_t t = 0; t < types.size(); ++t)
    if (std::all_of(types[t].begin(), types[t].end(),
                    [&](int s) { return in_set[static_cast<std::size_t>(s)]; }))
      mass.add(probs[t]);
  const double rate = load.value * mass.value();
  SetSlack out;
  out.f = mu.value() - rate;
  out.error = (mu.error() +
               rate * (probability_error(family) + mass.error() / std::max(mass.value(), DBL_MIN) +
                       load.relative_error + 2 * kUnit) +
               kUnit * std::fabs(out.f)) *
              1.01;
  return out;
}

// f(U) exactly, as a double of the same sign.
double exact_slack(const Family& family, const std::vector<double>& speeds, const Load& load,
                   const ListedWeights& weights, const std::vector<bool>& in_set) {
  const auto& types = family.listed_types();
  Dyadic mu, mass;
  for (std::size_t n = 0; n < speeds.size(); ++n)
    if (in_set[n]) mu += Dyadic::of(speeds[n]);
  for (std::size_t t = 0; t < types.size(); ++t)
    if (std::all_of(types[t].begin(), types[t].end(),
                    [&](int s) { return in_set[static_cast<std::size_t>(s)]; }))
      mass += weights.w[t];
  return (mu * weights.W - load.exact * mass).to_double() / weights.W.to_double();
}

std::vector<int> members(const std::vector<bool>& in_set) {
  std::vector<int> out;
  for (std::size_t n = 0; n < in_set.size(); ++n)
    if (in_set[n]) out.push_back(static_cast<int>(n));
  return out;
}

// Node numbering of the network.
struct Network {
  int types, servers;
  int source() const { return 0; }
  int sink() const { return 1; }
  int type(int t) const { return 2 + t; }
  int server(int n) const { return 2 + types + n; }
  int nodes() const { return 2 + types + servers; }
};

enum class FloatVerdict { stable, candidate, unknown };

// The floating-point max flow: stable (certified), or a candidate violating set.
FloatVerdict float_min_cut(const Family& family, const std::vector<double>& speeds,
                           const Load& load, int excluded, double inflate,
                           std::vector<bool>& candidate) {
  const auto& types = family.listed_types();
  const auto& probs = family.listed_probs();
  const Network net{static_cast<int>(types.size()), family.num_servers()};
  const double total = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  const double big = 4.0 * (total + load.value) + 1.0;
  MaxFlow<double> flow(net.nodes());
  const double inflated = load.value * (1.0 + inflate);
  // the edges of type t to its servers follow its source edge: ids source_edge[t] + 2, + 4, ...
  std::vector<int> source_edge(types.size());
  auto add = [&](int from, int to, double cap) {
    return flow.add_edge(from, to, cap, static_cast<float>(kResidue * cap));
  };
  for (int t = 0; t < net.types; ++t) {
    source_edge[static_cast<std::size_t>(t)] =
        add(net.source(), net.type(t), inflated * probs[static_cast<std::size_t>(t)]);
    for (int s : types[static_cast<std::size_t>(t)]) add(net.type(t), net.server(s), big);
  }
  for (int n = 0; n < net.servers; ++n)
    add(net.server(n), net.sink(), n == excluded ? big : speeds[static_cast<std::size_t>(n)]);
  flow.run(net.source(), net.sink(), std::numeric_limits<double>::infinity());
  // The flow's value summed with compensation: a plain sum of 1e5 terms of ~0.5 drops the
  // inflation of each (below half an ulp of the total) and misses a full flow.
  CompensatedSum value;
  for (int t = 0; t < net.types; ++t)
    value.add(flow.flow_on(source_edge[static_cast<std::size_t>(t)]));
  if (value.value() < inflated * (1.0 - 0.1 * inflate)) {
    const auto side = flow.reachable_from(net.source());
    candidate.assign(static_cast<std::size_t>(net.servers), false);
    for (int n = 0; n < net.servers; ++n)
      candidate[static_cast<std::size_t>(n)] = side[static_cast<std::size_t>(net.server(n))];
    return std::find(candidate.begin(), candidate.end(), true) == candidate.end()
               ? FloatVerdict::unknown
               : FloatVerdict::candidate;
  }
  // Certificate: the flow y scaled by `keep` carries every type's exact rate L p_t, and loads
  // every server (not the excluded one) strictly below its speed, so f(U) > 0 for every U.
  const double keep = 1.0 - 0.5 * inflate;
  const double check_rounding = 1.0 + 8 * kUnit;
  std::vector<CompensatedSum> load_on(static_cast<std::size_t>(net.servers));
  for (int t = 0; t < net.types; ++t) {
    CompensatedSum carried;
    const auto& servers = types[static_cast<std::size_t>(t)];
    for (std::size_t i = 0; i < servers.size(); ++i) {
      const double y =
          flow.flow_on(source_edge[static_cast<std::size_t>(t)] + 2 * static_cast<int>(i + 1));
      carried.add(y);
      load_on[static_cast<std::size_t>(servers[i])].add(y);
    }
    const double needed = load.value * probs[static_cast<std::size_t>(t)] *
                          (1 + probability_error(family) + load.relative_error + 2 * kUnit);
    if (keep * (carried.value() - carried.error()) < needed * check_rounding)
      return FloatVerdict::unknown;
  }
  for (int n = 0; n < net.servers; ++n) {
    if (n == excluded) continue;
    const auto& sum = load_on[static_cast<std::size_t>(n)];
    if (keep * (sum.value() + sum.error()) * check_rounding >= speeds[static_cast<std::size_t>(n)])
      return FloatVerdict::unknown;
  }
  return FloatVerdict::stable;
}

// The exact max flow on the capacities times W (and a power of two): stable iff it carries
// every arrival and every server can still reach the sink (no min cut holds a server, i.e. no
// U with f(U) = 0). Otherwise returns a violating set.
StabilityReport exact_min_cut(const Family& family, const std::vector<double>& speeds,
                              const Load& load, int excluded) {
  const auto& types = family.listed_types();
  const Network net{static_cast<int>(types.size()), family.num_servers()};
  const ListedWeights weights = exact_listed_weights(family);
  std::vector<Dyadic> capacities;  // types, then servers
  for (const Dyadic& w : weights.w) capacities.push_back(load.exact * w);
  for (int n = 0; n < net.servers; ++n)
    capacities.push_back(
        n == excluded ? Dyadic() : weights.W * Dyadic::of(speeds[static_cast<std::size_t>(n)]));
  const std::vector<BigInt> integers = detail::common_integers(capacities);
  BigInt arrivals = 0, infinite = 1;
  for (std::size_t i = 0; i < integers.size(); ++i) {
    infinite += integers[i];
    if (i < types.size()) arrivals += integers[i];
  }
  MaxFlow<BigInt> flow(net.nodes());
  for (int t = 0; t < net.types; ++t) {
    flow.add_edge(net.source(), net.type(t), integers[static_cast<std::size_t>(t)]);
    for (int s : types[static_cast<std::size_t>(t)])
      flow.add_edge(net.type(t), net.server(s), infinite);
  }
  for (int n = 0; n < net.servers; ++n)
    flow.add_edge(net.server(n), net.sink(),
                  n == excluded ? infinite : integers[types.size() + static_cast<std::size_t>(n)]);
  const BigInt carried = flow.run(net.source(), net.sink(), infinite);
  std::vector<bool> in_set(static_cast<std::size_t>(net.servers), false);
  if (carried < arrivals) {  // the least min cut: f(U) < 0
    const auto side = flow.reachable_from(net.source());
    for (int n = 0; n < net.servers; ++n)
      in_set[static_cast<std::size_t>(n)] = side[static_cast<std::size_t>(net.server(n))];
  } else {  // the largest min cut: f(U) = 0 if it holds a server
    const auto reach = flow.reaching(net.sink());
    for (int n = 0; n < net.servers; ++n)
      in_set[static_cast<std::size_t>(n)] = !reach[static_cast<std::size_t>(net.server(n))];
  }
  if (std::find(in_set.begin(), in_set.end(), true) == in_set.end()) return {};
  return violation(members(in_set), exact_slack(family, speeds, load, weights, in_set));
}

double network_edges(const Family& family) {
  double edges = static_cast<double>(family.listed_types().size() +
                                     static_cast<std::size_t>(family.num_servers()));
  for (const auto& t : family.listed_types()) edges += static_cast<double>(t.size());
  return edges;
}

// Min over non-empty U (not containing `excluded`, if >= 0).
StabilityReport min_cut_check(const Family& family, const std::vector<double>& speeds,
                              const Load& load, int excluded) {
  std::vector<bool> candidate;
  SetSlack slack;
  double inflate = kInflate;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const FloatVerdict verdict = float_min_cut(family, speeds, load, excluded, inflate, candidate);
    if (verdict == FloatVerdict::stable) return {};
    if (verdict != FloatVerdict::candidate) break;
    slack = float_slack(family, speeds, load, candidate);
    const Sign sign = certain_sign(slack.f, slack.error);
    if (sign == Sign::non_positive) return violation(members(candidate), slack.f);
    // f(U) > 0 for this U: a smaller inflation may still be carried
    inflate = 0.5 * slack.f / load.value;
    if (sign == Sign::unknown || !(inflate >= kMinInflate && inflate < kInflate)) break;
  }
  if (network_edges(family) <= kMaxExactNetworkEdges)
    return exact_min_cut(family, speeds, load, excluded);
  StabilityReport report;
  report.warning = undecided_warning(
      excluded >= 0, members(candidate), slack.f, slack.error,
      fmt::format("an exact max flow on {:.2g} edges too big", network_edges(family)));
  return report;
}

}  // namespace

std::string StabilityReport::describe() const {
  if (ok) return "stable";
  return fmt::format(
      "servers {}: service rate minus arrival rate of the types they alone serve is {:.6g} <= 0",
      set_text(violating_set), slack);
}

StabilityReport check_stability(const System& system) {
  return check_stability(system.family, system.speeds, system.lambda);
}

StabilityReport check_stability(const Family& family, const std::vector<double>& speeds,
                                double lambda) {
  const Load load = arrival_load(family.num_servers(), lambda);
  if (size_symmetric(family.kind())) return min_over_sizes(family, speeds, load, false);
  return min_cut_check(family, speeds, load, -1);
}

StabilityReport check_local_stability(const Family& family, const std::vector<double>& speeds) {
  const int N = family.num_servers();
  if (N == 1) return {};  // no non-empty strict subset
  const Load load = speed_load(speeds);
  if (size_symmetric(family.kind())) return min_over_sizes(family, speeds, load, true);
  // Every strict subset misses some server n: one min cut per excluded server, so listed families
  // cost N max flows (about 3 s at N = 1000 for a 3-regular graph). Local stability is reported
  // by the exact engine, whose N is small; sweeps of large graphs only need check_stability.
  StabilityReport undecided;
  for (int n = 0; n < N; ++n) {
    auto report = min_cut_check(family, speeds, load, n);
    if (!report.ok) return report;
    if (undecided.warning.empty()) undecided.warning = report.warning;
  }
  return undecided;
}

RoutingReport check_random_routing(const System& system) {
  RoutingReport report;
  const auto& types = system.family.listed_types();
  const int N = system.N();
  if (types.empty()) {
    // The implicit families (independent, complete, singletons_full) are symmetric in the
    // servers: each gets exactly N lambda / N = lambda.
    const auto slowest = std::min_element(system.speeds.begin(), system.speeds.end());
    if (system.lambda >= *slowest) {
      report.overloaded_server = static_cast<int>(slowest - system.speeds.begin());
      report.rate = system.lambda;
    }
    return report;
  }
  const auto& probs = system.family.listed_probs();
  const double L = system.total_arrival_rate();
  std::vector<CompensatedSum> rate(static_cast<std::size_t>(N));
  for (std::size_t t = 0; t < types.size(); ++t)
    for (int n : types[t])
      rate[static_cast<std::size_t>(n)].add(L * probs[t] / static_cast<double>(types[t].size()));
  const double relative = probability_error(system.family) + 4 * kUnit;
  double worst_ratio = 0.0;
  std::vector<int> unknown;
  for (int n = 0; n < N; ++n) {
    const auto& r = rate[static_cast<std::size_t>(n)];
    const double speed = system.speeds[static_cast<std::size_t>(n)];
    const double error = (r.error() + relative * r.value() + kUnit * speed) * 1.01;
    switch (certain_sign(speed - r.value(), error)) {
      case Sign::positive:
        break;
      case Sign::non_positive:
        if (r.value() / speed > worst_ratio) {
          worst_ratio = r.value() / speed;
          report.overloaded_server = n;
          report.rate = r.value();
        }
        break;
      case Sign::unknown:
        unknown.push_back(n);
    }
  }
  if (report.overloaded_server >= 0 || unknown.empty()) return report;
  // Exactly: speed W M >= L sum_{t contains n} w_t M / |t|, M a common multiple of the sizes.
  const ListedWeights weights = exact_listed_weights(system.family);
  const Load load = arrival_load(N, system.lambda);
  std::vector<std::int64_t> multiple(static_cast<std::size_t>(N), 1);
  for (const auto& t : types)
    for (int n : t)
      multiple[static_cast<std::size_t>(n)] =
          std::lcm(multiple[static_cast<std::size_t>(n)], static_cast<std::int64_t>(t.size()));
  std::vector<Dyadic> inside(static_cast<std::size_t>(N));
  for (std::size_t t = 0; t < types.size(); ++t)
    for (int n : types[t])
      inside[static_cast<std::size_t>(n)] +=
          weights.w[t] * Dyadic::of(multiple[static_cast<std::size_t>(n)] /
                                    static_cast<std::int64_t>(types[t].size()));
  for (int n : unknown) {
    const Dyadic scaled = Dyadic::of(system.speeds[static_cast<std::size_t>(n)]) * weights.W *
                              Dyadic::of(multiple[static_cast<std::size_t>(n)]) -
                          load.exact * inside[static_cast<std::size_t>(n)];
    if (scaled.sign() <= 0) {
      report.overloaded_server = n;
      report.rate = rate[static_cast<std::size_t>(n)].value();
      return report;
    }
  }
  return report;
}

std::string set_text(const std::vector<int>& set) {
  std::string s = "{";
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (i) s += ",";
    if (i == 8 && set.size() > 12) {
      s += fmt::format("... {} servers in all", set.size());
      break;
    }
    s += std::to_string(set[i] + 1);
  }
  return s + "}";
}

}  // namespace qsweep::model
