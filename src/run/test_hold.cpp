#include "qsweep/run/test_hold.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "qsweep/common/error.hpp"

namespace qsweep::run {
namespace {

constexpr const char* kVariable = "QSWEEP_TEST_HOLD";

Error malformed(const std::string& text, const std::string& why) {
  return Error(std::string(kVariable) + "=" + text + ": " + why +
               "; expected DIR:ID[,ID...] (a directory with the named pipes started and "
               "release, and task ids)");
}

Error pipe_error(const std::string& what, const std::string& path) {
  return Error(std::string(kVariable) + ": cannot " + what + " " + path + ": " +
               std::strerror(errno));
}

// open(2), retried when a signal interrupts it (the compute thread blocks the stop signals, but
// other signals may still reach it).
int open_retrying(const std::string& path, int flags) {
  int fd = -1;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

}  // namespace

TestHold TestHold::parse(const std::string& text) {
  TestHold hold;
  if (text.empty()) return hold;
  const std::size_t colon = text.rfind(':');
  if (colon == std::string::npos) throw malformed(text, "no ':' after the directory");
  hold.directory_ = text.substr(0, colon);
  if (hold.directory_.empty()) throw malformed(text, "no directory");
  const std::string list = text.substr(colon + 1);
  std::size_t begin = 0;
  for (;;) {
    const std::size_t end = std::min(list.find(',', begin), list.size());
    const std::string item = list.substr(begin, end - begin);
    std::uint64_t id = 0;
    const auto [rest, error] = std::from_chars(item.data(), item.data() + item.size(), id);
    if (item.empty() || error != std::errc() || rest != item.data() + item.size()) {
      throw malformed(text, "'" + item + "' is not a task id");
    }
    hold.ids_.insert(id);
    if (end == list.size()) break;
    begin = end + 1;
  }
  return hold;
}

const TestHold& TestHold::from_environment() {
  static const TestHold hold = [] {
    const char* text = std::getenv(kVariable);
    return parse(text == nullptr ? "" : text);
  }();
  return hold;
}

void TestHold::wait_for_release(std::uint64_t task_id) const {
  if (!holds(task_id)) return;
  const std::string started = directory_ + "/started";
  const int out = open_retrying(started, O_WRONLY);
  if (out < 0) throw pipe_error("open", started);
  const std::string line = std::to_string(task_id) + "\n";
  // Shorter than PIPE_BUF: one write, never interleaved with another thread's line.
  ssize_t written = -1;
  do {
    written = ::write(out, line.data(), line.size());
  } while (written < 0 && errno == EINTR);
  const bool wrote = written == static_cast<ssize_t>(line.size());
  if (!wrote) {
    const int saved = errno;
    ::close(out);
    errno = saved;
    throw pipe_error("write to", started);
  }
  ::close(out);

  const std::string release = directory_ + "/release";
  const int in = open_retrying(release, O_RDONLY);
  if (in < 0) throw pipe_error("open", release);
  char buffer[64];
  for (;;) {
    const ssize_t got = ::read(in, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0 && errno != EINTR) {
      const int saved = errno;
      ::close(in);
      errno = saved;
      throw pipe_error("read", release);
    }
  }
  ::close(in);
}

}  // namespace qsweep::run
