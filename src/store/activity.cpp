#include "qsweep/store/activity.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qsweep::store {
namespace {

// First line of the file; a reader that does not know it reads nothing.
constexpr std::string_view kHeader = "qsweep-activity 1";

// "17,18,19" or "-" for none.
std::string ids_text(const std::vector<std::uint64_t>& ids) {
  if (ids.empty()) return "-";
  std::string text;
  for (const std::uint64_t id : ids) {
    if (!text.empty()) text += ',';
    text += std::to_string(id);
  }
  return text;
}

std::optional<std::vector<std::uint64_t>> parse_ids(const std::string& text) {
  std::vector<std::uint64_t> ids;
  if (text == "-") return ids;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    try {
      std::size_t used = 0;
      ids.push_back(std::stoull(part, &used));
      if (used != part.size()) return std::nullopt;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return ids;
}

}  // namespace

std::string activity_path(const std::string& results_path) { return results_path + ".activity"; }

std::string activity_temporary_path(const std::string& results_path) {
  return activity_path(results_path) + ".new";
}

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string write_activity(const std::string& results_path, const Activity& activity) {
  std::string text =
      std::string(kHeader) + '\n' + fmt::format("written {:.3f}\n", activity.written);
  for (const RankActivity& rank : activity.ranks) {
    text += fmt::format("rank {} heard {:.3f} since {:.3f} tasks {}\n", rank.rank, rank.heard,
                        rank.since, ids_text(rank.tasks));
  }
  const std::string path = activity_path(results_path);
  const std::string temporary = activity_temporary_path(results_path);
  // Only the writer lock's holder writes it, so one found there is a killed run's, or was put
  // there by someone else (a link to another file): it is removed, never written through.
  unlink(temporary.c_str());
  const int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("cannot create {}: {}", temporary, std::strerror(errno));
  std::string_view left = text;
  int error = 0;
  while (!left.empty() && error == 0) {
    const ssize_t wrote = write(fd, left.data(), left.size());
    if (wrote > 0) {
      left.remove_prefix(static_cast<std::size_t>(wrote));
    } else if (errno != EINTR) {
      error = errno;
    }
  }
  if (close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error == 0) return "";
  unlink(temporary.c_str());
  return fmt::format("cannot write {}: {}", temporary, std::strerror(error));
}

std::optional<Activity> read_activity(const std::string& results_path) {
  std::ifstream in(activity_path(results_path));
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader) return std::nullopt;
  Activity activity;
  std::string word;
  if (!std::getline(in, line)) return std::nullopt;
  std::istringstream written(line);
  if (!(written >> word >> activity.written) || word != "written") return std::nullopt;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    RankActivity rank;
    std::string rank_word, heard_word, since_word, tasks_word, ids;
    if (!(fields >> rank_word >> rank.rank >> heard_word >> rank.heard >> since_word >>
          rank.since >> tasks_word >> ids) ||
        rank_word != "rank" || heard_word != "heard" || since_word != "since" ||
        tasks_word != "tasks")
      return std::nullopt;
    std::optional<std::vector<std::uint64_t>> tasks = parse_ids(ids);
    if (!tasks) return std::nullopt;
    rank.tasks = std::move(*tasks);
    activity.ranks.push_back(std::move(rank));
  }
  return activity;
}

std::string remove_activity(const std::string& results_path) {
  const std::string path = activity_path(results_path);
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return "";
  return fmt::format("cannot remove {}: {}", path, std::strerror(errno));
}

}  // namespace qsweep::store
