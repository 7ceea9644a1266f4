#include "qsweep/model/family.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "qsweep/common/error.hpp"

namespace qsweep::model {
namespace {

[[noreturn]] void fail(const FamilyParams& p, const std::string& what) {
  throw InputError(fmt::format("family {} with N = {}: {}", name_of(p.kind), p.N, what));
}

void require_eps(const FamilyParams& p) {
  if (!(p.eps > 0.0 && p.eps < 1.0))
    fail(p, fmt::format("eps = {} is outside (0, 1); expected a value strictly between 0 and 1",
                        p.eps));
}

using Edge = std::pair<int, int>;

// Union-find over the edges: the number of merges, N - 1 exactly when the graph is connected.
int merges(int N, const std::vector<Edge>& edges, bool stop_at_cycle) {
  std::vector<int> parent(static_cast<std::size_t>(N));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[static_cast<std::size_t>(x)] != x)
      x = parent[static_cast<std::size_t>(x)] =
          parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    return x;
  };
  int count = 0;
  for (auto [a, b] : edges) {
    const int ra = find(a), rb = find(b);
    if (ra == rb) {
      if (stop_at_cycle) return -1;
      continue;
    }
    parent[static_cast<std::size_t>(ra)] = rb;
    ++count;
  }
  return count;
}

bool is_connected(int N, const std::vector<Edge>& edges) {
  return merges(N, edges, false) == N - 1;
}

bool is_connected_tree(int N, const std::vector<Edge>& edges) {
  return static_cast<int>(edges.size()) == N - 1 && merges(N, edges, true) == N - 1;
}

// Uniform random labelled tree on N vertices from a random Pruefer sequence.
std::vector<Edge> random_tree(int N, Rng& rng) {
  if (N == 2) return {{0, 1}};
  std::vector<int> code(static_cast<std::size_t>(N - 2));
  for (int& c : code) c = static_cast<int>(rng.below(static_cast<std::uint64_t>(N)));
  std::vector<int> degree(static_cast<std::size_t>(N), 1);
  for (int c : code) ++degree[static_cast<std::size_t>(c)];
  std::set<int> leaves;
  for (int v = 0; v < N; ++v)
    if (degree[static_cast<std::size_t>(v)] == 1) leaves.insert(v);
  std::vector<Edge> edges;
  for (int c : code) {
    const int leaf = *leaves.begin();
    leaves.erase(leaves.begin());
    edges.emplace_back(std::min(leaf, c), std::max(leaf, c));
    if (--degree[static_cast<std::size_t>(c)] == 1) leaves.insert(c);
  }
  const int a = *leaves.begin(), b = *std::next(leaves.begin());
  edges.emplace_back(a, b);
  return edges;
}

// Random connected simple k-regular graph by sequential pairing of stubs (Steger-Wormald
// style): pair two random free stubs if they join distinct non-adjacent vertices; restart when
// stuck or when the graph is disconnected (users expect one system, not several: a disconnected
// graph is never locally stable; for k >= 3 and large N the restart is rare).
std::vector<Edge> random_regular_graph(const FamilyParams& p, Rng& rng) {
  const int N = p.N, k = p.degree;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::vector<int> stubs;
    stubs.reserve(static_cast<std::size_t>(N) * static_cast<std::size_t>(k));
    for (int v = 0; v < N; ++v)
      for (int i = 0; i < k; ++i) stubs.push_back(v);
    std::set<Edge> edges;
    bool stuck = false;
    while (!stubs.empty() && !stuck) {
      bool paired = false;
      for (int tries = 0; tries < 200 && !paired; ++tries) {
        const auto i = static_cast<std::size_t>(rng.below(stubs.size()));
        const auto j = static_cast<std::size_t>(rng.below(stubs.size()));
        const int u = stubs[i], v = stubs[j];
        if (u == v || edges.count({std::min(u, v), std::max(u, v)})) continue;
        edges.insert({std::min(u, v), std::max(u, v)});
        // Remove the two stubs (larger index first so the smaller stays valid).
        for (auto idx : {std::max(i, j), std::min(i, j)}) {
          stubs[idx] = stubs.back();
          stubs.pop_back();
        }
        paired = true;
      }
      stuck = !paired;
    }
    std::vector<Edge> list(edges.begin(), edges.end());
    if (!stuck && is_connected(N, list)) return list;
  }
  fail(p, fmt::format("could not generate a connected simple {}-regular graph after 1000 attempts",
                      k));
}

