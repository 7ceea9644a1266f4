// Progress lines: formatting, plain lines at an interval, in-place redraw on a terminal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "qsweep/run/progress.hpp"

namespace qsweep::run {
namespace {

using namespace std::chrono_literals;

// Captures what a Progress writes.
class Capture {
 public:
  Capture() : file_(open_memstream(&buffer_, &size_)) {}
  ~Capture() {
    std::fclose(file_);
    std::free(buffer_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buffer_, size_);
  }

 private:
  char* buffer_ = nullptr;
  std::size_t size_ = 0;
  std::FILE* file_;
};

TEST(FormatDuration, PicksTwoUnits) {
  EXPECT_EQ(format_duration(0.4), "0s");
  EXPECT_EQ(format_duration(59.4), "59s");
  EXPECT_EQ(format_duration(187), "3m07s");
  EXPECT_EQ(format_duration(2 * 3600 + 5 * 60 + 10), "2h05m");
  EXPECT_EQ(format_duration(3 * 86400 + 7200), "3d02h");
  EXPECT_EQ(format_duration(std::nan("")), "?");
  EXPECT_EQ(format_duration(-1), "?");
}

TEST(FormatProgress, CountsRateAndEta) {
  ProgressCounts counts{5000, 1200, 3, 31};
  EXPECT_EQ(format_progress(counts, 812.34, 278),
            "1234/5000 tasks (24.7%), 3 failed, 31 unstable, 812 tasks/s, ETA 4m38s");
  counts.unstable = 0;
  EXPECT_EQ(format_progress(counts, 0.5, std::nan("")),
            "1203/5000 tasks (24.1%), 3 failed, 0.5 tasks/s, ETA ?");
  counts.warned = 7;
  EXPECT_EQ(format_progress(counts, 0.5, std::nan("")),
            "1203/5000 tasks (24.1%), 3 failed, 7 with warnings, 0.5 tasks/s, ETA ?");
}

TEST(Progress, PlainLinesOnlyAfterTheInterval) {
  Capture out;
  const auto start = Progress::Clock::now();
  Progress progress(out.file(), false, 60.0, 100.0, start);
  ProgressCounts counts{10, 2, 0, 0};
  progress.update(counts, 2, 20.0, start + 30s);
  EXPECT_EQ(out.text(), "");
  // 4 done of 10 in 60 s; cost 40 of 100 done in 60 s: 60 more cost takes 90 s.
  counts.done = 4;
  progress.update(counts, 4, 40.0, start + 60s);
  EXPECT_EQ(out.text(), "qsweep: 4/10 tasks (40.0%), 0 failed, 0.0667 tasks/s, ETA 1m30s\n");
  progress.update(counts, 4, 40.0, start + 61s);  // too soon after the last line
  counts.done = 10;
  progress.finish(counts, 10, 100.0, start + 62s);
  EXPECT_EQ(out.text(),
            "qsweep: 4/10 tasks (40.0%), 0 failed, 0.0667 tasks/s, ETA 1m30s\n"
            "qsweep: 10/10 tasks (100.0%), 0 failed, 0.161 tasks/s, ETA 0s\n");
}

// A refinement round's run names its round in every line (RunOptions::round).
TEST(Progress, LinesOfARefinementRoundNameIt) {
  Capture out;
  const auto start = Progress::Clock::now();
  Progress progress(out.file(), false, 60.0, 100.0, start, false, "round 2: ");
  ProgressCounts counts{10, 4, 0, 0};
  progress.update(counts, 4, 40.0, start + 60s);
  progress.message("qsweep: a message keeps its own text");
  counts.done = 10;
  progress.finish(counts, 10, 100.0, start + 62s);
  EXPECT_EQ(out.text(),
            "qsweep: round 2: 4/10 tasks (40.0%), 0 failed, 0.0667 tasks/s, ETA 1m30s\n"
            "qsweep: a message keeps its own text\n"
            "qsweep: round 2: 10/10 tasks (100.0%), 0 failed, 0.161 tasks/s, ETA 0s\n");
}

TEST(RunningCredit, FractionOfTheExpectedTimeUpToTheCap) {
  EXPECT_DOUBLE_EQ(running_credit(50.0, 10.0, 1.0), 10.0);   // 10 s of an expected 50 s
  EXPECT_DOUBLE_EQ(running_credit(50.0, 25.0, 2.0), 12.5);   // 25 of 100 s
  EXPECT_DOUBLE_EQ(running_credit(50.0, 500.0, 1.0), 45.0);  // overdue: the cap
  EXPECT_EQ(running_credit(0.0, 10.0, 1.0), 0.0);
  EXPECT_EQ(running_credit(50.0, -1.0, 1.0), 0.0);  // clocks: never negative
}

// The case: one big task runs after the small ones. Without credit the ETA grows with
// the elapsed time until the task ends (34 s -> 57 s -> 31 s was seen); with it, it falls.
TEST(RunningCredit, KeepsTheEtaFallingDuringABigTask) {
  // Cost 100 to do: 50 done in the first 50 s (1 s per unit), then one task of cost 50.
  const double cost_todo = 100.0, done = 50.0, spc = 1.0;
  auto eta = [&](double elapsed, double credit) {
    const double counted = done + credit;
    return elapsed * (cost_todo - counted) / counted;
  };
  double previous = eta(50.0, 0.0);  // 50 s: the truth when the big task starts
  EXPECT_DOUBLE_EQ(previous, 50.0);
  for (double running = 5.0; running <= 40.0; running += 5.0) {
    const double now = eta(50.0 + running, running_credit(50.0, running, spc));
    EXPECT_LT(now, previous) << "after " << running << " s of the big task";
    EXPECT_NEAR(now, 50.0 - running, 1e-9);     // exactly the time left when it is on estimate
    EXPECT_GT(eta(50.0 + running, 0.0), 50.0);  // what the ETA without credit says
    previous = now;
  }
}

TEST(Progress, TerminalRedrawsOneLine) {
  Capture out;
  const auto start = Progress::Clock::now();
  Progress progress(out.file(), true, 0.5, 10.0, start);
  ProgressCounts counts{10, 5, 0, 0};
  progress.update(counts, 5, 5.0, start + 1s);
  progress.message("qsweep: task 3 failed: boom");
  counts.done = 10;
  progress.finish(counts, 10, 10.0, start + 2s);
  EXPECT_EQ(out.text(),
            "\rqsweep: 5/10 tasks (50.0%), 0 failed, 5 tasks/s, ETA 1s\x1b[K"
            "\r\x1b[Kqsweep: task 3 failed: boom\n"
            "\r\x1b[Kqsweep: 10/10 tasks (100.0%), 0 failed, 5 tasks/s, ETA 0s\n");
}

// The default interval also prints at 2, 5, 10 and 20 s, then every interval after the last
// line; an update late past several early times prints one line, not one per time passed.
TEST(Progress, EarlyLinesThenTheInterval) {
  Capture out;
  const auto start = Progress::Clock::now();
  Progress progress(out.file(), false, 30.0, 100.0, start, true);
  const ProgressCounts counts{10, 1, 0, 0};
  int lines = 0;
  auto printed_at = [&](std::chrono::milliseconds t) {
    progress.update(counts, 1, 10.0, start + t);
    const std::string text = out.text();
    const int now = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    const bool printed = now > lines;
    lines = now;
    return printed;
  };
  EXPECT_FALSE(printed_at(1900ms));
  EXPECT_TRUE(printed_at(2000ms));
  EXPECT_FALSE(printed_at(4000ms));
  EXPECT_TRUE(printed_at(5000ms));
  EXPECT_TRUE(printed_at(25000ms));  // past 10 and 20 s: one line
  EXPECT_FALSE(printed_at(30000ms));
  EXPECT_FALSE(printed_at(54000ms));
  EXPECT_TRUE(printed_at(55000ms));  // 30 s after the last line
  EXPECT_FALSE(printed_at(60000ms));
}

// TERM=dumb (Emacs shells, some CI consoles) cannot erase a line: plain lines instead of a redraw.
TEST(ProgressInPlace, NeedsATerminalThatCanEraseAndNoLauncher) {
  auto env = [](const char* term, bool launcher) {
    return [term, launcher](const char* name) -> const char* {
      if (std::string(name) == "TERM") return term;
      if (launcher && std::string(name) == "OMPI_COMM_WORLD_SIZE") return "2";
      return nullptr;
    };
  };
  EXPECT_TRUE(progress_in_place(true, env("xterm-256color", false)));
  EXPECT_FALSE(progress_in_place(true, env("dumb", false)));
  EXPECT_FALSE(progress_in_place(true, env(nullptr, false)));
  EXPECT_FALSE(progress_in_place(true, env("", false)));
  EXPECT_FALSE(progress_in_place(true, env("xterm", true)));
  EXPECT_FALSE(progress_in_place(false, env("xterm", false)));
}

}  // namespace
}  // namespace qsweep::run
