#include "qsweep/run/memory.hpp"

#include <fmt/format.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/kept_memory.hpp"
#include "qsweep/sweep/cost.hpp"  // memory_text

namespace qsweep::run {
namespace {

// "Key:   12345 kB" of a /proc file, in bytes; 0 if the key is absent or the file unreadable.
double kib_field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    double kib = 0.0;
    fields >> kib;
    return kib * 1024.0;
  }
  return 0.0;
}

// The number in a cgroup limit file; 0 for "max" (no limit), an absent or unreadable file.
double limit_in(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0.0;
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    return 0.0;
  }
}

// The lowest limit in `file` of the cgroup `path` (under `mount`) and of those above it.
void lower_to_cgroup_limit(const std::string& mount, std::string path, const std::string& file,
                           MachineMemory& memory) {
  while (true) {
    const std::string directory = mount + (path == "/" ? "" : path);
    const double limit = limit_in(directory + "/" + file);
    if (limit > 0.0 && limit < memory.bytes) {
      memory.bytes = limit;
      memory.source = fmt::format("the memory limit of cgroup {} ({})", directory, file);
    }
    if (path.empty() || path == "/") return;
    const std::size_t slash = path.find_last_of('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
}

// The process's mapped (VmSize) and resident bytes, from /proc/self/statm (in pages); 0 if
// unreadable. The resident part of the block the exact engine keeps is left out.
struct ProcessSizes {
  double mapped = 0.0, resident = 0.0;
};
ProcessSizes process_sizes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return {};
  unsigned long long size = 0, resident = 0;
  const int read = std::fscanf(statm, "%llu %llu", &size, &resident);
  std::fclose(statm);
  if (read != 2) return {};
  const auto page = static_cast<double>(sysconf(_SC_PAGESIZE));
  return {static_cast<double>(size) * page,
          std::max(static_cast<double>(resident) * page -
                       static_cast<double>(exact::kept_memory_resident_bytes()),
                   0.0)};
}

}  // namespace

MachineMemory machine_memory(const std::string& proc, const std::string& cgroup_root) {
  MachineMemory memory;
  memory.bytes = kib_field(proc + "/meminfo", "MemTotal");
  if (!(memory.bytes > 0.0)) {
    throw Error("cannot read MemTotal from " + proc +
                "/meminfo to size the node's memory; give --node-memory");
  }
  memory.source = "MemTotal of " + proc + "/meminfo";
  // /proc/self/cgroup: "0::/path" (v2) or "N:controller,...:/path" (v1, the memory controller).
  std::ifstream cgroups(proc + "/self/cgroup");
  std::string line;
  while (std::getline(cgroups, line)) {
    const std::size_t first = line.find(':');
    const std::size_t second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (controllers.empty()) {
      lower_to_cgroup_limit(cgroup_root, path, "memory.max", memory);
    } else {
      std::istringstream list(controllers);
      std::string controller;
      while (std::getline(list, controller, ',')) {
        if (controller == "memory")
          lower_to_cgroup_limit(cgroup_root + "/memory", path, "memory.limit_in_bytes", memory);
      }
    }
  }
  return memory;
}

// VmRSS is the second field of /proc/self/statm (in pages), which the kernel makes much faster
// than /proc/self/status: it is read once per batch. The block the exact engine keeps for the
// next task is left out: it is counted in that task's estimate, not in the baseline.
double resident_bytes() { return process_sizes().resident; }

std::optional<MachineMemory> address_space_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  const ProcessSizes sizes = process_sizes();
  const double beyond = std::max(sizes.mapped - sizes.resident, 0.0);
  const auto bytes = static_cast<double>(limit.rlim_cur);
  return MachineMemory{
      std::max(bytes - beyond, 0.0),
      fmt::format("this process's address-space limit (ulimit -v) {} less the {} it maps beyond "
                  "its resident memory",
                  sweep::memory_text(bytes), sweep::memory_text(beyond))};
}

double peak_resident_bytes() { return kib_field("/proc/self/status", "VmHWM"); }

