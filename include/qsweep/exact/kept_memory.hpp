#pragma once
// The memory the exact engines keep from one task to the next (docs/exact.md): the largest
// lattice block stays mapped after its task while a KeptMemory lives, so that the next exact task
// that fits in it pays no page faults. What a caller that runs tasks one after another (the run
// layer's compute engine) needs, without the lattice internals (lattice_array.hpp).
#include <cstddef>
#include <memory>

namespace qsweep::exact {

class KeepZeroedBlocks;

// While at least one lives, the exact engines keep their block for the next task; when the last
// one ends, the kept block is released.
class KeptMemory {
 public:
  KeptMemory();
  ~KeptMemory();
  KeptMemory(const KeptMemory&) = delete;
  KeptMemory& operator=(const KeptMemory&) = delete;

 private:
  std::unique_ptr<KeepZeroedBlocks> keep_;
};

// Gives the kept block back to the system (none: nothing to do). Any thread.
void release_kept_memory();
// The kept block's size, and how much of it is resident (the pages its tasks wrote).
std::size_t kept_memory_bytes();
std::size_t kept_memory_resident_bytes();

}  // namespace qsweep::exact
