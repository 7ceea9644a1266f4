#pragma once
// The MPI session of a process: the one RAII owner of MPI_Init/MPI_Finalize.
#include <string>

namespace qsweep::run {

class MpiSession {
 public:
  // MPI_Init_thread with MPI_THREAD_FUNNELED (only the main thread calls MPI; compute threads do
  // not), and MPI_ERRORS_RETURN on MPI_COMM_WORLD so that MPI errors become exceptions.
  MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // Finalizes, or, while an exception is propagating, ends the job with MPI_Abort (finalizing
  // would wait for ranks that will never arrive). Never throws.
  ~MpiSession();

  int rank() const { return rank_; }
  int size() const { return size_; }
  void finalize();

  // Prints "qsweep: rank R: error: MESSAGE" on stderr and ends every rank of the job.
  [[noreturn]] static void abort(const std::string& message, int exit_code);

 private:
  int rank_ = 0;
  int size_ = 1;
  bool finalized_ = false;
};

}  // namespace qsweep::run
