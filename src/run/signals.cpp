#include "qsweep/run/signals.hpp"

#include <signal.h>

#include <atomic>
#include <mutex>

namespace qsweep::run {
namespace {

// Written only by the handler; lock-free, so safe to touch from it.
std::atomic<int> g_requested{0};
static_assert(std::atomic<int>::is_always_lock_free);

std::mutex g_watches_mutex;
int g_watches = 0;  // SignalWatch objects alive (guarded by the mutex)

constexpr int kWatched[] = {SIGTERM, SIGINT, SIGUSR1};
struct sigaction g_previous[3];

extern "C" void on_stop_signal(int signal) {
  const int now = static_cast<int>(StopMode::now);
  const int drain = static_cast<int>(StopMode::drain);
  if (signal != SIGUSR1 && g_requested.load() == now) {
    // Asked to stop now twice (Ctrl-C, Ctrl-C): end at once, as without a handler. The file
    // stays consistent (see docs/running.md), so --resume still works.
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  if (signal == SIGUSR1 && g_requested.load() < drain) {
    g_requested.store(drain);
  } else {
    g_requested.store(now);
  }
}

}  // namespace

SignalWatch::SignalWatch() {
  const std::lock_guard lock(g_watches_mutex);
  if (g_watches++ > 0) return;
  g_requested.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; ++i) sigaction(kWatched[i], &action, &g_previous[i]);
}

SignalWatch::~SignalWatch() {
  const std::lock_guard lock(g_watches_mutex);
  if (--g_watches > 0) return;
  for (int i = 0; i < 3; ++i) sigaction(kWatched[i], &g_previous[i], nullptr);
}

StopMode SignalWatch::requested() const { return static_cast<StopMode>(g_requested.load()); }

}  // namespace qsweep::run
