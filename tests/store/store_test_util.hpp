#pragma once
// Shared by the store tests: a small plan with every method and column kind, and a fixture with a
// scratch directory per test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "qsweep/store/results_file.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::store::testing {

// Two exact blocks (different qmax and N, so widths and ragged lengths differ per row) with an
// ldp block between them, and a simulate task whose occupancy column has width 0.
inline const char* const kMixedSweep = R"(name: store-test
seed: 7
blocks:
  - method: exact
    family: ring
    N: [4, 5]
    lambda: [0.3, 0.6]
    qmax: 4
  - method: ldp
    policy: jsq
    n: [4, 6]
    j: 3
    T: 1
    lambda: 0.9
    estimator: exact
  - method: exact
    family: path
    N: 3
    lambda: 0.5
    qmax: 9
  - method: simulate
    policy: jsq
    family: ring
    N: 4
    lambda: 0.5
    horizon: 100
    warmup: 10
    replications: 2
)";

class ResultsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qsweep-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = (dir_ / "out.h5").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static Provenance provenance() { return Provenance::now("qsweep run test.yaml", 1); }

  std::filesystem::path dir_;
  std::string path_;
};

inline sweep::Plan mixed_plan() { return sweep::parse_plan(kMixedSweep, "store-test.yaml"); }

}  // namespace qsweep::store::testing
