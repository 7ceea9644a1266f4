#include "qsweep/model/stability.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <queue>

namespace qsweep::model {
namespace {

// Both checks minimise f(U) = mu(U) - L * sum_{S subset U} p_S over non-empty server sets U
// (strict subsets for local stability) and report U if min f <= tol. Ties count as violations.
constexpr double kRelTol = 1e-12;

// ---- families whose subset mass g(|U|) = sum_{S subset U} p_S depends only on |U| ----------
// For a fixed size u the worst U is the u slowest servers, so the minimum is over N prefixes.
bool size_symmetric(FamilyKind kind) {
  return kind == FamilyKind::independent || kind == FamilyKind::complete ||
         kind == FamilyKind::singletons_full;
}

double subset_mass(const Family& family, int u) {
  const int N = family.num_servers();
  switch (family.kind()) {
    case FamilyKind::independent:
      return static_cast<double>(u) / N;
    case FamilyKind::singletons_full: {
      const double eps = family.params().eps;
      return u == N ? 1.0 : u * (N - 1 - eps) / (N * (N - 1.0));
    }
    default: {  // complete: C(u, d) / C(N, d) as a product of ratios (no overflow)
      const int d = family.params().d;
      if (u < d) return 0.0;
      double r = 1.0;
      for (int i = 0; i < d; ++i) r *= static_cast<double>(u - i) / (N - i);
      return r;
    }
  }
}

StabilityReport min_over_sizes(const Family& family, const std::vector<double>& speeds, double L,
                               bool strict) {
  const int N = family.num_servers();
  std::vector<int> order(static_cast<std::size_t>(N));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return speeds[static_cast<std::size_t>(a)] < speeds[static_cast<std::size_t>(b)];
  });
  const double total = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  StabilityReport worst;
  double prefix = 0.0;
  int worst_u = 0;
  double worst_f = std::numeric_limits<double>::infinity();
  for (int u = 1; u <= (strict ? N - 1 : N); ++u) {
    prefix += speeds[static_cast<std::size_t>(order[static_cast<std::size_t>(u - 1)])];
    const double f = prefix - L * subset_mass(family, u);
    if (f < worst_f) {
      worst_f = f;
      worst_u = u;
    }
  }
  if (worst_u > 0 && worst_f <= kRelTol * total) {
    worst.ok = false;
    worst.slack = worst_f;
    worst.violating_set.assign(order.begin(), order.begin() + worst_u);
    std::sort(worst.violating_set.begin(), worst.violating_set.end());
  }
  return worst;
}

// ---- listed families: min cut in source -> type (L p_S) -> servers (inf) -> sink (mu_n) --------
// A cut with server set U on the source side costs mu(U) + L * sum_{S not subset U} p_S
// = L + f(U). Arrivals are inflated by (1 + 1e-11) so that f(U) = 0 also shows up as a cut < L'.
class MaxFlow {
 public:
  explicit MaxFlow(int nodes) : adj_(static_cast<std::size_t>(nodes)) {}
  void add_edge(int from, int to, double cap) {
    adj_[static_cast<std::size_t>(from)].push_back(static_cast<int>(edges_.size()));
    edges_.push_back({to, cap});
    adj_[static_cast<std::size_t>(to)].push_back(static_cast<int>(edges_.size()));
    edges_.push_back({from, 0.0});
  }
  void set_capacity(int edge, double cap) { edges_[static_cast<std::size_t>(edge)].cap = cap; }
  int edge_count() const { return static_cast<int>(edges_.size()); }

