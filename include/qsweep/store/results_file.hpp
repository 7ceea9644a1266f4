#pragma once
// Writing the results file in parallel (MPI-IO). The file is created and sized collectively from
// the plan, with every task's parameters in place and every task pending; after that each rank
// writes only the rows of the tasks it ran (independent I/O), a row's status last. Only raw data
// changes after creation, so a job killed at any moment leaves a file that opens cleanly.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "qsweep/store/layout.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::store {

// Who made the file, stored as root attributes next to the sweep's own identity.
struct Provenance {
  std::string command_line;
  std::string hostname;
  std::string created;  // ISO 8601, UTC
  int mpi_ranks = 1;

  // Hostname and time of now.
  static Provenance now(std::string command_line, int mpi_ranks);
};

struct FinishedTask {
  std::uint64_t id = 0;
  sweep::TaskOutcome outcome;
  int rank = 0;  // rank that ran it
};

class ResultsFile {
 public:
  // Collective over `comm`. Writes the whole file for `plan` to "<path>.partial" and renames it
  // to `path` (replacing an existing file) only once it is complete, so a job killed during
  // creation never leaves a half-made file under the final name.
  static void create(const std::string& path, const sweep::Plan& plan, const Layout& layout,
                     const Provenance& provenance, MPI_Comm comm);

  // Collective: opens a file made by create() for the same plan, to write rows. `plan` and
  // `layout` must outlive the object.
  ResultsFile(const std::string& path, const sweep::Plan& plan, const Layout& layout,
              MPI_Comm comm);
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  // A file not closed explicitly is being abandoned because this rank failed: its handles are
  // released without the collective close (which would wait forever for the other ranks); the
  // caller ends the job with MPI_Abort.
  ~ResultsFile();

  // Independent I/O. Records that these tasks were handed out (written before they run).
  void write_attempts(std::span<const std::uint64_t> ids, std::span<const std::int32_t> attempts);
  // Independent I/O. Writes each task's row, then /tasks error, wall_seconds and rank, and last
  // the status. An outcome whose results do not fit the planned sizes is turned into a failure
  // (in place) with a message saying so.
  void write_finished(std::vector<FinishedTask>& finished);

  // Collective.
  void close();

 private:
  struct Datasets;
  const sweep::Plan& plan_;
  const Layout& layout_;
  std::unique_ptr<Datasets> datasets_;
};

}  // namespace qsweep::store
