#include "qsweep/store/writer_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/results_file.hpp"

namespace qsweep::store {
namespace {

constexpr std::size_t kMaxHolderText = 4096;

// Exclusive lock on the whole file, or -1 with errno (EAGAIN/EACCES: someone holds it).
int try_lock(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // the whole file
  return fcntl(fd, F_OFD_SETLK, &lock);
}

bool held_by_other(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  return fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
}

std::string read_text(int fd) {
  std::array<char, kMaxHolderText> buffer{};
  const ssize_t got = pread(fd, buffer.data(), buffer.size() - 1, 0);
  if (got <= 0) return "";
  std::string text(buffer.data(), static_cast<std::size_t>(got));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

// Whether `fd` is still the file at `path` (another run may have removed and remade it between
// our open and our lock: then our lock guards nothing).
bool is_current(int fd, const std::string& path) {
  struct stat by_fd {
  }, by_path{};
  return fstat(fd, &by_fd) == 0 && stat(path.c_str(), &by_path) == 0 &&
         by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

}  // namespace

WriterLock::WriterLock(const std::string& results_path, const std::string& command_line)
    : path_(lock_path(results_path)) {
  for (;;) {
    const int fd = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
      throw StoreError("cannot open the lock file " + path_ + ": " + std::strerror(errno));
    }
    if (try_lock(fd) != 0) {
      const int error = errno;
      if (error == EAGAIN || error == EACCES) {
        std::string holder = read_text(fd);
        close(fd);
        if (holder.empty()) holder = "a run that is starting";
        throw InputError(fmt::format(
            "{} is being written by another run ({}); wait for it to end, or stop it (a killed "
            "run's lock is released by itself)",
            results_path, holder));
      }
      close(fd);
      throw StoreError("cannot lock " + path_ + " (fcntl F_OFD_SETLK: " + std::strerror(error) +
                       "); the file system must support POSIX locks (docs/running.md)");
    }
    if (!is_current(fd, path_)) {  // the holder removed it as we locked: take the new one
      close(fd);
      continue;
    }
    fd_ = fd;
    break;
  }
  const Provenance now = Provenance::now(command_line, 1);
  const std::string text = "host " + now.hostname + ", pid " + std::to_string(getpid()) +
                           ", started " + now.created + ", command: " + command_line;
  const std::string cut = text.substr(0, kMaxHolderText - 2) + "\n";
  // The holder text is for messages only: failing to write it does not weaken the lock.
  if (ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t written = pwrite(fd_, cut.data(), cut.size(), 0);
  }
}

WriterLock::~WriterLock() {
  if (fd_ < 0) return;
  unlink(path_.c_str());  // while still locked: a waiting run then finds a fresh file
  close(fd_);
}

std::string WriterLock::holder(const std::string& results_path) {
  const std::string path = lock_path(results_path);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  std::string text;
  if (held_by_other(fd)) {
    text = read_text(fd);
    if (text.empty()) text = "a run that is starting";
  }
  close(fd);
  return text;
}

}  // namespace qsweep::store
