// QSWEEP_TEST_HOLD: parsing, and a held task that waits for this test's thread to release it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/run/engine.hpp"
#include "qsweep/run/test_hold.hpp"

namespace qsweep::run {
namespace {

namespace fs = std::filesystem;

TEST(TestHold, ParsesADirectoryAndTaskIds) {
  EXPECT_FALSE(TestHold::parse("").active());
  const TestHold one = TestHold::parse("/tmp/hold:7");
  EXPECT_TRUE(one.active());
  EXPECT_EQ(one.directory(), "/tmp/hold");
  EXPECT_EQ(one.ids(), (std::set<std::uint64_t>{7}));
  EXPECT_TRUE(one.holds(7));
  EXPECT_FALSE(one.holds(8));
  // The last ':' ends the directory, which may hold one itself.
  const TestHold several = TestHold::parse("/tmp/a:b/hold:3,10,3,18446744073709551615");
  EXPECT_EQ(several.directory(), "/tmp/a:b/hold");
  EXPECT_EQ(several.ids(), (std::set<std::uint64_t>{3, 10, 18446744073709551615u}));
}

TEST(TestHold, RefusesMalformedValuesNamingTheVariable) {
  for (const char* text :
       {"/tmp/hold", ":3", "/tmp/hold:", "/tmp/hold:1,,2", "/tmp/hold:1,", "/tmp/hold:x",
        "/tmp/hold:-1", "/tmp/hold:1 ", "/tmp/hold:2.5", "/tmp/hold:18446744073709551616"}) {
    try {
      TestHold::parse(text);
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("QSWEEP_TEST_HOLD=") + text + ": "),
                std::string::npos)
          << e.what();
    }
  }
}

class HeldEngine : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qsweep-test-hold-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(mkfifo((dir_ / "started").c_str(), 0600), 0);
    ASSERT_EQ(mkfifo((dir_ / "release").c_str(), 0600), 0);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Waits (at most a minute, for a broken hold) until a held task announced itself; returns
  // the line it wrote. Opened read-write, so the open itself never waits.
  std::string read_started() const {
    const int fd = ::open((dir_ / "started").c_str(), O_RDWR | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    std::string line;
    pollfd ready{fd, POLLIN, 0};
    char c = 0;
    while (::poll(&ready, 1, 60'000) == 1 && ::read(fd, &c, 1) == 1 && c != '\n') line += c;
    ::close(fd);
    return line;
  }
  // Lets the waiting task go (blocks until it has the pipe open).
  void release() const { std::ofstream(dir_ / "release").close(); }

  TestHold hold(const std::string& ids) const { return TestHold::parse(dir_.string() + ":" + ids); }

  // A task function that records which tasks ran, in order. Shared: an abandoned task may
  // outlive the test's locals.
  struct Log {
    std::mutex mutex;
    std::vector<std::uint64_t> ran;
    std::vector<std::uint64_t> snapshot() {
      std::lock_guard lock(mutex);
      return ran;
    }
  };
  static TaskFunction recording(const std::shared_ptr<Log>& log) {
    return [log](const sweep::Task& task) {
      std::lock_guard lock(log->mutex);
      log->ran.push_back(task.id);
      return sweep::TaskOutcome{TaskStatus::done, "", {}, 0.0, {}};
    };
  }
  static std::vector<sweep::Task> tasks(std::initializer_list<std::uint64_t> ids) {
    std::vector<sweep::Task> batch;
    for (const std::uint64_t id : ids) batch.emplace_back().id = id;
    return batch;
  }

  fs::path dir_;
};

TEST_F(HeldEngine, AHeldTaskRunsOnlyOnceReleased) {
  auto log = std::make_shared<Log>();
  Engine engine(recording(log), 0, hold("11"));
  engine.start(tasks({10, 11, 12}));
  EXPECT_EQ(read_started(), "11");
  // Task 11 announced itself and now waits: 10 ran before it, 11 and 12 have not.
  EXPECT_EQ(log->snapshot(), (std::vector<std::uint64_t>{10}));
  EXPECT_FALSE(engine.wait(std::chrono::microseconds(0)));
  release();
  while (!engine.wait(std::chrono::microseconds(100'000))) {
  }
  const auto finished = engine.take();
  ASSERT_EQ(finished.size(), 3u);
  for (const auto& task : finished) EXPECT_EQ(task.outcome.status, TaskStatus::done);
  EXPECT_EQ(log->snapshot(), (std::vector<std::uint64_t>{10, 11, 12}));
}

TEST_F(HeldEngine, AnAbandonedHeldTaskStaysBlocked) {
  auto log = std::make_shared<Log>();
  Engine engine(recording(log), 0, hold("11"));
  engine.start(tasks({10, 11, 12}));
  EXPECT_EQ(read_started(), "11");
  const auto finished = engine.abandon();  // returns although task 11 is still held
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].id, 10u);
  EXPECT_TRUE(engine.left_task_running());
  // Released after the abandon, task 11 runs and its outcome is dropped; 12 never runs.
  release();
}

TEST_F(HeldEngine, AMissingPipeFailsTheTaskWithAMessage) {
  auto log = std::make_shared<Log>();
  fs::remove(dir_ / "started");
  fs::create_directory(dir_ / "started");  // a directory cannot be opened for writing
  Engine engine(recording(log), 3, hold("5"));
  engine.start(tasks({5, 6}));
  while (!engine.wait(std::chrono::microseconds(100'000))) {
  }
  const auto finished = engine.take();
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[0].outcome.status, TaskStatus::failed);
  EXPECT_NE(finished[0].outcome.error.find("QSWEEP_TEST_HOLD: cannot open " +
                                           (dir_ / "started").string()),
            std::string::npos)
      << finished[0].outcome.error;
  EXPECT_EQ(finished[1].outcome.status, TaskStatus::done);
  EXPECT_EQ(log->snapshot(), (std::vector<std::uint64_t>{6}));
}

}  // namespace
}  // namespace qsweep::run