// G(N, q) by geometric skipping over the N(N-1)/2 pairs: O(N + E) time.
std::vector<Edge> erdos_renyi_graph(const FamilyParams& p, Rng& rng) {
  const double q = p.edge_prob;
  std::vector<Edge> edges;
  const auto N = static_cast<std::int64_t>(p.N);
  const std::int64_t pairs = N * (N - 1) / 2;
  const double log_miss = q < 1.0 ? std::log1p(-q) : 0.0;
  std::int64_t index = -1;
  std::int64_t u = 0, row_start = 0;  // row u of the upper triangle starts at pair row_start
  while (true) {
    // The skip is compared as a double first: for a tiny q it may not fit in 64 bits.
    const double skip = q < 1.0 ? std::floor(std::log(rng.uniform_pos()) / log_miss) : 0.0;
    if (skip >= static_cast<double>(pairs - index - 1)) break;
    index += 1 + static_cast<std::int64_t>(skip);
    // Pair number `index` in row-major order of the upper triangle (indices only grow).
    while (index >= row_start + (N - 1 - u)) {
      row_start += N - 1 - u;
      ++u;
    }
    if (static_cast<std::int64_t>(edges.size()) >= kMaxListedJobTypes)
      fail(p, fmt::format("the random graph has more than {} edges; expected a smaller N x N x "
                          "edge_prob (model::kMaxListedJobTypes)",
                          kMaxListedJobTypes));
    edges.emplace_back(static_cast<int>(u), static_cast<int>(u + 1 + index - row_start));
  }
  return edges;
}

// Why a family would be too large to build ("" if it is not), from its parameters alone:
// checked before the constructor allocates anything.
std::string size_problem(const FamilyParams& p) {
  const auto N = std::int64_t{p.N};
  const std::string limit = fmt::format("(model::kMaxServers = {})", kMaxServers);
  if (p.kind == FamilyKind::torus) {
    const std::int64_t cells = std::int64_t{p.rows} * p.cols;  // ints: cannot overflow int64
    if (cells > kMaxServers)
      return fmt::format("torus {} x {} has {} servers; expected rows x cols <= {} {}", p.rows,
                         p.cols, cells, kMaxServers, limit);
  }
  if (N > kMaxServers)
    return fmt::format("N is larger than the model builds; expected N <= {} {}", kMaxServers,
                       limit);
  double listed = 0.0;  // job types the constructor will list (a double: no overflow)
  switch (p.kind) {
    case FamilyKind::random_regular:
      listed = 0.5 * static_cast<double>(N) * p.degree;
      break;
    case FamilyKind::erdos_renyi:  // the mean; the generator also stops at the limit
      if (p.edge_prob > 0.0)
        listed = p.edge_prob * 0.5 * static_cast<double>(N) * static_cast<double>(N - 1);
      break;
    case FamilyKind::explicit_types:
      listed = static_cast<double>(p.types.size());
      break;
    default:
      break;  // at most 2 N (torus, tree_singletons): within the limit for every N
  }
  if (listed > static_cast<double>(kMaxListedJobTypes))
    return fmt::format(
        "{} would list {:.3g} job types (graph edges); expected at most {} "
        "(model::kMaxListedJobTypes)",
        name_of(p.kind), listed, kMaxListedJobTypes);
  return "";
}

// Largest d with N (N-1) ... (N-d+1) <= 2^64 - 1 for some N >= d: d! <= 2^64 - 1 needs d <= 20.
constexpr int kMaxTupleSize = 20;

// A uniform ordered d-tuple of distinct servers out of N from one 64-bit draw (usually), where
// `tuples` = N (N-1) ... (N-d+1) fits in 64 bits. Lemire's multiply-shift for the bound `tuples`,
// read digit by digit (Brackett-Rozinsky and Lemire, "Batched ranged random integer
// generation", 2024): u * (N) * (N-1) ... keeps the high word of each product as digit i, uniform
// in [0, N - i), and the final low word decides the (rare) rejection exactly as for one bound.
// Server i is the digit-th smallest server not drawn before it, so every ordered tuple has
// probability 1 / tuples: the set is a uniform d-subset and its order a uniform permutation.
void sample_ordered_tuple(Rng& rng, int N, int d, std::uint64_t tuples, std::vector<int>& servers) {
  const auto size = static_cast<std::size_t>(d);
  std::array<int, kMaxTupleSize> drawn;  // the servers so far, ascending
  while (true) {
    servers.clear();
    std::uint64_t low = rng.next_u64();
    for (std::size_t i = 0; i < size; ++i) {
      const auto m = static_cast<unsigned __int128>(low) * (static_cast<std::uint64_t>(N) - i);
      low = static_cast<std::uint64_t>(m);
      auto server = static_cast<int>(m >> 64);
      std::size_t k = 0;
      for (; k < i && drawn[k] <= server; ++k) ++server;
      drawn[i] = server;
      for (std::size_t j = i; j > k; --j) std::swap(drawn[j], drawn[j - 1]);
      servers.push_back(server);
    }
    if (low >= tuples || low >= (0 - tuples) % tuples) return;
  }
}

