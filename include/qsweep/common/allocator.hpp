#pragma once
// glibc's malloc raises its mmap threshold (up to 32 MiB) each time a mapped block is freed, so
// later blocks below the new threshold come from the heap, where what is freed stays resident:
// a process's resident size then depends on what it ran before, and the memory estimates that
// scheduling relies on (per task, and each rank's baseline) stop holding. qsweep's programs fix
// the threshold when they start: every block of kOwnMappingBytes or more is a mapping of its own,
// given back to the system when freed.
// Fixing it also fixes the trim threshold, which glibc would otherwise raise with it: at its
// initial 128 KiB, every piece of work that fills and frees a few MiB of small blocks (creating a
// results file: 4096 rows at a time) gives the top of the heap back and faults it in again, and
// `qsweep run` of 10^6 tasks took 2-2.5x as long to start (bench/run_startup.sh). Up to
// kKeptHeapTopBytes of free heap stay resident instead, a constant, not growing with the work.
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace qsweep {

inline constexpr int kOwnMappingBytes = 128 << 10;  // glibc's initial threshold
inline constexpr int kKeptHeapTopBytes = 32 << 20;  // 4 MiB was not enough, 16 MiB was

inline void fix_malloc_mmap_threshold() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, kOwnMappingBytes);
  mallopt(M_TRIM_THRESHOLD, kKeptHeapTopBytes);
#endif
}

}  // namespace qsweep
