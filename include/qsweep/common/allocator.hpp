#pragma once
// glibc's malloc raises its mmap threshold (up to 32 MiB) each time a mapped block is freed, so
// later blocks below the new threshold come from the heap, where what is freed stays resident:
// a process's resident size then depends on what it ran before, and the memory estimates that
// scheduling relies on (per task, and each rank's baseline) stop holding. qsweep's programs fix
// the threshold when they start: every block of kOwnMappingBytes or more is a mapping of its own,
// given back to the system when freed.
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace qsweep {

inline constexpr int kOwnMappingBytes = 128 << 10;  // glibc's initial threshold

inline void fix_malloc_mmap_threshold() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, kOwnMappingBytes);
#endif
}

}  // namespace qsweep