// Binomial coefficient as a double; the running product is exact while it fits in 53 bits,
// so small families get p = 1 / C(N, d) to the last bit.
double binomial(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  k = std::min(k, n - k);
  double c = 1.0;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return std::round(c) < 0x1p53 ? std::round(c) : c;
}

}  // namespace

FamilyUses family_uses(FamilyKind kind) {
  FamilyUses u;
  switch (kind) {
    case FamilyKind::complete:
      u.d = true;
      break;
    case FamilyKind::hetero_ring:
    case FamilyKind::singletons_full:
      u.eps = true;
      break;
    case FamilyKind::tree_singletons:
      u.eps = u.graph_seed = u.tree_edges = true;
      break;
    case FamilyKind::random_regular:
      u.degree = u.graph_seed = true;
      break;
    case FamilyKind::erdos_renyi:
      u.edge_prob = u.graph_seed = true;
      break;
    case FamilyKind::torus:
      u.torus_shape = true;
      break;
    case FamilyKind::explicit_types:
      u.types = true;
      break;
    default:
      break;
  }
  return u;
}

Family::Family(FamilyParams params) : params_(std::move(params)) {
  const FamilyParams& p = params_;
  const int N = p.N;
  if (N < 1) fail(p, "N must be at least 1");
  if (const auto problem = size_problem(p); !problem.empty()) fail(p, problem);
  auto min_n = [&](int n) {
    if (N < n) fail(p, fmt::format("needs N >= {}", n));
  };
  // Listed families: build the edge/type list, then the alias table below.
  std::vector<Edge> edges;
  switch (p.kind) {
    case FamilyKind::independent:
      break;
    case FamilyKind::complete:
      if (p.d < 1 || p.d > N)
        fail(p, fmt::format("d = {} is out of range; expected 1 <= d <= N", p.d));
      complete_tuples_ = 1;
      for (int i = 0; i < p.d; ++i) {
        const auto choices = static_cast<std::uint64_t>(N - i);
        if (complete_tuples_ > std::numeric_limits<std::uint64_t>::max() / choices) {
          complete_tuples_ = 0;  // too many for one draw: Floyd's algorithm
          break;
        }
        complete_tuples_ *= choices;
      }
      break;
    case FamilyKind::singletons_full:
      min_n(2);
      require_eps(p);
      break;
    case FamilyKind::ring:
      min_n(3);
      for (int i = 0; i < N; ++i) edges.emplace_back(i, (i + 1) % N);
      break;
    case FamilyKind::hetero_ring:
      min_n(4);
      if (N % 2 != 0)
        fail(p, "hetero_ring needs an even N; expected N = 4, 6, 8, ... (paper eq. 35)");
      require_eps(p);
      for (int i = 0; i < N; ++i) {
        // Paper eq. (35), 1-based edge i = {i, i+1}: 2 eps / N for even i, 2 (1 - eps) / N for odd.
        const int one_based = i + 1;
        listed_.push_back({i, (i + 1) % N});
        listed_p_.push_back((one_based % 2 == 0 ? p.eps : 1.0 - p.eps) * 2.0 / N);
      }
      break;
    case FamilyKind::path:
      min_n(2);
      for (int i = 0; i + 1 < N; ++i) edges.emplace_back(i, i + 1);
      break;
    case FamilyKind::star:
      min_n(2);
      for (int i = 1; i < N; ++i) edges.emplace_back(0, i);
      break;
    case FamilyKind::tree_singletons: {
      min_n(2);
      require_eps(p);
      std::vector<Edge> tree = p.tree_edges;
      for (auto& [a, b] : tree) {
        if (a < 0 || a >= N || b < 0 || b >= N)
          fail(p, fmt::format("tree edge ({}, {}) names a server outside 1..N", a + 1, b + 1));
        if (a > b) std::swap(a, b);
      }
      if (tree.empty()) {
        Rng rng(p.graph_seed, 0x7472656555ULL);
        tree = random_tree(N, rng);
      } else if (!is_connected_tree(N, tree)) {
        fail(p,
             "tree_edges do not form a spanning tree (expected N - 1 edges, connected, no cycle)");
      }
      for (int n = 0; n < N; ++n) {
        listed_.push_back({n});
        listed_p_.push_back((1.0 - p.eps) / N);
      }
      for (auto [a, b] : tree) {
        listed_.push_back({a, b});
        listed_p_.push_back(p.eps / (N - 1));
      }
      break;
    }
    case FamilyKind::random_regular: {
      if (p.degree < 1 || p.degree >= N)
        fail(p, fmt::format("degree = {} is out of range; expected 1 <= degree < N", p.degree));
      if ((static_cast<long>(N) * p.degree) % 2 != 0)
        fail(p, "N * degree must be even for a regular graph");
      Rng rng(p.graph_seed, 0x72656775ULL);
      edges = random_regular_graph(p, rng);
      break;
    }
    case FamilyKind::erdos_renyi: {
      min_n(2);
      if (!(p.edge_prob > 0.0 && p.edge_prob <= 1.0))
        fail(p, fmt::format("edge_prob = {} is outside (0, 1]", p.edge_prob));
      Rng rng(p.graph_seed, 0x45524752ULL);
      edges = erdos_renyi_graph(p, rng);
      if (edges.empty())
        fail(p, "the random graph has no edge; raise edge_prob or change graph_seed");
      break;
    }
    case FamilyKind::torus: {
      if (p.rows < 3 || p.cols < 3)
        fail(p, fmt::format("torus {} x {}: rows and cols must be at least 3", p.rows, p.cols));
      if (static_cast<long>(p.rows) * p.cols != N)
        fail(p, fmt::format("torus {} x {} has {} servers, not N", p.rows, p.cols,
                            static_cast<long>(p.rows) * p.cols));
      for (int r = 0; r < p.rows; ++r)
        for (int c = 0; c < p.cols; ++c) {
          const int v = r * p.cols + c;
          edges.emplace_back(v, r * p.cols + (c + 1) % p.cols);
          edges.emplace_back(v, ((r + 1) % p.rows) * p.cols + c);
        }
      break;
    }
    case FamilyKind::explicit_types: {
      if (p.types.empty()) fail(p, "explicit family needs at least one type");
      std::map<std::vector<int>, double> merged;
      double total = 0.0;
      for (std::size_t t = 0; t < p.types.size(); ++t) {
        std::vector<int> servers = p.types[t].servers;
        if (servers.empty()) fail(p, fmt::format("type {} has no servers", t + 1));
        for (int s : servers)
          if (s < 0 || s >= N)
            fail(p,
                 fmt::format("type {} names server {}, outside 1..{}; expected server numbers 1..N",
                             t + 1, s + 1, N));
        std::sort(servers.begin(), servers.end());
        if (std::adjacent_find(servers.begin(), servers.end()) != servers.end())
          fail(p, fmt::format("type {} lists a server twice", t + 1));
        const double prob = p.types[t].p;
        if (!(prob > 0.0 && std::isfinite(prob)))
          fail(p, fmt::format("type {} has p = {}; expected p > 0", t + 1, prob));
        merged[servers] += prob;
        total += prob;
      }
      if (std::abs(total - 1.0) > 1e-9)
        fail(p, fmt::format("type probabilities sum to {:.12g}; expected 1", total));
      for (auto& [servers, prob] : merged) {
        listed_.push_back(servers);
        listed_p_.push_back(prob / total);
      }
      break;
    }
  }
  if (!edges.empty()) {
    // Uniform over distinct edges.
    for (auto& e : edges)
      if (e.first > e.second) std::swap(e.first, e.second);
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    for (auto [a, b] : edges) listed_.push_back({a, b});
    listed_p_.assign(listed_.size(), 1.0 / static_cast<double>(listed_.size()));
  }
  if (!listed_.empty()) {
    // Walker/Vose alias table.
    const std::size_t n = listed_.size();
    alias_prob_.assign(n, 0.0);
    alias_index_.assign(n, 0);
    std::vector<double> scaled(n);
    std::vector<std::size_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      scaled[i] = listed_p_[i] * static_cast<double>(n);
      (scaled[i] < 1.0 ? small : large).push_back(i);
    }
    while (!small.empty() && !large.empty()) {
      const std::size_t s = small.back(), l = large.back();
      small.pop_back();
      alias_prob_[s] = scaled[s];
      alias_index_[s] = static_cast<std::uint32_t>(l);
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (std::size_t i : small) alias_prob_[i] = 1.0;
    for (std::size_t i : large) alias_prob_[i] = 1.0;
  }
}

