// The writer lock: one holder at a time under any name of the file (a symbolic link, a hard
// link), a message naming the holder, the lock file gone after a clean release, and a holder
// killed with SIGKILL leaving nothing that blocks the next run. The killed holder is a forked
// child that takes the lock and then waits on a pipe (no timing). The files beside the results
// file: names that do not fit the directory and links planted at their names are refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/store/activity.hpp"
#include "qsweep/store/companions.hpp"
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

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

// The message of the InputError that `make` throws ("" if it throws none).
template <class Make>
std::string refusal(Make make) {
  try {
    make();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

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

TEST_F(WriterLockTest, ASymbolicLinkToTheResultsFileTakesTheLockOfTheRealFile) {
  write_text(results_, "results");
  const fs::path link = dir_ / "link.h5";
  fs::create_symlink("out.h5", link);
  EXPECT_EQ(real_results_path(link.string()), results_);
  const WriterLock first(results_, "qsweep run first.yaml");
  const std::string message =
      refusal([&] { WriterLock(real_results_path(link.string()), "qsweep run second.yaml"); });
  EXPECT_NE(message.find("pid " + std::to_string(::getpid())), std::string::npos) << message;
  EXPECT_NE(WriterLock::holder(link.string()).find("first.yaml"), std::string::npos);
}

TEST_F(WriterLockTest, AHardLinkToAHeldResultsFileIsRefused) {
  write_text(results_, "results");
  const fs::path other = dir_ / "other.h5";
  fs::create_hard_link(results_, other);
  std::optional<WriterLock> first;
  first.emplace(results_, "qsweep run first.yaml");
  const std::string message = refusal([&] { WriterLock(other.string(), "second"); });
  EXPECT_NE(message.find("other.h5 is being written by another run"), std::string::npos) << message;
  EXPECT_NE(message.find("hard link"), std::string::npos) << message;
  EXPECT_NE(WriterLock::holder(other.string()).find("hard link"), std::string::npos);
  EXPECT_FALSE(fs::exists(WriterLock::lock_path(other.string())));  // the refused one's is gone
  first.reset();
  EXPECT_EQ(WriterLock::holder(other.string()), "");
  const WriterLock again(other.string(), "again");
}

TEST_F(WriterLockTest, AFileHeldBeforeItsRenameIsHeldUnderItsName) {
  const std::string partial = results_ + ".partial";
  write_text(partial, "results");
  WriterLock lock(results_, "qsweep run first.yaml");
  lock.hold(partial);
  fs::rename(partial, results_);
  const fs::path other = dir_ / "other.h5";
  fs::create_hard_link(results_, other);
  EXPECT_NE(refusal([&] { WriterLock(other.string(), "second"); }), "");
}

TEST_F(WriterLockTest, ALinkPlantedAtTheLockFileIsRefusedAndNotFollowed) {
  const fs::path target = dir_ / "target";
  write_text(target, "precious");
  fs::create_symlink(target, WriterLock::lock_path(results_));
  const std::string message = refusal([&] { WriterLock(results_, "x"); });
  EXPECT_NE(message.find("out.h5.lock is a symbolic link"), std::string::npos) << message;
  EXPECT_EQ(text_of(target), "precious");
}

TEST_F(WriterLockTest, CompanionsThatCannotBeMadeAreRefused) {
  EXPECT_NO_THROW(check_companions(results_));
  // NAME_MAX (255 here) less the longest companion suffix, ".combined.partial".
  EXPECT_NO_THROW(check_companions((dir_ / std::string(238, 'a')).string()));
  for (const std::size_t length : {239, 249, 255}) {
    const std::string message =
        refusal([&] { check_companions((dir_ / std::string(length, 'a')).string()); });
    EXPECT_NE(message.find("use a name of at most 238 bytes"), std::string::npos) << message;
  }
  const fs::path target = dir_ / "target";
  for (const std::string& companion : companion_paths(results_)) {
    fs::create_symlink(target, companion);
    EXPECT_NE(refusal([&] { check_companions(results_); }).find("is a symbolic link"),
              std::string::npos)
        << companion;
    fs::remove(companion);
  }
  EXPECT_FALSE(fs::exists(target));
}

TEST_F(WriterLockTest, TheActivityIsNotWrittenThroughALinkPlantedAtItsTemporaryFile) {
  const fs::path target = dir_ / "target";
  write_text(target, "precious");
  fs::create_symlink(target, activity_temporary_path(results_));
  Activity activity;
  activity.written = 12.5;
  EXPECT_EQ(write_activity(results_, activity), "");
  EXPECT_EQ(text_of(target), "precious");
  EXPECT_EQ(read_activity(results_), activity);
  EXPECT_FALSE(fs::exists(activity_temporary_path(results_)));
  EXPECT_EQ(remove_activity(results_), "");
  EXPECT_FALSE(fs::exists(activity_path(results_)));
}

}  // namespace
}  // namespace qsweep::store
