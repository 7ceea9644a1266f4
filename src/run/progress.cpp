#include "qsweep/run/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <utility>

namespace qsweep::run {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0.0) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  const long long days = total / 86400, hours = total % 86400 / 3600, minutes = total % 3600 / 60,
                  secs = total % 60;
  if (days > 0) return fmt::format("{}d{:02}h", days, hours);
  if (hours > 0) return fmt::format("{}h{:02}m", hours, minutes);
  if (minutes > 0) return fmt::format("{}m{:02}s", minutes, secs);
  return fmt::format("{}s", secs);
}

std::string format_progress(const ProgressCounts& counts, double tasks_per_second,
                            double eta_seconds) {
  const double percent = counts.total > 0 ? 100.0 * static_cast<double>(counts.finished()) /
                                                static_cast<double>(counts.total)
                                          : 100.0;
  std::string text = fmt::format("{}/{} tasks ({:.1f}%)", counts.finished(), counts.total, percent);
  text += fmt::format(", {} failed", counts.failed);
  if (counts.unstable > 0) text += fmt::format(", {} unstable", counts.unstable);
  if (counts.warned > 0) text += fmt::format(", {} with warnings", counts.warned);
  text += fmt::format(", {:.3g} tasks/s, ETA {}", tasks_per_second, format_duration(eta_seconds));
  return text;
}

double running_credit(double cost, double seconds_running, double seconds_per_cost) {
  const double expected = cost * seconds_per_cost;
  if (!(cost > 0.0) || !(expected > 0.0) || !(seconds_running > 0.0)) return 0.0;
  return cost * std::min(kRunningCreditCap, seconds_running / expected);
}

bool progress_in_place(bool stderr_is_terminal, const Environment& env) {
  const char* term = env("TERM");
  const bool can_erase = term != nullptr && *term != '\0' && std::strcmp(term, "dumb") != 0;
  return stderr_is_terminal && can_erase && !started_by_mpi_launcher(env);
}

bool progress_in_place(const Environment& env) {
  return progress_in_place(isatty(STDERR_FILENO) != 0, env);
}

Progress::Progress(std::FILE* out, bool terminal, double interval_seconds, double cost_todo,
                   Clock::time_point start, bool early_lines, std::string label)
    : out_(out),
      terminal_(terminal),
      interval_seconds_(interval_seconds),
      cost_todo_(cost_todo),
      start_(start),
      last_print_(start),
      early_lines_(early_lines && !terminal),
      label_(std::move(label)) {}

bool Progress::due(Clock::time_point now) const {
  const double since_start = std::chrono::duration<double>(now - start_).count();
  if (early_lines_ && early_printed_ < std::size(kEarlyLineSeconds) &&
      since_start >= kEarlyLineSeconds[early_printed_])
    return true;
  return std::chrono::duration<double>(now - last_print_).count() >= interval_seconds_;
}

std::string Progress::line(const ProgressCounts& counts, std::uint64_t finished_this_run,
                           double cost_done, Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0.0 ? static_cast<double>(finished_this_run) / elapsed : 0.0;
  double eta = std::nan("");
  if (counts.finished() == counts.total) {
    eta = 0.0;
  } else if (cost_done > 0.0) {
    eta = elapsed * std::max(cost_todo_ - cost_done, 0.0) / cost_done;
  }
  return "qsweep: " + label_ + format_progress(counts, rate, eta);
}

void Progress::update(const ProgressCounts& counts, std::uint64_t finished_this_run,
                      double cost_done, Clock::time_point now) {
  if (!due(now)) return;
  last_print_ = now;
  // Early lines already due count as printed: one line, not a burst, after a long pause.
  const double since_start = std::chrono::duration<double>(now - start_).count();
  while (early_lines_ && early_printed_ < std::size(kEarlyLineSeconds) &&
         since_start >= kEarlyLineSeconds[early_printed_])
    ++early_printed_;
  const std::string text = line(counts, finished_this_run, cost_done, now);
  if (terminal_) {
    std::fprintf(out_, "\r%s\x1b[K", text.c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s\n", text.c_str());
  }
  std::fflush(out_);
}

void Progress::finish(const ProgressCounts& counts, std::uint64_t finished_this_run,
                      double cost_done, Clock::time_point now) {
  const std::string text = line(counts, finished_this_run, cost_done, now);
  std::fprintf(out_, "%s%s\n", terminal_ ? "\r\x1b[K" : "", text.c_str());
  line_open_ = false;
  std::fflush(out_);
}

void Progress::message(const std::string& text) {
  std::fprintf(out_, "%s%s\n", line_open_ ? "\r\x1b[K" : "", text.c_str());
  line_open_ = false;
  std::fflush(out_);
}

}  // namespace qsweep::run
