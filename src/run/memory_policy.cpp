#include "memory_policy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/serialization/string.hpp>
#include <map>
#include <optional>

#include "qsweep/sweep/cost.hpp"

namespace qsweep::run {
namespace {

// What a rank tells rank 0 about its node and itself.
struct RankMemory {
  int node_leader = 0;      // rank of the first rank on the same node
  double node_bytes = 0.0;  // 0: could not be found out (node_source says why)
  std::string node_source;
  double resident_bytes = 0.0;
  bool address_limited = false;  // address_space_limit() of the rank, when it has one
  MachineMemory address_limit;
  template <class Archive>
  void serialize(Archive& ar, unsigned /*version*/) {
    // clang-format off
    ar & node_leader & node_bytes & node_source & resident_bytes & address_limited &
        address_limit.bytes & address_limit.source;
    // clang-format on
  }
};

}  // namespace

// Collective: which ranks share a node, each node's budget and each rank's resident size now
// (the plan parsed: most of a rank's baseline). The map is on rank 0 (empty elsewhere).
NodeMap map_nodes(const Comm& comm, const RunOptions& options) {
  RankMemory mine;
  {
    const Comm node = comm.split_shared();
    mine.node_leader = comm.rank();
    node.broadcast(mine.node_leader, 0);
  }
  if (options.node_memory > 0.0) {
    mine.node_bytes = options.node_memory;
    mine.node_source = "--node-memory";
  } else {
    try {
      const MachineMemory machine = machine_memory();
      mine.node_bytes = machine.bytes;
      mine.node_source = machine.source;
    } catch (const Error& e) {
      mine.node_source = e.what();
    }
  }
  mine.resident_bytes = resident_bytes();
  if (const std::optional<MachineMemory> limit = address_space_limit()) {
    mine.address_limited = true;
    mine.address_limit = *limit;
  }
  const std::vector<RankMemory> ranks = comm.gather(mine, 0);
  NodeMap nodes;
  std::map<int, int> node_of_leader;
  for (const RankMemory& rank : ranks) {
    const auto [it, added] = node_of_leader.emplace(rank.node_leader, nodes.nodes());
    if (added) {
      // The first rank of a node speaks for it (every rank of a node sees the same memory).
      const RankMemory& leader = ranks.at(static_cast<std::size_t>(rank.node_leader));
      nodes.budget.push_back(leader.node_bytes);
      nodes.source.push_back(leader.node_source);
    }
    nodes.node_of_rank.push_back(it->second);
    nodes.baseline.push_back(rank.resident_bytes);
    nodes.address_limit.push_back(rank.address_limited ? std::optional(rank.address_limit)
                                                       : std::nullopt);
  }
  return nodes;
}

// Rank 0: refuses a plan with a task that cannot fit: over --max-task-memory (by default a
// rank's share of its node), or bigger than every node that has a computing rank, with its ranks'
// baselines.
// Returns the ranks of the tasks that span ranks (spans.hpp), each rank's share checked likewise.
std::map<std::uint64_t, Span> check_memory(const sweep::Plan& plan, const NodeMap& nodes,
                                           const RunOptions& options, bool rank0_computes) {
  std::vector<bool> computes(static_cast<std::size_t>(nodes.nodes()), false);
  for (std::size_t rank = 0; rank < nodes.node_of_rank.size(); ++rank)
    if (rank != 0 || rank0_computes)
      computes[static_cast<std::size_t>(nodes.node_of_rank[rank])] = true;
  for (int node = 0; node < nodes.nodes(); ++node) {
    if (!(nodes.budget[static_cast<std::size_t>(node)] > 0.0))
      throw InputError(fmt::format("node {} ({}): {}", node, nodes.ranks_text(node),
                                   nodes.source[static_cast<std::size_t>(node)]));
  }
  sweep::MemoryLimit per_task;
  per_task.baseline_bytes = *std::max_element(nodes.baseline.begin(), nodes.baseline.end());
  if (options.max_task_memory > 0.0) {
    per_task.bytes = options.max_task_memory;
    per_task.source = "--max-task-memory " + sweep::memory_text(options.max_task_memory);
  } else {
    // A rank's share of the node where it is largest.
    for (int node = 0; node < nodes.nodes(); ++node) {
      if (!computes[static_cast<std::size_t>(node)]) continue;
      const double budget = nodes.budget[static_cast<std::size_t>(node)];
      const double share = budget / nodes.ranks_on(node);
      if (share <= per_task.bytes) continue;
      per_task.bytes = share;
      per_task.source = fmt::format(
          "the default --max-task-memory {}: {} of node memory ({}) / {} ranks on the node",
          sweep::memory_text(share), sweep::memory_text(budget),
          nodes.source[static_cast<std::size_t>(node)], nodes.ranks_on(node));
    }
    // Or a computing rank's address-space limit (ulimit -v) where lower: a task must fit any rank.
    for (std::size_t rank = 0; rank < nodes.address_limit.size(); ++rank) {
      const std::optional<MachineMemory>& limit = nodes.address_limit[rank];
      if (!limit || (rank == 0 && !rank0_computes) || limit->bytes >= per_task.bytes) continue;
      per_task.bytes = limit->bytes;
      per_task.source = fmt::format("the default --max-task-memory {}: rank {}, {}",
                                    sweep::memory_text(limit->bytes), rank, limit->source);
    }
  }
  sweep::check_task_memory(plan, per_task);
  std::map<std::uint64_t, Span> spans =
      choose_spans(plan, per_task, static_cast<int>(nodes.node_of_rank.size()) - 1);
  // Alone on the node that has the most room beside its ranks' baselines.
  sweep::MemoryLimit alone;
  alone.bytes = -1.0;
  for (int node = 0; node < nodes.nodes(); ++node) {
    if (!computes[static_cast<std::size_t>(node)]) continue;
    const double budget = nodes.budget[static_cast<std::size_t>(node)];
    const double room = budget - nodes.baselines_on(node);
    if (room <= alone.bytes) continue;
    alone.bytes = room;
    alone.source = fmt::format(
        "the {} that node {} may hold ({}) less the {} its {} hold "
        "without tasks",
        sweep::memory_text(budget), node, nodes.source[static_cast<std::size_t>(node)],
        sweep::memory_text(nodes.baselines_on(node)), nodes.ranks_text(node));
  }
  sweep::check_task_memory(plan, alone);
  return spans;
}

}  // namespace qsweep::run
