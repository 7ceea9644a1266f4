// Every file in tests/sweep/bad/ is an invalid sweep whose first line reads
// "# expect: <fragment>": loading it must fail with one line "FILE:LINE:COLUMN: ..." that
// contains the fragment. (tests/integration/sweep_bad_inputs.sh checks the CLI side: exit code,
// stderr, no file created.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "qsweep/common/error.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> bad_files() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / "tests/sweep/bad"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

// "FILE:LINE:COLUMN: what is wrong; expected ..." with positive LINE and COLUMN.
bool located(const std::string& message, const std::string& file) {
  if (message.rfind(file + ":", 0) != 0) return false;
  std::size_t at = file.size() + 1;
  for (int field = 0; field < 2; ++field) {
    const std::size_t digits = message.find_first_not_of("0123456789", at);
    if (digits == at || digits == std::string::npos || message[digits] != ':') return false;
    at = digits + 1;
  }
  return message.compare(at, 1, " ") == 0 && message.find("; expected ", at) != std::string::npos;
}

std::string expected_fragment(const fs::path& file) {
  std::ifstream in(file);
  std::string first;
  std::getline(in, first);
  const std::string prefix = "# expect: ";
  EXPECT_EQ(first.rfind(prefix, 0), 0u) << file << " lacks its '# expect:' line";
  return first.substr(std::min(prefix.size(), first.size()));
}

TEST(BadInputs, EachFileFailsWithItsLocatedOneLineMessage) {
  const auto files = bad_files();
  EXPECT_GE(files.size(), 30u);
  for (const auto& file : files) {
    const std::string fragment = expected_fragment(file);
    try {
      load_plan(file.string());
      ADD_FAILURE() << file << " was accepted";
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_TRUE(located(message, file.string())) << file.filename() << ": " << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
      EXPECT_NE(message.find(fragment), std::string::npos)
          << file.filename() << "\n  expected: " << fragment << "\n  got:      " << message;
    }
  }
}

TEST(BadInputs, UnreadableFileIsAnInputError) {
  EXPECT_THROW(load_plan("/nonexistent/sweep.yaml"), InputError);
}

}  // namespace
}  // namespace qsweep::sweep
