#include "qsweep/sweep/cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>
#include <optional>

#include "method.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/common/printable.hpp"

namespace qsweep::sweep {

CostEstimate estimate_cost(const Task& task) {
  return detail::method_adapter(task.method()).estimate(task);
}

std::optional<MemoryEstimate> memory_per_rank(const Task& task, int ranks) {
  const auto& adapter = detail::method_adapter(task.method());
  if (adapter.memory_per_rank == nullptr) return std::nullopt;
  return adapter.memory_per_rank(task, ranks);
}

std::string memory_text(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format("{:.{}f} {}", bytes, bytes < 10.0 ? 2 : bytes < 100.0 ? 1 : 0, kUnits[unit]);
}

double parse_memory_size(std::string_view text, std::string_view what) {
  auto refuse = [&](std::string_view why) -> double {
    throw InputError(
        fmt::format("{}'{}' {}; expected a memory size: a number with an optional "
                    "binary unit K, M, G or T (4G = 4GiB = 2^32 bytes; no unit: "
                    "bytes), e.g. 4G or 512M",
                    what.empty() ? std::string() : std::string(what) + ": ", printable(text), why));
  };
  std::size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
    ++end;
  double number = 0.0;
  const auto [ptr, error] = std::from_chars(text.data(), text.data() + end, number);
  if (end == 0 || error != std::errc() || ptr != text.data() + end)
    return refuse("is not a memory size");
  std::string unit(text.substr(end));
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!unit.empty() && unit != "B") {
    const std::string_view prefixes = "KMGT";
    const std::size_t prefix = prefixes.find(unit[0]);
    const std::string_view rest = std::string_view(unit).substr(1);
    if (prefix == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB"))
      return refuse("has an unknown unit");
    shift = 10 * static_cast<int>(prefix + 1);
  }
  const double bytes = std::ldexp(number, shift);
  if (!(bytes >= 1.0)) return refuse("is less than one byte");
  if (bytes > std::ldexp(1.0, 60)) return refuse("is more than 2^60 bytes");
  return bytes;
}

void check_task_memory(const Plan& plan, const MemoryLimit& limit) {
  std::optional<Task> first;
  std::size_t over = 0;
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    const TaskEstimate& estimate = plan.tasks.estimate(id);
    if (estimate.ranks != 1 || estimate.memory + limit.baseline_bytes <= limit.bytes) continue;
    if (!first) first = plan.tasks[id];
    ++over;
  }
  if (!first) return;
  const std::size_t block = static_cast<std::size_t>(first->block);
  const std::string where =
      block < plan.block_locations.size() ? plan.block_locations[block] : plan.source;
  const std::string baseline = limit.baseline_bytes > 0.0
                                   ? fmt::format(" on top of the {} its process holds without it",
                                                 memory_text(limit.baseline_bytes))
                                   : "";
  // A task that can span ranks fits with `ranks: auto` if two ranks' shares are smaller.
  const std::optional<MemoryEstimate> on_two = memory_per_rank(*first, 2);
  const std::string spread =
      on_two && on_two->bytes < first->memory
          ? ", or `ranks: auto` in its block to spread it over several ranks of `qsweep run` "
            "(docs/running.md, \"Tasks that span ranks\")"
          : "";
  throw InputError(fmt::format(
      "{}: task {} '{}' needs an estimated {} ({}){}, more than {}{}; expected tasks that fit (a "
      "smaller N, n or qmax), or more memory per task: --max-task-memory with fewer ranks per "
      "node (docs/running.md, \"Memory\"){}",
      where, first->id, describe(*first), memory_text(first->memory),
      estimate_cost(*first).memory.formula, baseline, limit.source,
      over > 1 ? fmt::format(" ({} more tasks of the plan are over it)", over - 1) : "", spread));
}

}  // namespace qsweep::sweep
