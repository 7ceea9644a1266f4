#pragma once
// Writing the results file in parallel (MPI-IO). The file is created and sized collectively from
// its layout, with every task's parameters in place and every task pending; after that each rank
// writes only the rows of the tasks it ran (independent I/O), a row's status last. Only raw data
// changes after creation, so a job killed at any moment leaves a file that opens cleanly.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "qsweep/store/layout.hpp"

namespace qsweep::store {
namespace detail {
struct FileDatasets;
}
class WriterLock;

// Who made the file, stored as root attributes next to the sweep's own identity.
struct Provenance {
  std::string command_line;
  std::string hostname;
  std::string created;  // ISO 8601, UTC
  int mpi_ranks = 1;
  // The history of the files this one continues (grown, merged): their `history` entries, one
  // per line; empty for a new study. The new file's `history` is this and its own entry.
  std::string history;

  // Hostname and time of now.
  static Provenance now(std::string command_line, int mpi_ranks);
};

// One line of a file's `history` attribute: when, what command, where and by which qsweep.
std::string history_entry(const std::string& created, const std::string& command_line,
                          const std::string& hostname, const std::string& mpi_ranks,
                          const std::string& qsweep_version, const std::string& git_commit);

// The sweep a file holds the results of, stored as root attributes.
struct SweepIdentity {
  std::string name;
  std::string source;       // the sweep file's path as given
  std::string yaml_text;    // its text
  std::string yaml_sha256;  // of its text
  std::string plan_hash;    // of the expanded plan: a file is resumed only by the same plan
};

// The rows of a task that ran.
struct FinishedRow {
  std::uint64_t id = 0;
  TaskRows rows;
};

// "; No space left on device (DIR has no free space)" when the file system of the results file
// `path` is full, else "": added to the message of a write that failed there, since MPI-IO and
// HDF5 report only that a write failed, not the errno.
std::string full_disk_note(const std::string& path);

class ResultsFile {
 public:
  // Collective over `comm`. Writes the whole file to "<path>.partial", every task's rows as
  // `planned` gives them, and renames it to `path` (replacing an existing file) only once it is
  // complete, so a job killed during creation never leaves a half-made file under the final
  // name. Every rank passes the same identity and layout. `lock` (rank 0's, of the results
  // file) holds the new file before it is renamed (WriterLock::hold).
  static void create(const std::string& path, const SweepIdentity& sweep, const Layout& layout,
                     const PlannedRows& planned, const Provenance& provenance, MPI_Comm comm,
                     WriterLock* lock = nullptr);

  // Collective: opens a file made by create() with the same layout, to write rows. `layout` must
  // outlive the object.
  ResultsFile(const std::string& path, const Layout& layout, MPI_Comm comm);
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  // A file not closed explicitly is being abandoned because this rank failed: its handles are
  // released without the collective close (which would wait forever for the other ranks); the
  // caller ends the job with MPI_Abort.
  ~ResultsFile();

  // Independent I/O. Records that these tasks were handed out (written before they run).
  void write_attempts(std::span<const std::uint64_t> ids, std::span<const std::int32_t> attempts);
  // Independent I/O. Writes each task's group row, then its /tasks row but the status, then the
  // status, and last the checksum that seals the row. Rows must fit the layout
  // (Layout::misfit).
  void write_finished(std::span<const FinishedRow> finished);

  const Layout& layout() const { return layout_; }

  // Collective.
  void close();

 private:
  const Layout& layout_;
  std::unique_ptr<detail::FileDatasets> datasets_;
};

}  // namespace qsweep::store