  double run(int s, int t, double eps) {
    eps_ = eps;
    double flow = 0.0;
    while (bfs(s, t)) {
      it_.assign(adj_.size(), 0);
      while (double f = dfs(s, t, std::numeric_limits<double>::infinity())) flow += f;
    }
    return flow;
  }
  // Nodes reachable from s in the residual graph after run(): the source side of a min cut.
  std::vector<bool> source_side(int s) const {
    std::vector<bool> seen(adj_.size(), false);
    std::vector<int> stack{s};
    seen[static_cast<std::size_t>(s)] = true;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (int e : adj_[static_cast<std::size_t>(v)]) {
        const auto& edge = edges_[static_cast<std::size_t>(e)];
        if (edge.cap > eps_ && !seen[static_cast<std::size_t>(edge.to)]) {
          seen[static_cast<std::size_t>(edge.to)] = true;
          stack.push_back(edge.to);
        }
      }
    }
    return seen;
  }

 private:
  struct Edge {
    int to;
    double cap;
  };
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
        if (edge.cap > eps_ && level_[static_cast<std::size_t>(edge.to)] < 0) {
          level_[static_cast<std::size_t>(edge.to)] = level_[static_cast<std::size_t>(v)] + 1;
          q.push(edge.to);
        }
      }
    }
    return level_[static_cast<std::size_t>(t)] >= 0;
  }
  double dfs(int v, int t, double pushed) {
    if (v == t) return pushed;
    auto& i = it_[static_cast<std::size_t>(v)];
    for (; i < adj_[static_cast<std::size_t>(v)].size(); ++i) {
      const int e = adj_[static_cast<std::size_t>(v)][i];
      auto& edge = edges_[static_cast<std::size_t>(e)];
      if (edge.cap <= eps_ ||
          level_[static_cast<std::size_t>(edge.to)] != level_[static_cast<std::size_t>(v)] + 1)
        continue;
      if (double f = dfs(edge.to, t, std::min(pushed, edge.cap)); f > 0.0) {
        edge.cap -= f;
        edges_[static_cast<std::size_t>(e ^ 1)].cap += f;
        return f;
      }
    }
    return 0.0;
  }
  std::vector<std::vector<int>> adj_;
  std::vector<Edge> edges_;
  std::vector<int> level_;
  std::vector<std::size_t> it_;
  double eps_ = 0.0;
};

constexpr double kInflate = 1e-11;

// Min over non-empty U (not containing `excluded`, if >= 0) via one max flow.
StabilityReport min_cut_check(const Family& family, const std::vector<double>& speeds, double L,
                              int excluded) {
  const auto& types = family.listed_types();
  const auto& probs = family.listed_probs();
  const int T = static_cast<int>(types.size()), N = family.num_servers();
  const int source = 0, sink = 1, first_type = 2, first_server = 2 + T;
  const double total = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  const double big = 4.0 * (total + L) + 1.0;
  MaxFlow net(2 + T + N);
  const double inflated = L * (1.0 + kInflate);
  for (int t = 0; t < T; ++t) {
    net.add_edge(source, first_type + t, inflated * probs[static_cast<std::size_t>(t)]);
    for (int s : types[static_cast<std::size_t>(t)])
      net.add_edge(first_type + t, first_server + s, big);
  }
  for (int n = 0; n < N; ++n)
    net.add_edge(first_server + n, sink, n == excluded ? big : speeds[static_cast<std::size_t>(n)]);
  const double flow = net.run(source, sink, 1e-15 * (total + L));
  StabilityReport report;
  if (flow >= inflated * (1.0 - 0.1 * kInflate)) return report;
  const auto side = net.source_side(source);
  std::vector<int> U;
  for (int n = 0; n < N; ++n)
    if (side[static_cast<std::size_t>(first_server + n)]) U.push_back(n);
  if (U.empty()) return report;  // numerical noise only
  double mass = 0.0;
  for (int t = 0; t < T; ++t) {
    const auto& S = types[static_cast<std::size_t>(t)];
    if (std::all_of(S.begin(), S.end(),
                    [&](int s) { return side[static_cast<std::size_t>(first_server + s)]; }))
      mass += probs[static_cast<std::size_t>(t)];
  }
  double mu = 0.0;
  for (int n : U) mu += speeds[static_cast<std::size_t>(n)];
  report.ok = false;
  report.violating_set = std::move(U);
  report.slack = mu - L * mass;
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
  const double L = system.total_arrival_rate();
  if (size_symmetric(system.family.kind()))
    return min_over_sizes(system.family, system.speeds, L, false);
  return min_cut_check(system.family, system.speeds, L, -1);
}

StabilityReport check_local_stability(const Family& family, const std::vector<double>& speeds) {
  const int N = family.num_servers();
  const double total = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  if (N == 1) return {};  // no non-empty strict subset
  if (size_symmetric(family.kind())) return min_over_sizes(family, speeds, total, true);
  // Every strict subset misses some server n: one min cut per excluded server, so listed families
  // cost N max flows (about 3 s at N = 1000 for a 3-regular graph). Local stability is reported
  // by the exact engine, whose N is small; sweeps of large graphs only need check_stability.
  for (int n = 0; n < N; ++n) {
    auto report = min_cut_check(family, speeds, total, n);
    if (!report.ok) return report;
  }
  return {};
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
