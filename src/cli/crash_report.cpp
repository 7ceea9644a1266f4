#include "crash_report.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

namespace qsweep::cli {
namespace {

// Composed when the report is installed: a signal handler must not allocate.
char prefix[320];
std::size_t prefix_length = 0;
// Its own stack, so that a stack overflow is reported too.
alignas(16) char handler_stack[64 * 1024];

void write_all(const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t written = write(STDERR_FILENO, text, length);
    if (written <= 0) return;
    text += written;
    length -= static_cast<std::size_t>(written);
  }
}

void write_text(const char* text) { write_all(text, std::strlen(text)); }

const char* signal_text(int signal_number) {
  switch (signal_number) {
    case SIGSEGV:
      return "SIGSEGV (invalid memory access)";
    case SIGBUS:
      return "SIGBUS (bus error)";
    case SIGFPE:
      return "SIGFPE (arithmetic error)";
    case SIGILL:
      return "SIGILL (illegal instruction: a binary built for another CPU?)";
    case SIGABRT:
      return "SIGABRT (aborted)";
    default:
      return "a fatal signal";
  }
}

// SA_RESETHAND has restored the default action: raising the signal again ends the process the
// way it would have ended without this report.
void report(int signal_number) {
  write_all(prefix, prefix_length);
  write_text(signal_text(signal_number));
  write_text("; backtrace (addresses resolve with addr2line -e qsweep):\n");
  void* frames[64];
  const int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::raise(signal_number);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif

}  // namespace

void install_crash_report() {
  if (kAddressSanitizer) return;  // its own reports are better
  const char* rank = nullptr;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    rank = std::getenv(name);
    if (rank != nullptr) break;
  }
  char host[256] = "?";
  gethostname(host, sizeof host - 1);
  const int length = std::snprintf(
      prefix, sizeof prefix, "qsweep: died (pid %ld on %s%s%s): ", static_cast<long>(getpid()),
      host, rank != nullptr ? ", MPI rank " : "", rank != nullptr ? rank : "");
  prefix_length = length > 0 ? std::strlen(prefix) : 0;
  // backtrace() loads libgcc on its first call, which allocates: that happens here, not later.
  void* frame = nullptr;
  backtrace(&frame, 1);
  stack_t stack{};
  stack.ss_sp = handler_stack;
  stack.ss_size = sizeof handler_stack;
  sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = report;
  sigemptyset(&action.sa_mask);
  action.sa_flags = static_cast<int>(SA_RESETHAND | SA_ONSTACK);
  for (const int signal_number : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    sigaction(signal_number, &action, nullptr);
}

}  // namespace qsweep::cli
