// The writer lock: one holder at a time, a message naming the holder, the lock file gone after a
// clean release, and a holder killed with SIGKILL leaving nothing that blocks the next run. The
// killed holder is a forked child that takes the lock and then waits on a pipe (no timing).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/store/hdf5.hpp"
#include "qsweep/store/writer_lock.hpp"

namespace qsweep::store {
namespace {

namespace fs = std::filesystem;

class WriterLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("qsweep-lock-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    results_ = (dir_ / "out.h5").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string results_;
};

TEST_F(WriterLockTest, ASecondWriterIsRefusedWithTheHolderNamed) {
  std::optional<WriterLock> first;
  first.emplace(results_, "qsweep run first.yaml");
  EXPECT_TRUE(fs::exists(WriterLock::lock_path(results_)));
  try {
    const WriterLock second(results_, "qsweep run second.yaml");
    FAIL() << "a second writer got the lock";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("being written by another run"), std::string::npos) << message;
    EXPECT_NE(message.find("pid " + std::to_string(::getpid())), std::string::npos) << message;
    EXPECT_NE(message.find("qsweep run first.yaml"), std::string::npos) << message;
  }
  EXPECT_NE(WriterLock::holder(results_).find("first.yaml"), std::string::npos);
  first.reset();
  EXPECT_FALSE(fs::exists(WriterLock::lock_path(results_)));  // nothing left to clean up
  EXPECT_EQ(WriterLock::holder(results_), "");
  const WriterLock again(results_, "qsweep run again.yaml");
}

TEST_F(WriterLockTest, AHolderKilledWithSigkillDoesNotBlock) {
  int ready[2];
  int hold[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(hold), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    close(hold[1]);
    try {
      const WriterLock lock(results_, "the child");
      const char byte = 'L';
      if (write(ready[1], &byte, 1) != 1) _exit(2);
      char unused = 0;
      [[maybe_unused]] const ssize_t got = read(hold[0], &unused, 1);  // until killed
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  close(ready[1]);
  close(hold[0]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);  // the child holds the lock now
  EXPECT_THROW(WriterLock(results_, "while the child lives"), InputError);
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(fs::exists(WriterLock::lock_path(results_)));  // left behind, but not locked
  EXPECT_EQ(WriterLock::holder(results_), "");
  const WriterLock after(results_, "after the kill");
  close(ready[0]);
  close(hold[1]);
}

TEST_F(WriterLockTest, AnUnwritableDirectoryIsAnError) {
  EXPECT_THROW(WriterLock((dir_ / "missing" / "out.h5").string(), "x"), StoreError);
}

}  // namespace
}  // namespace qsweep::store