void release_free_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// --- NodeMap ------------------------------------------------------------------------------------

int NodeMap::ranks_on(int node) const {
  return static_cast<int>(std::count(node_of_rank.begin(), node_of_rank.end(), node));
}

double NodeMap::baselines_on(int node) const {
  double sum = 0.0;
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank)
    if (node_of_rank[rank] == node) sum += baseline[rank];
  return sum;
}

std::string NodeMap::ranks_text(int node) const {
  std::vector<int> ranks;
  for (std::size_t rank = 0; rank < node_of_rank.size(); ++rank)
    if (node_of_rank[rank] == node) ranks.push_back(static_cast<int>(rank));
  std::string text;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ", ";
    text += j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : std::to_string(ranks[i]);
    i = j + 1;
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + text;
}

// --- MemoryLedger -------------------------------------------------------------------------------

MemoryLedger::MemoryLedger(NodeMap nodes)
    : nodes_(std::move(nodes)),
      out_(nodes_.node_of_rank.size()),
      baselines_(nodes_.budget.size(), 0.0),
      charges_(nodes_.budget.size(), 0.0),
      batches_(nodes_.budget.size(), 0) {
  if (nodes_.baseline.size() != nodes_.node_of_rank.size())
    throw std::logic_error("MemoryLedger: one baseline per rank expected");
  for (std::size_t rank = 0; rank < nodes_.node_of_rank.size(); ++rank) {
    const int node = nodes_.node_of_rank[rank];
    if (node < 0 || node >= nodes_.nodes())
      throw std::logic_error("MemoryLedger: a rank on a node without a budget");
    baselines_[static_cast<std::size_t>(node)] += nodes_.baseline[rank];
  }
}

double MemoryLedger::charge(int rank) const {
  double largest = 0.0;
  for (const auto& [seq, bytes] : out_.at(static_cast<std::size_t>(rank)))
    largest = std::max(largest, bytes);
  return largest;
}

double MemoryLedger::used(int node) const {
  const auto n = static_cast<std::size_t>(node);
  return baselines_.at(n) + charges_.at(n);
}

double MemoryLedger::room(int rank) const {
  return budget_of(rank) - (used(node_of(rank)) - charge(rank));
}

bool MemoryLedger::node_idle(int rank) const {
  return batches_.at(static_cast<std::size_t>(node_of(rank))) == 0;
}

double MemoryLedger::room_for(int rank, double next_bytes) const {
  const double room_now = room(rank);
  if (node_idle(rank) && next_bytes <= budget_of(rank)) return std::max(room_now, next_bytes);
  return room_now;
}

double MemoryLedger::budget_of(int rank) const {
  return nodes_.budget.at(static_cast<std::size_t>(node_of(rank)));
}

void MemoryLedger::hand_out(int rank, std::uint64_t seq, double bytes) {
  const auto node = static_cast<std::size_t>(node_of(rank));
  const double before = charge(rank);
  out_.at(static_cast<std::size_t>(rank)).emplace_back(seq, bytes);
  charges_[node] += charge(rank) - before;
  ++batches_[node];
}

void MemoryLedger::returned(int rank, std::uint64_t seq) {
  const auto node = static_cast<std::size_t>(node_of(rank));
  auto& out = out_.at(static_cast<std::size_t>(rank));
  const double before = charge(rank);
  const auto kept =
      std::remove_if(out.begin(), out.end(), [&](const auto& entry) { return entry.first == seq; });
  batches_[node] -= static_cast<std::size_t>(out.end() - kept);
  out.erase(kept, out.end());
  // Recomputed when the node is idle, so that rounding never leaves a residue.
  charges_[node] = batches_[node] == 0 ? 0.0 : charges_[node] + charge(rank) - before;
}

void MemoryLedger::set_baseline(int rank, double bytes) {
  double& baseline = nodes_.baseline.at(static_cast<std::size_t>(rank));
  baselines_[static_cast<std::size_t>(node_of(rank))] += bytes - baseline;
  baseline = bytes;
}

}  // namespace qsweep::run
