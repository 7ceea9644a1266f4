#include "graphs.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <set>

namespace qsweep::model::detail {
namespace {

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

}  // namespace

bool is_connected(int N, const std::vector<Edge>& edges) {
  return merges(N, edges, false) == N - 1;
}

bool is_connected_tree(int N, const std::vector<Edge>& edges) {
  return static_cast<int>(edges.size()) == N - 1 && merges(N, edges, true) == N - 1;
}

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

// Pair two random free stubs if they join distinct non-adjacent vertices; restart when stuck or
// when the graph is disconnected (users expect one system, not several: a disconnected graph is
// never locally stable; for k >= 3 and large N the restart is rare).
std::optional<std::vector<Edge>> random_regular_graph(int N, int k, Rng& rng) {
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
  return std::nullopt;
}

std::optional<std::vector<Edge>> erdos_renyi_graph(int N_servers, double q, std::int64_t max_edges,
                                                   Rng& rng) {
  std::vector<Edge> edges;
  const auto N = static_cast<std::int64_t>(N_servers);
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
    if (static_cast<std::int64_t>(edges.size()) >= max_edges) return std::nullopt;
    edges.emplace_back(static_cast<int>(u), static_cast<int>(u + 1 + index - row_start));
  }
  return edges;
}

std::vector<Edge> torus_graph(int rows, int cols) {
  std::vector<Edge> edges;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      const int v = r * cols + c;
      edges.emplace_back(v, r * cols + (c + 1) % cols);
      edges.emplace_back(v, ((r + 1) % rows) * cols + c);
    }
  return edges;
}

}  // namespace qsweep::model::detail
