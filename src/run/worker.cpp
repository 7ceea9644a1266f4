#include "worker.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <vector>

#include "protocol.hpp"
#include "qsweep/run/memory.hpp"
#include "qsweep/run/test_hold.hpp"

namespace qsweep::run {
namespace {

// MPI_Comm_create_group tells concurrent creations apart by tag (at least this many exist).
constexpr std::uint64_t kGroupTags = 32768;

// This rank's part of a task that spans ranks, on the main thread (the members call MPI
// together; rank 0 sends it only to ranks with nothing else to run). Collective over the members:
// all of them run it or, when one of them is stopping, none does (the task stays pending).
// `stop_now` keeps the rank answering while the task runs and abandons it (pending) once it
// returns true on any member.
Report run_span(const Comm& comm, const SpanOrder& order, bool stopping, const SpanContext& with,
                const exact_mpi::StopCheck& stop_now) {
  const Comm group = comm.create_group(order.members, static_cast<int>(order.seq % kGroupTags));
  const bool leads = comm.rank() == order.members.front();
  Report report = empty_report(order.seq, leads ? 1 : 0);
  if (group.any(stopping)) return report;
  const sweep::Task& task = with.plan.tasks.at(order.id);
  if (leads) {
    const std::uint64_t id = order.id;
    const std::int32_t attempts = order.attempts;
    with.file.write_attempts({&id, 1}, {&attempts, 1});
    TestHold::from_environment().wait_for_release(order.id);
  }
  bool stopped = false;
  const auto run = [&](const sweep::Task& t) {
    try {
      return with.run_spanning(t, group, stop_now);
    } catch (const exact_mpi::Stopped&) {
      stopped = true;
      throw;
    }
  };
  std::vector<FinishedTask> finished{{order.id, run_guarded(run, task), comm.rank()}};
  if (stopped) return report;  // not run: the task stays pending
  if (leads) {
    write_finished(with.file, with.plan, finished);
    tally(report, finished.front());
  }
  finished.clear();
  if (with.plan.tasks.estimate(order.id).memory >= kReleaseAfterBytes) release_free_memory();
  report.resident_bytes = resident_bytes();
  return report;
}

}  // namespace

void work(const Comm& comm, Workbench& bench, const SignalWatch& signals,
          const SpanContext& spans) {
  Outbox outbox(comm);
  StopMode mode = StopMode::none;
  auto stop = [&](StopMode requested) {
    if (requested <= mode) return;
    mode = requested;
    for (const Report& report : bench.stop(mode)) outbox.send(0, kReport, report);
  };
  auto last_heartbeat = std::chrono::steady_clock::now();
  auto heartbeat = [&] {
    if (const auto now = std::chrono::steady_clock::now();
        now - last_heartbeat >= std::chrono::duration<double>(kHeartbeatSeconds)) {
      outbox.send(0, kHeartbeat, 0);
      last_heartbeat = now;
    }
  };
  auto watch_signals = [&] {
    if (signals.requested() > mode) {
      stop(signals.requested());
      outbox.send(0, kStopRequest, static_cast<int>(mode));
    }
  };
  // While a task that spans ranks runs (rank 0 sends such a rank nothing but kStop meanwhile).
  const exact_mpi::StopCheck stop_now = [&] {
    heartbeat();
    while (const std::optional<Envelope> envelope = comm.iprobe(0, kStop))
      stop(static_cast<StopMode>(comm.recv<int>(*envelope)));
    watch_signals();
    outbox.poll();
    return mode == StopMode::now;
  };
  Pause pause;
  for (bool finished = false; !finished;) {
    bool event = false;
    heartbeat();
    while (const std::optional<Envelope> envelope = comm.iprobe(0)) {
      event = true;
      switch (envelope->tag) {
        case kWork: {
          WorkOrder order = comm.recv<WorkOrder>(*envelope);
          if (mode == StopMode::none) {
            bench.add(std::move(order));
          } else {
            outbox.send(0, kReport, not_run(order));
          }
          break;
        }
        case kSpan: {
          const auto order = comm.recv<SpanOrder>(*envelope);
          if (!bench.idle()) throw std::logic_error("a task that spans ranks sent to a busy rank");
          outbox.send(0, kReport, run_span(comm, order, mode != StopMode::none, spans, stop_now));
          break;
        }
        case kStop:
          stop(static_cast<StopMode>(comm.recv<int>(*envelope)));
          break;
        case kFinish:
          comm.recv<int>(*envelope);
          outbox.send(0, kFinished, 0);
          finished = true;
          break;
        default:
          throw std::logic_error("unexpected message tag " + std::to_string(envelope->tag) +
                                 " from rank 0");
      }
    }
    watch_signals();
    if (std::optional<Report> report = bench.poll()) {
      outbox.send(0, kReport, *report);
      event = true;
    }
    outbox.poll();
    if (!finished) bench.wait(pause.next(event));
  }
  if (!bench.idle()) throw std::logic_error("rank 0 finished the run while this rank had work");
  outbox.wait_all();
}

}  // namespace qsweep::run
