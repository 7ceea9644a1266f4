#pragma once
// Zero-filled memory for the lattice engines (one entry per server set: 2^N entries, up to 16 GiB
// at N = 30). On Linux the memory is an anonymous mapping aligned to 2 MiB and advised for
// transparent huge pages (madvise(MADV_HUGEPAGE), effective when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always"): the kernel's own zero
// fill is the only initialisation (no second pass writing zeros), a 2 MiB page is one fault
// instead of 512, and the scattered accesses of the lattice passes miss the TLB far less.
// Elsewhere, or below 4 MiB, it is calloc. Contents are the same either way: all bits zero.
#include <cstddef>
#include <utility>

namespace qsweep::exact {

// Zero-filled memory of `bytes` bytes (throws std::bad_alloc when it cannot be had).
class ZeroedMemory {
 public:
  ZeroedMemory() = default;
  explicit ZeroedMemory(std::size_t bytes);
  ~ZeroedMemory();
  ZeroedMemory(ZeroedMemory&& other) noexcept { swap(other); }
  ZeroedMemory& operator=(ZeroedMemory&& other) noexcept {
    ZeroedMemory(std::move(other)).swap(*this);
    return *this;
  }
  ZeroedMemory(const ZeroedMemory&) = delete;
  ZeroedMemory& operator=(const ZeroedMemory&) = delete;
  void swap(ZeroedMemory& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    std::swap(mapped_, other.mapped_);
  }
  void* data() const { return data_; }
  // True if the memory is a 2 MiB-aligned mapping advised for huge pages (whether the kernel
  // grants them is its choice: /proc/self/smaps AnonHugePages tells).
  bool huge_page_advised() const { return mapped_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace qsweep::exact
