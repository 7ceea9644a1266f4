#include "qsweep/store/activity.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
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

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool write_activity(const std::string& results_path, const Activity& activity) {
  const std::string path = activity_path(results_path);
  const std::string temporary = path + ".new";
  {
    std::ofstream out(temporary, std::ios::trunc);
    if (!out) return false;
    out << kHeader << '\n' << fmt::format("written {:.3f}\n", activity.written);
    for (const RankActivity& rank : activity.ranks) {
      out << fmt::format("rank {} heard {:.3f} since {:.3f} tasks {}\n", rank.rank, rank.heard,
                         rank.since, ids_text(rank.tasks));
    }
    if (!out.flush()) return false;
  }
  return std::rename(temporary.c_str(), path.c_str()) == 0;
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

void remove_activity(const std::string& results_path) {
  std::remove(activity_path(results_path).c_str());
}

}  // namespace qsweep::store
