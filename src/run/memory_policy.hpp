#pragma once
// Memory at the start of a run: which ranks share a node and what each node may hold, and the
// refusal of a plan with a task that cannot fit anywhere (docs/running.md, "Memory"). The ledger
// that keeps the tasks within it while the run goes on is memory.hpp's. Internal to run/.
#include <cstdint>
#include <map>

#include "qsweep/run/memory.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/runner.hpp"
#include "qsweep/run/spans.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::run {

// Collective: which ranks share a node, each node's budget and each rank's resident size now.
// The map is on rank 0 (empty elsewhere).
NodeMap map_nodes(const Comm& comm, const RunOptions& options);

// Rank 0: refuses (InputError) a plan with a task that cannot fit: over --max-task-memory (by
// default a rank's share of its node), or bigger than every node that has a computing rank.
// Returns the ranks of the tasks that span ranks (spans.hpp).
std::map<std::uint64_t, Span> check_memory(const sweep::Plan& plan, const NodeMap& nodes,
                                           const RunOptions& options, bool rank0_computes);

}  // namespace qsweep::run
