// Zero-filled memory for the lattice engines (include/qsweep/exact/lattice_array.hpp).
#include "qsweep/exact/lattice_array.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace qsweep::exact {
namespace {

// Below this a mapping gains nothing (no whole huge page in it, few faults anyway).
constexpr std::size_t kMapThreshold = std::size_t{4} << 20;
constexpr std::size_t kHugePage = std::size_t{2} << 20;

// The kept block of the process and how many KeepZeroedBlocks live.
struct Kept {
  std::mutex mutex;
  ZeroedMemory block;
  int keepers = 0;
};
Kept& kept() {
  static Kept instance;
  return instance;
}

// Takes the kept block out (empty if none).
ZeroedMemory take_kept() {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  return std::move(k.block);
}

}  // namespace

ZeroedMemory::ZeroedMemory(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
#if defined(__linux__) && defined(MAP_ANONYMOUS)
  if (bytes >= kMapThreshold) {
    const std::size_t length = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    // The kept block: reused if it is large enough (its tail unmapped, memset over the bytes
    // asked for), else released before the new mapping, so two never coexist.
    ZeroedMemory old = take_kept();
    if (old.bytes_ >= length) {
      if (old.bytes_ > length) munmap(static_cast<char*>(old.data_) + length, old.bytes_ - length);
      std::memset(old.data_, 0, bytes);
      data_ = std::exchange(old.data_, nullptr);
      bytes_ = length;
      mapped_ = true;
      return;
    }
    old = ZeroedMemory();
    // Map one huge page more than needed and return the parts before the first 2 MiB boundary
    // and after the end, so that the array starts at a boundary (the kernel can then back all of
    // it with huge pages). Untouched mapped memory costs nothing.
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

KeepZeroedBlocks::KeepZeroedBlocks() {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  ++k.keepers;
}

KeepZeroedBlocks::~KeepZeroedBlocks() {
  ZeroedMemory released;  // unmapped after the lock is given up
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  if (--k.keepers == 0) released = std::move(k.block);
}

void keep_zeroed_block(ZeroedMemory&& block) {
  ZeroedMemory released = std::move(block);  // whichever is not kept is unmapped on return
  if (!released.mapped_) return;
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  if (k.keepers > 0 && released.bytes_ > k.block.bytes_) k.block.swap(released);
}

void release_kept_block() { ZeroedMemory released = take_kept(); }

std::size_t kept_block_bytes() {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  return k.block.capacity();
}

std::size_t kept_block_resident_bytes() {
  Kept& k = kept();
  std::lock_guard lock(k.mutex);
  const std::size_t bytes = k.block.capacity();
  if (bytes == 0) return 0;
#if defined(__linux__)
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> resident((bytes + page - 1) / page);
  if (mincore(k.block.data(), bytes, resident.data()) != 0) return bytes;
  std::size_t pages = 0;
  for (const unsigned char r : resident) pages += r & 1U;
  return pages * page;
#else
  return bytes;
#endif
}

}  // namespace qsweep::exact