double Family::num_types() const {
  switch (kind()) {
    case FamilyKind::independent:
      return params_.N;
    case FamilyKind::complete:
      return binomial(params_.N, params_.d);
    case FamilyKind::singletons_full:
      return params_.N + 1.0;
    default:
      return static_cast<double>(listed_.size());
  }
}

int Family::max_type_size() const {
  switch (kind()) {
    case FamilyKind::independent:
      return 1;
    case FamilyKind::complete:
      return params_.d;
    case FamilyKind::singletons_full:
      return params_.N;
    default: {
      std::size_t m = 0;
      for (const auto& t : listed_) m = std::max(m, t.size());
      return static_cast<int>(m);
    }
  }
}

void Family::sample_other(Rng& rng, std::vector<int>& servers) const {
  servers.clear();
  const auto N = static_cast<std::uint64_t>(params_.N);
  switch (kind()) {
    case FamilyKind::independent:
      servers.push_back(static_cast<int>(rng.below(N)));
      return;
    case FamilyKind::complete: {
      if (complete_tuples_ > 0)
        return sample_ordered_tuple(rng, params_.N, params_.d, complete_tuples_, servers);
      // Floyd's algorithm: a uniform d-subset with d draws (membership test is O(d)).
      const auto d = static_cast<std::uint64_t>(params_.d);
      for (std::uint64_t j = N - d; j < N; ++j) {
        const auto t = static_cast<int>(rng.below(j + 1));
        const bool seen = std::find(servers.begin(), servers.end(), t) != servers.end();
        servers.push_back(seen ? static_cast<int>(j) : t);
      }
      return;
    }
    case FamilyKind::singletons_full:
      if (rng.uniform() < params_.eps / static_cast<double>(N - 1)) {
        servers.resize(N);
        std::iota(servers.begin(), servers.end(), 0);
      } else {
        servers.push_back(static_cast<int>(rng.below(N)));
      }
      return;
    default: {
      auto i = static_cast<std::size_t>(rng.below(listed_.size()));
      // Uniform families (graphs) have every alias_prob_ = 1: the second draw could not matter.
      if (alias_prob_[i] < 1.0 && rng.uniform() >= alias_prob_[i]) i = alias_index_[i];
      servers = listed_[i];
      return;
    }
  }
}

