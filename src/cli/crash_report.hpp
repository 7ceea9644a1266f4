#pragma once
// Last words of a process that dies of a fatal signal: which process (pid, host, MPI rank), the
// signal and a backtrace, on standard error, so that a job log says where a rank died instead of
// SLURM's bare "task died by signal 11". Open MPI's MPI_Init installs a handler of its own for
// these signals ("Process received signal" and a backtrace); this one covers MPICH, every
// command that never starts MPI, and the start of `run` before MPI_Init.
namespace qsweep::cli {

// Installs the report for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT; after it the signal's
// default action follows (a core dump where enabled; the launcher sees the signal). Does nothing
// in a build with AddressSanitizer, whose own reports are better.
void install_crash_report();

}  // namespace qsweep::cli
