#pragma once
// MPI for a GoogleTest program: initialised before the first test, finalised after the last.
// Run directly, a test program is an MPI singleton (one rank); launched by mpirun (see
// tests/run/test_mpi_ranks.cpp) it has several.
#include <gtest/gtest.h>
#include <mpi.h>

namespace qsweep::testing {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  void TearDown() override { MPI_Finalize(); }
};

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace qsweep::testing