std::vector<JobType> Family::enumerate(std::size_t max_types) const {
  const int N = params_.N;
  if (N > kMaxMaskServers)
    throw InputError(fmt::format("family {} with N = {}: listing job types needs N <= {}",
                                 name_of(kind()), N, kMaxMaskServers));
  if (num_types() > static_cast<double>(max_types))
    throw InputError(
        fmt::format("family {} with N = {} has {:.3g} job types; at most {} can be listed",
                    name_of(kind()), N, num_types(), max_types));
  auto bit = [](int n) { return ServerMask{1} << n; };
  std::vector<JobType> types;
  switch (kind()) {
    case FamilyKind::independent:
      for (int n = 0; n < N; ++n) types.push_back({bit(n), 1.0 / N});
      break;
    case FamilyKind::complete: {
      const double p = 1.0 / num_types();
      std::vector<int> pick(static_cast<std::size_t>(params_.d));
      std::iota(pick.begin(), pick.end(), 0);
      const int d = params_.d;
      while (true) {
        ServerMask m = 0;
        for (int s : pick) m |= bit(s);
        types.push_back({m, p});
        int i = d - 1;
        while (i >= 0 && pick[static_cast<std::size_t>(i)] == N - d + i) --i;
        if (i < 0) break;
        ++pick[static_cast<std::size_t>(i)];
        for (int k = i + 1; k < d; ++k)
          pick[static_cast<std::size_t>(k)] = pick[static_cast<std::size_t>(k - 1)] + 1;
      }
      break;
    }
    case FamilyKind::singletons_full: {
      const double eps = params_.eps;
      for (int n = 0; n < N; ++n) types.push_back({bit(n), (N - 1 - eps) / (N * (N - 1.0))});
      types.push_back({N == 64 ? ~ServerMask{0} : bit(N) - 1, eps / (N - 1)});
      break;
    }
    default: {
      std::map<ServerMask, double> merged;
      for (std::size_t t = 0; t < listed_.size(); ++t) {
        ServerMask m = 0;
        for (int s : listed_[t]) m |= bit(s);
        merged[m] += listed_p_[t];
      }
      for (auto [m, p] : merged) types.push_back({m, p});
    }
  }
  return types;
}

}  // namespace qsweep::model
