#include "qsweep/run/mpi.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "qsweep/common/error.hpp"

namespace qsweep::run {
namespace {

void check_mpi(int result, const char* call) {
  if (result == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(result, text, &length);
  throw Error(std::string(call) +
              "(MPI_COMM_WORLD) failed: " + std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace

MpiSession::MpiSession() {
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    throw Error("MPI_Init_thread failed");
  }
  try {
    check_mpi(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
              "MPI_Comm_set_errhandler");
    if (provided < MPI_THREAD_FUNNELED) {
      throw Error(
          "the MPI library does not support MPI_THREAD_FUNNELED (a compute thread per rank)");
    }
    check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  } catch (const std::exception& e) {
    abort(e.what(), 1);
  }
}

MpiSession::~MpiSession() {
  if (finalized_) return;
  if (std::uncaught_exceptions() > 0) {
    std::fprintf(stderr, "qsweep: rank %d: error: ending the job after an error\n", rank_);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
}

void MpiSession::finalize() {
  if (finalized_) return;
  finalized_ = true;
  check_mpi(MPI_Finalize(), "MPI_Finalize");
}

void MpiSession::abort(const std::string& message, int exit_code) {
  int rank = 0;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "qsweep: rank %d: error: %s\n", rank, message.c_str());
  std::fflush(stderr);
  if (initialized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace qsweep::run
