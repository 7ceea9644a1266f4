// Zero-filled memory for the lattice engines (include/qsweep/exact/lattice_array.hpp).
#include "qsweep/exact/lattice_array.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace qsweep::exact {
namespace {

// Below this a mapping gains nothing (no whole huge page in it, few faults anyway).
constexpr std::size_t kMapThreshold = std::size_t{4} << 20;
constexpr std::size_t kHugePage = std::size_t{2} << 20;

}  // namespace

ZeroedMemory::ZeroedMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
#if defined(__linux__) && defined(MAP_ANONYMOUS)
  if (bytes >= kMapThreshold) {
    // Map one huge page more than needed and return the parts before the first 2 MiB boundary
    // and after the end, so that the array starts at a boundary (the kernel can then back all of
    // it with huge pages). Untouched mapped memory costs nothing.
    const std::size_t length = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    // Pointer arithmetic on the mapping itself (no integer-to-pointer casts).
    auto* base = static_cast<char*>(raw);
    const std::size_t head =
        (kHugePage - reinterpret_cast<std::uintptr_t>(raw) % kHugePage) % kHugePage;
    char* aligned = base + head;
    if (head > 0) munmap(base, head);
    const std::size_t tail = kHugePage - head;  // mapped after aligned + length
    if (tail > 0) munmap(aligned + length, tail);
    data_ = aligned;
    bytes_ = length;
    mapped_ = true;
#if defined(MADV_HUGEPAGE)
    madvise(data_, length, MADV_HUGEPAGE);  // a kernel without THP refuses: 4 KiB pages then
#endif
    return;
  }
#endif
  data_ = std::calloc(bytes, 1);
  if (data_ == nullptr) throw std::bad_alloc();
}

ZeroedMemory::~ZeroedMemory() {
  if (data_ == nullptr) return;
#if defined(__linux__) && defined(MAP_ANONYMOUS)
  if (mapped_) {
    munmap(data_, bytes_);
    return;
  }
#endif
  std::free(data_);
}

}  // namespace qsweep::exact
