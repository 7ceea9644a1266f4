#include "qsweep/store/writer_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "qsweep/store/companions.hpp"
#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/results_file.hpp"

namespace qsweep::store {
namespace {

constexpr std::size_t kMaxHolderText = 4096;

// The byte of a results file that its writer locks: beyond any data, so that the lock conflicts
// with nothing else that locks the file (HDF5's flock, MPI-IO's locks on the ranges it writes).
constexpr off_t kIdentityByte = off_t{1} << 62;

// Exclusive lock on `length` bytes from `start` (0: to the end), or -1 with errno (EAGAIN/EACCES:
// someone holds it).
int try_lock(int fd, off_t start, off_t length) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = length;
  return fcntl(fd, F_OFD_SETLK, &lock);
}

bool held_by_other(int fd, off_t start, off_t length) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = start;
  lock.l_len = length;
  return fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
}

bool someone_holds(int error) { return error == EAGAIN || error == EACCES; }

StoreError lock_failed(const std::string& path, int error) {
  return StoreError("cannot lock " + path + " (fcntl F_OFD_SETLK: " + std::strerror(error) +
                    "); the file system must support POSIX locks (docs/running.md)");
}

InputError being_written(const std::string& results_path, const std::string& holder) {
  return InputError(fmt::format(
      "{} is being written by another run ({}); wait for it to end, or stop it (a killed run's "
      "lock is released by itself)",
      results_path, holder));
}

// What a second run is told when the results file is held but its lock file is not: the holder
// reached the file under another name, whose lock file holds who it is.
constexpr const char* kHeldUnderAnotherName =
    "under another name of the same file, a hard link: its lock file beside that name says who";

std::string read_text(int fd) {
  std::array<char, kMaxHolderText> buffer{};
  const ssize_t got = pread(fd, buffer.data(), buffer.size() - 1, 0);
  if (got <= 0) return "";
  std::string text(buffer.data(), static_cast<std::size_t>(got));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

// Replaces the file's text by `text`: 0, or the errno of what failed.
int write_text(int fd, std::string_view text) {
  if (ftruncate(fd, 0) != 0) return errno;
  for (off_t at = 0; !text.empty();) {
    const ssize_t wrote = pwrite(fd, text.data(), text.size(), at);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    text.remove_prefix(static_cast<std::size_t>(wrote));
    at += wrote;
  }
  return 0;
}

// Whether `fd` is still the file at `path` (another run may have removed and remade it between
// our open and our lock: then our lock guards nothing).
bool is_current(int fd, const std::string& path) {
  struct stat by_fd {
  }, by_path{};
  return fstat(fd, &by_fd) == 0 && stat(path.c_str(), &by_path) == 0 &&
         by_fd.st_dev == by_path.st_dev && by_fd.st_ino == by_path.st_ino;
}

// The lock file of `path`, opened (and made if need be) without following a link.
int open_lock_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    const int error = errno;
    if (error == ELOOP) throw foreign_companion(path, "a symbolic link");
    throw StoreError("cannot open the lock file " + path + ": " + std::strerror(error));
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    close(fd);
    throw foreign_companion(path, "not a regular file");
  }
  return fd;
}

}  // namespace

WriterLock::WriterLock(const std::string& results_path, const std::string& command_line)
    : results_path_(results_path), path_(lock_path(results_path)) {
  for (;;) {
    const int fd = open_lock_file(path_);
    if (try_lock(fd, 0, 0) != 0) {
      const int error = errno;
      if (someone_holds(error)) {
        std::string holder = read_text(fd);
        close(fd);
        if (holder.empty()) holder = "a run that is starting";
        throw being_written(results_path, holder);
      }
      close(fd);
      throw lock_failed(path_, error);
    }
    if (!is_current(fd, path_)) {  // the holder removed it as we locked: take the new one
      close(fd);
      continue;
    }
    fd_ = fd;
    break;
  }
  try {
    hold(results_path);
  } catch (...) {
    unlink(path_.c_str());
    close(fd_);
    throw;
  }
  const Provenance now = Provenance::now(command_line, 1);
  const std::string text = "host " + now.hostname + ", pid " + std::to_string(getpid()) +
                           ", started " + now.created + ", command: " + command_line;
  const std::string cut = text.substr(0, kMaxHolderText - 2) + "\n";
  // The holder text is for messages only: failing to write it does not weaken the lock.
  if (const int error = write_text(fd_, cut); error != 0) {
    std::fprintf(stderr,
                 "qsweep: warning: cannot write who holds the lock into %s: %s; a second run on "
                 "it will not be told who\n",
                 path_.c_str(), std::strerror(error));
  }
}

void WriterLock::hold(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    // A file this process cannot open for writing, it cannot write in place either (a --force
    // run replaces it by a rename): nothing to hold. A missing one is made later, and held then.
    const int error = errno;
    if (error == ENOENT || error == EACCES || error == EPERM || error == EROFS || error == EISDIR ||
        error == ELOOP)
      return;
    throw StoreError("cannot open " + path + " to lock it: " + std::strerror(error));
  }
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {  // refused later, as not a results file
    close(fd);
    return;
  }
  if (try_lock(fd, kIdentityByte, 1) != 0) {
    const int error = errno;
    close(fd);
    if (someone_holds(error)) throw being_written(results_path_, kHeldUnderAnotherName);
    throw lock_failed(path, error);
  }
  held_.push_back(fd);
}

WriterLock::~WriterLock() {
  if (fd_ < 0) return;
  // While still locked: a waiting run then finds a fresh file.
  if (unlink(path_.c_str()) != 0 && errno != ENOENT) {
    std::fprintf(stderr, "qsweep: warning: cannot remove %s: %s; remove it by hand\n",
                 path_.c_str(), std::strerror(errno));
  }
  close(fd_);
  for (const int fd : held_) close(fd);
}

std::string WriterLock::holder(const std::string& results_path) {
  const std::string real = real_results_path(results_path);
  const std::string path = lock_path(real);
  std::string text;
  if (const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK); fd >= 0) {
    if (held_by_other(fd, 0, 0)) {
      text = read_text(fd);
      if (text.empty()) text = "a run that is starting";
    }
    close(fd);
  }
  if (!text.empty()) return text;
  if (const int fd = open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK); fd >= 0) {
    if (held_by_other(fd, kIdentityByte, 1)) text = kHeldUnderAnotherName;
    close(fd);
  }
  return text;
}

}  // namespace qsweep::store
