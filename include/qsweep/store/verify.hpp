#pragma once
// Checking a results file against its plan, row by row (serial, read-only): what `--resume`
// does before anything runs, and what `qsweep verify` reports. See docs/results-layout.md,
// "Checksums".
//
// Every finished row carries a checksum of its stored values (/tasks/checksum, written after
// the row and its status). A row is
//   finished     its status is done/failed/unstable and the checksum matches its bytes;
//   pending      status pending and no checksum;
//   interrupted  a finished status but no checksum yet: the run was killed while writing it;
//   damaged      anything else: checksum mismatch, a parameter that differs from the plan, an
//                unknown status byte, or pending with a checksum (a finished row's status
//                overwritten).
// Interrupted and damaged rows run again on --resume, like pending ones.
#include <cstdint>
#include <string>
#include <vector>

#include "qsweep/common/task_status.hpp"
#include "qsweep/store/layout.hpp"

namespace qsweep::store {

struct Verification {
  // Per task: the verified status; pending for pending, interrupted and damaged rows.
  std::vector<TaskStatus> statuses;
  std::uint64_t finished = 0;          // rows verified as done, failed or unstable
  std::uint64_t interrupted = 0;       // finished status, not sealed
  std::vector<std::uint64_t> damaged;  // task ids, ascending
  std::vector<std::string> damage;     // what was wrong, for the first kMaxDamageMessages rows

  static constexpr std::size_t kMaxDamageMessages = 20;
};

// Verifies every row of the results file at `path` against the layout and the planned rows of
// its plan. Throws InputError naming the problem when the file cannot be verified at all: not a
// results file, another format version, or a structure (datasets, shapes, types, ragged offsets)
// that is not the layout's.
Verification verify_results(const std::string& path, const Layout& layout,
                            const PlannedRows& planned);

}  // namespace qsweep::store
