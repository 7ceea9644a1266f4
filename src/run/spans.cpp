#include "qsweep/run/spans.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <new>

#include "qsweep/common/exit_codes.hpp"
#include "qsweep/exact_mpi/general.hpp"

namespace qsweep::run {
namespace {

std::string where(const sweep::Plan& plan, const sweep::Task& task) {
  const auto block = static_cast<std::size_t>(task.block);
  return block < plan.block_locations.size() ? plan.block_locations[block] : plan.source;
}

bool fits(const sweep::MemoryEstimate& share, const sweep::MemoryLimit& limit) {
  return share.bytes + limit.baseline_bytes <= limit.bytes;
}

}  // namespace

std::map<std::uint64_t, Span> choose_spans(const sweep::Plan& plan, const sweep::MemoryLimit& limit,
                                           int available) {
  std::map<std::uint64_t, Span> spans;
  for (std::uint64_t id = 0; id < plan.tasks.size(); ++id) {
    if (plan.tasks.estimate(id).ranks == 1) continue;  // without making the task
    const sweep::Task& task = plan.tasks.at(id);
    if (task.ranks > available) {
      throw InputError(fmt::format(
          "{}: task {} '{}' asks for {} ranks and this run has {} that can run a task together "
          "(every rank but rank 0, which coordinates); expected ranks: {} at most, or a run on "
          "more ranks",
          where(plan, task), task.id, sweep::describe(task), task.ranks, available,
          std::max(available, 1)));
    }
    // A task that cannot span ranks (not on the general engine) runs on one, also with auto; one
    // with N above the single-rank engine's limit needs at least two.
    const bool can_span = sweep::memory_per_rank(task, 2).has_value();
    const bool automatic = task.ranks == sweep::kAutoRanks;
    const int most = !automatic ? task.ranks : can_span ? std::max(available, 1) : 1;
    const auto share_on = [&](int ranks) -> std::optional<sweep::MemoryEstimate> {
      return can_span ? sweep::memory_per_rank(task, ranks) : sweep::estimate_cost(task).memory;
    };
    int ranks = automatic ? 1 : task.ranks;
    std::optional<sweep::MemoryEstimate> share = share_on(ranks);
    while ((!share || !fits(*share, limit)) && ranks < most) share = share_on(++ranks);
    if (!share) {
      throw InputError(fmt::format(
          "{}: task {} '{}' is too large for one rank's engine and this run has {} rank(s) that "
          "can run a task together (every rank but rank 0); expected a run on at least 3 ranks",
          where(plan, task), task.id, sweep::describe(task), available));
    }
    if (!fits(*share, limit)) {
      throw InputError(fmt::format(
          "{}: task {} '{}' needs an estimated {} per rank ({}) on {} ranks on top of the {} a "
          "rank holds without it, more than {}; expected tasks that fit, more ranks "
          "(ranks: auto uses up to {}) or more memory per rank (docs/running.md, \"Memory\")",
          where(plan, task), task.id, sweep::describe(task), sweep::memory_text(share->bytes),
          share->formula, ranks, sweep::memory_text(limit.baseline_bytes), limit.source,
          std::max(available, 1)));
    }
    if (ranks > 1) spans[task.id] = Span{ranks, share->bytes, share->result_bytes};
  }
  return spans;
}

sweep::TaskOutcome execute_spanning(const sweep::Task& task, const Comm& group,
                                    const exact_mpi::StopCheck& stop) {
  sweep::SharedEngines engines;
  engines.exact_general = [&](const std::vector<model::JobType>& types,
                              const std::vector<double>& speeds, double total_rate, int qmax,
                              bool per_type) {
    try {
      return exact_mpi::general_engine(group.handle(), types, speeds, total_rate, qmax, per_type,
                                       nullptr, -1, stop);
    } catch (const std::bad_alloc&) {
      MpiSession::abort(fmt::format("out of memory in task {}, which runs on {} ranks together: "
                                    "ending the job (the others would wait for this rank); "
                                    "--resume runs it again",
                                    task.id, group.size()),
                        exit_code::error);
    }
  };
  return sweep::execute(task, engines);
}

}  // namespace qsweep::run
