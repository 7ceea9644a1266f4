#pragma once
// Private to the model layer: the graph generators of the families (src/model/graphs.cpp).
// Vertices are 0-based; each generator consumes its Rng in a fixed order, so a graph_seed gives
// the same graph in every version.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "qsweep/common/rng.hpp"

namespace qsweep::model::detail {

using Edge = std::pair<int, int>;

// Whether the edges connect all N vertices (union-find).
bool is_connected(int N, const std::vector<Edge>& edges);
// Whether the edges are a spanning tree of the N vertices: N - 1 edges, connected, no cycle.
bool is_connected_tree(int N, const std::vector<Edge>& edges);

// Uniform random labelled tree on N >= 2 vertices from a random Pruefer sequence.
std::vector<Edge> random_tree(int N, Rng& rng);

// Random connected simple k-regular graph by sequential pairing of stubs (Steger-Wormald
// style); nullopt if 1000 attempts did not give one.
std::optional<std::vector<Edge>> random_regular_graph(int N, int k, Rng& rng);

// G(N, q), 0 < q <= 1, by geometric skipping over the N(N-1)/2 pairs in O(N + E) time; nullopt
// once it would have more than max_edges edges.
std::optional<std::vector<Edge>> erdos_renyi_graph(int N, double q, std::int64_t max_edges,
                                                   Rng& rng);

// The rows x cols grid with wrap-around: per vertex its right and its lower neighbour.
std::vector<Edge> torus_graph(int rows, int cols);

}  // namespace qsweep::model::detail
