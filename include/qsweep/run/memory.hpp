#pragma once
// Memory of a node and of this process (Linux: /proc and cgroups), and the ledger with which the
// coordinator keeps the tasks running at once on each node within the node's memory
// (docs/running.md, "Memory").
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace qsweep::run {

struct MachineMemory {
  double bytes = 0.0;
  std::string
      source;  // "MemTotal of /proc/meminfo", "the cgroup limit /sys/fs/cgroup/.../memory.max"
};

// The memory this process may use on its node: MemTotal of /proc/meminfo, or where lower the
// memory limit of its cgroup or of a cgroup above it (v2 memory.max, v1 memory.limit_in_bytes;
// SLURM's per-job limit is one). `proc` and `cgroup_root` are parameters for tests. Throws Error
// if /proc/meminfo cannot be read.
MachineMemory machine_memory(const std::string& proc = "/proc",
                             const std::string& cgroup_root = "/sys/fs/cgroup");

// What this process may hold under its address-space limit (RLIMIT_AS, `ulimit -v`, as Torque and
// PBS set it), in the terms of a task's limit (sweep::MemoryLimit: a task's estimate plus the
// process's resident baseline): the limit less what the process maps beyond its resident memory
// now. nullopt when there is no limit.
std::optional<MachineMemory> address_space_limit();

// Resident now (VmRSS, read from /proc/self/statm, less the resident part of the block the exact
// engine keeps for the next task: exact::kept_memory_resident_bytes()) and peak resident (VmHWM
// of /proc/self/status), in bytes; 0 if unreadable.
double resident_bytes();
double peak_resident_bytes();

// Gives the memory freed by a big task back to the system (glibc's malloc_trim), so that the
// rank's resident size, which the coordinator counts as its baseline, drops with it.
void release_free_memory();

// Which ranks share a node and the memory of each node.
struct NodeMap {
  std::vector<int> node_of_rank;  // node index (0, 1, ...) of each rank
  std::vector<double> budget;     // bytes each node may hold, per node
  std::vector<double> baseline;   // resident bytes of each rank without a task (measured)
  // Per rank: its address_space_limit() (none if empty or nullopt); every task must fit it.
  std::vector<std::optional<MachineMemory>> address_limit;
  std::vector<std::string> source;  // per node: where its budget comes from, for messages

  int nodes() const { return static_cast<int>(budget.size()); }
  int ranks_on(int node) const;
  double baselines_on(int node) const;     // sum over the node's ranks
  std::string ranks_text(int node) const;  // "ranks 0-2", "ranks 0, 3"
};

// The memory of the batches handed out and not yet reported, per rank and node. A rank runs its
// batches one after another, so it is charged the largest of them; a node holds the baselines of
// its ranks plus their charges, which dispatch keeps within the node's budget.
class MemoryLedger {
 public:
  explicit MemoryLedger(NodeMap nodes);

  // The most a new batch on `rank` may take: the node's budget less its ranks' baselines and the
  // other ranks' charges (this rank's own charge does not add: its batches run in turn).
  double room(int rank) const;
  // No batch is out on the rank's node.
  bool node_idle(int rank) const;
  // The room dispatch gives a batch on `rank` whose first task needs `next_bytes`: room(), or on
  // an idle node at least `next_bytes` if that fits the node's budget, even where the measured
  // baselines say otherwise: a node never waits for memory with nothing running to free it.
  double room_for(int rank, double next_bytes) const;
  double budget_of(int rank) const;
  int node_of(int rank) const { return nodes_.node_of_rank.at(static_cast<std::size_t>(rank)); }
  const NodeMap& nodes() const { return nodes_; }

  void hand_out(int rank, std::uint64_t seq, double bytes);
  void returned(int rank, std::uint64_t seq);  // its report came: the batch is over
  void set_baseline(int rank, double bytes);   // measured while the rank ran no task

  double charge(int rank) const;  // the largest batch out on the rank (0 if none)
  double used(int node) const;    // baselines and charges of the node's ranks

 private:
  NodeMap nodes_;
  std::vector<std::vector<std::pair<std::uint64_t, double>>> out_;  // per rank: (seq, bytes)
  // Per node: the sum of its ranks' baselines, of their charges, and the batches out.
  std::vector<double> baselines_, charges_;
  std::vector<std::size_t> batches_;
};

}  // namespace qsweep::run
