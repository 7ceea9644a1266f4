#include "qsweep/exact/kept_memory.hpp"

#include "qsweep/exact/lattice_array.hpp"

namespace qsweep::exact {

KeptMemory::KeptMemory() : keep_(std::make_unique<KeepZeroedBlocks>()) {}
KeptMemory::~KeptMemory() = default;

void release_kept_memory() { release_kept_block(); }
std::size_t kept_memory_bytes() { return kept_block_bytes(); }
std::size_t kept_memory_resident_bytes() { return kept_block_resident_bytes(); }

}  // namespace qsweep::exact
