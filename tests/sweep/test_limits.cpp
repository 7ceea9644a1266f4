// Validation costs little: sweep files are read with bounds, output paths are checked as text,
// grids are sized with overflow-checked arithmetic before their values are made, and sizes a
// node cannot hold are refused with the limit in the message.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "plan_error.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

namespace fs = std::filesystem;

using testing::error_of;

std::string read_error(const std::string& path) {
  try {
    read_sweep_text(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "qsweep-limits-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(OutputPath, AcceptsFilePathsAndNamesWhatIsWrongOtherwise) {
  for (const char* good : {"results/a.h5", "a.h5", "/abs/path/x.h5", "../up/x.h5", "dir/.hidden",
                           "a..b", "spaces in name.h5", "ünïcode.h5"})
    EXPECT_EQ(output_path_problem(good), "") << good;
  EXPECT_EQ(output_path_problem(""), "is empty");
  EXPECT_EQ(output_path_problem(std::string("results/a\0b.h5", 14)), "contains a NUL byte");
  EXPECT_EQ(output_path_problem("a\nb.h5"), "contains the control character 0x0a");
  EXPECT_EQ(output_path_problem("a\tb.h5"), "contains the control character 0x09");
  EXPECT_EQ(output_path_problem("a\x7f.h5"), "contains the control character 0x7f");
  EXPECT_EQ(output_path_problem("results/"), "'results/' ends in '/' (a directory, not a file)");
  EXPECT_EQ(output_path_problem("/"), "'/' ends in '/' (a directory, not a file)");
  EXPECT_EQ(output_path_problem("."), "'.' names a directory ('.'), not a file");
  EXPECT_EQ(output_path_problem("results/.."), "'results/..' names a directory ('..'), not a file");
}

TEST(OutputPath, TheSweepFilesOutputIsCheckedWhereItIsWritten) {
  const std::string blocks = "blocks:\n  - {method: exact, family: ring, N: 4, lambda: 0.5}\n";
  EXPECT_EQ(error_of("name: x\noutput: \"a\\0b.h5\"\n" + blocks),
            "test.yaml:2:9: output contains a NUL byte; expected the path of a results file such "
            "as results/my-study.h5");
  EXPECT_NE(error_of("name: x\noutput: out/\n" + blocks).find("test.yaml:2:9: output 'out/' ends"),
            std::string::npos);
  EXPECT_EQ(parse_plan("name: x\noutput: out/x.h5\n" + blocks, "t.yaml").output, "out/x.h5");
}

TEST(ReadSweepText, ReadsRegularFilesAndNamedPipes) {
  TempDir dir;
  const std::string text = "name: x\nblocks: []\n";
  const std::string file = (dir.path / "s.yaml").string();
  std::ofstream(file) << text;
  EXPECT_EQ(read_sweep_text(file), text);
  // A named pipe stays readable (tests/integration/run_early_signal.sh feeds a run through one).
  const std::string fifo = (dir.path / "pipe.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << text; });
  EXPECT_EQ(read_sweep_text(fifo), text);
  writer.join();
}

TEST(ReadSweepText, RefusesWhatIsNotASweepFileNamingThePath) {
  TempDir dir;
  const std::string expected = "; expected a readable YAML file of at most 4 MiB";
  const std::string path = dir.path.string();
  EXPECT_EQ(read_error(path), path + ": is a directory, not a sweep file" + expected);
  EXPECT_EQ(read_error("/dev/zero"),
            "/dev/zero: is not a regular file (a device or a socket)" + expected);
  const std::string missing = path + "/missing.yaml";
  EXPECT_EQ(read_error(missing),
            missing + ": cannot read the sweep file (No such file or directory)" + expected);
  EXPECT_THROW(load_plan(path), InputError);

  // One byte over the limit is refused by its size, unread (the file is sparse); at the limit
  // it is read.
  const std::string big = path + "/big.yaml";
  std::ofstream{big};
  fs::resize_file(big, kMaxSweepFileBytes + 1);
  EXPECT_EQ(read_error(big), fmt::format("{}: the sweep file has {} bytes, more than the limit{}",
                                         big, kMaxSweepFileBytes + 1, expected));
  fs::resize_file(big, kMaxSweepFileBytes);
  EXPECT_EQ(read_sweep_text(big).size(), kMaxSweepFileBytes);
}

TEST(ReadSweepText, APipeIsCutAtTheLimit) {
  TempDir dir;
  const std::string fifo = (dir.path / "pipe.yaml").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader stops early: the writer must see EPIPE, not die of SIGPIPE.
  const auto previous = std::signal(SIGPIPE, SIG_IGN);
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    const std::string chunk(1 << 16, '#');
    for (std::uint64_t sent = 0; sent <= kMaxSweepFileBytes && out; sent += chunk.size())
      out << chunk;
  });
  EXPECT_EQ(read_error(fifo), fifo +
                                  ": the sweep file is larger than the limit; expected a "
                                  "readable YAML file of at most 4 MiB");
  writer.join();
  std::signal(SIGPIPE, previous);
}

TEST(GridSize, IsExactAtMaxTasksAndOverflowChecked) {
  const std::string block =
      "blocks:\n  - {method: exact, family: ring, N: [4, 5, 6], "
      "lambda: [0.1, 0.2, 0.3, 0.4]}\n";
  EXPECT_EQ(parse_plan("name: x\nmax_tasks: 12\n" + block, "t.yaml").tasks.size(), 12u);
  EXPECT_EQ(error_of("name: x\nmax_tasks: 11\n" + block),
            "test.yaml:4:5: this block expands to 12 tasks and the plan would exceed max_tasks = "
            "11; expected a smaller grid, or a larger max_tasks at the top of the file");
  // Three axes of 2^23 values: the product 2^69 wraps to 0 in 64-bit arithmetic. Only the
  // counts are read, no value is made.
  const std::string axis = "{linspace: [4, 8388611, 8388608]}";
  EXPECT_NE(error_of("name: x\nmax_tasks: 10000000\nblocks:\n  - {method: exact, family: "
                     "complete, N: " +
                     axis + ", d: " + axis + ", qmax: " + axis + "}\n")
                .find("this block expands to 5.903e+20 tasks"),
            std::string::npos);
}

TEST(GridSize, TheWholeSweepIsSizedBeforeAnyBlockIsExpanded) {
  // Block 1 has a bad value; block 2 is too large: the size is reported first, at block 2.
  EXPECT_EQ(error_of("name: x\nmax_tasks: 10\nblocks:\n"
                     "  - {method: exact, family: ring, N: 4, lambda: [-1, 0.2]}\n"
                     "  - {method: exact, family: path, N: [4, 5], lambda: [0.1, 0.2, 0.3, 0.4, "
                     "0.5]}\n"),
            "test.yaml:5:5: this block expands to 10 tasks and the plan would exceed max_tasks = "
            "10; expected a smaller grid, or a larger max_tasks at the top of the file");
  EXPECT_NE(error_of("name: x\nmax_tasks: 10000001\nblocks: []\n")
                .find("max_tasks = 10000001 is out of range; expected an integer in [1, 10000000]"),
            std::string::npos);
}

TEST(Limits, InitialCountsThatWouldWrapAreRefusedAtTheCount) {
  // 2 (2^63 - 1) + 3 wraps to 1 = n in int64: this used to run and report P = 0.
  EXPECT_EQ(error_of("name: x\nseed: 1\nblocks:\n  - {method: ldp, n: 1, j: 5, T: 1, lambda: "
                     "0.9, initial_counts: [0, 9223372036854775807, 9223372036854775807, 3]}\n"),
            "test.yaml:4:70: initial_counts sum to more than 2^53 at this count; expected counts "
            "summing to n (at most 2^53)");
  // Just below: a valid sum that is not n is left to the estimators' own check.
  EXPECT_NE(error_of("name: x\nseed: 1\nblocks:\n  - {method: ldp, n: 1, j: 5, T: 1, lambda: "
                     "0.9, initial_counts: [0, 4503599627370496, 4503599627370496]}\n")
                .find("initial_counts must be >= 0 and sum to n"),
            std::string::npos);
}

TEST(Limits, SizesANodeCannotHoldNameTheLimit) {
  const std::string servers = std::to_string(model::kMaxServers);
  EXPECT_EQ(error_of("name: x\nseed: 1\nblocks:\n  - {method: simulate, family: complete, N: "
                     "2147483000, lambda: 0.5}\n"),
            "test.yaml:4:45: N = 2147483000 is out of range; expected an integer in [1, " +
                servers + "]");
  EXPECT_EQ(error_of("name: x\nseed: 1\nblocks:\n  - {method: simulate, family: torus, rows: "
                     "46340, cols: 46340, lambda: 0.5}\n"),
            "test.yaml:4:5: torus 46340 x 46340 has 2147395600 servers; expected rows x cols <= " +
                servers + " (model::kMaxServers)");
  // A graph family too large for the exact engines is refused before it is built.
  EXPECT_NE(error_of("name: x\nblocks:\n  - {method: exact, family: star, N: 5000000, lambda: "
                     "0.1}\n")
                .find("test.yaml:3:38: N = 5000000 is too large for the general exact engine"),
            std::string::npos);
}

}  // namespace
}  // namespace qsweep::sweep
