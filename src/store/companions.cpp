#include "qsweep/store/companions.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "qsweep/common/printable.hpp"
#include "qsweep/store/activity.hpp"
#include "qsweep/store/writer_lock.hpp"

namespace qsweep::store {
namespace {

namespace fs = std::filesystem;

// As the kernel's limit on links followed in one lookup (ELOOP).
constexpr int kMaxLinks = 40;

// NAME_MAX of `directory`, or of the nearest directory above it that exists (the run creates
// the missing ones).
long name_max(fs::path directory) {
  for (;;) {
    const fs::path here = directory.empty() ? fs::path(".") : directory;
    if (const long most = pathconf(here.c_str(), _PC_NAME_MAX); most > 0) return most;
    if (directory.empty() || directory == directory.parent_path()) return NAME_MAX;
    directory = directory.parent_path();
  }
}

}  // namespace

std::vector<std::string> companion_paths(const std::string& results_path) {
  const std::string combined = results_path + std::string(kCombinedSuffix);
  return {WriterLock::lock_path(results_path),
          activity_path(results_path),
          activity_temporary_path(results_path),
          results_path + std::string(kPartialSuffix),
          combined,
          combined + std::string(kPartialSuffix)};
}

std::string real_results_path(const std::string& path) {
  std::string real = path;
  for (int links = 0;; ++links) {
    struct stat info {};
    if (lstat(real.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return real;
    std::error_code error;
    const fs::path target = fs::read_symlink(real, error);
    if (error || links == kMaxLinks) {
      throw InputError(fmt::format("cannot follow the symbolic link {} to the results file: {}",
                                   printable(real),
                                   error ? error.message() : std::strerror(ELOOP)));
    }
    real = (fs::path(real).parent_path() / target).string();
  }
}

void check_companions(const std::string& results_path) {
  const fs::path path(results_path);
  const std::string name = path.filename().string();
  const std::vector<std::string> companions = companion_paths(results_path);
  std::string longest;  // the longest suffix
  for (const std::string& companion : companions)
    if (companion.size() - results_path.size() > longest.size())
      longest = companion.substr(results_path.size());
  const fs::path directory = path.parent_path();
  if (const long most = name_max(directory);
      name.size() + longest.size() > static_cast<std::size_t>(most)) {
    throw InputError(fmt::format(
        "the results file name {} is {} bytes long, and qsweep makes files beside it whose names "
        "are up to {} bytes longer (OUT{}); names in {} have at most {} bytes, so use a name of "
        "at most {} bytes",
        printable(results_path), name.size(), longest.size(), longest,
        printable(directory.empty() ? "." : directory.string()), most,
        most - static_cast<long>(longest.size())));
  }
  for (const std::string& companion : companions) {
    struct stat info {};
    if (lstat(companion.c_str(), &info) == 0 && S_ISLNK(info.st_mode))
      throw foreign_companion(companion, "a symbolic link");
  }
}

InputError foreign_companion(const std::string& companion, std::string_view what) {
  return InputError(fmt::format(
      "{} is {}, which qsweep did not make: it makes that file itself beside the results file, "
      "and will not write through what another user or program put there; remove it",
      printable(companion), what));
}

}  // namespace qsweep::store
