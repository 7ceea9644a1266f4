// The git commit stamped into results files: taken at build time from the source tree, with
// "-dirty" when tracked files differ from that commit. Checked here against git itself.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "qsweep/version.hpp"

namespace qsweep {
namespace {

// Output of a shell command without its trailing newline; "" if it cannot run.
std::string command_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::string out;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe.get()) != nullptr) {
    out += buffer.data();
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

TEST(Version, GitCommitIsTheSourceTreesCommitAndDirtyFlag) {
  const std::string git = std::string("git -C '") + QSWEEP_SOURCE_DIR + "' ";
  const std::string head = command_output(git + "rev-parse --short=12 HEAD 2>/dev/null");
  if (head.empty()) {
    EXPECT_STREQ(git_commit(), "unknown");  // built outside a git checkout
    return;
  }
  // The test binary is built from the tree as it is now (ctest runs after the build), so the
  // flag it carries must be the tree's current state.
  const bool dirty =
      !command_output(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  EXPECT_EQ(git_commit(), head + (dirty ? "-dirty" : ""))
      << "the tree changed since this test was built: rebuild, then test";
}

TEST(Version, VersionIsDottedNumbers) {
  const std::string version = kVersion;
  EXPECT_FALSE(version.empty());
  EXPECT_EQ(version.find_first_not_of("0123456789."), std::string::npos) << version;
}

}  // namespace
}  // namespace qsweep
