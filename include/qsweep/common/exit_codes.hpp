#pragma once
// Exit codes of the qsweep executable (documented in README.md, used by jobs/*.sbatch).
namespace qsweep::exit_code {
inline constexpr int ok = 0;         // everything done
inline constexpr int error = 1;      // runtime error (I/O, MPI, internal)
inline constexpr int bad_input = 2;  // bad command line, sweep file or parameters; nothing written
// The sweep finished but some tasks failed (see `qsweep status`).
inline constexpr int tasks_failed = 3;
inline constexpr int incomplete = 4;  // stopped early (signal/walltime): resume with --resume
inline constexpr int damaged = 5;  // `qsweep verify`: some rows are damaged (--resume reruns them)
}  // namespace qsweep::exit_code
