#pragma once
// Zero-filled memory for the lattice engines (one entry per server set: 2^N entries, up to 16 GiB
// at N = 30). On Linux the memory is an anonymous mapping aligned to 2 MiB and advised for
// transparent huge pages (madvise(MADV_HUGEPAGE), effective when
// /sys/kernel/mm/transparent_hugepage/enabled is "madvise" or "always"): the kernel's own zero
// fill is the only initialisation (no second pass writing zeros), a 2 MiB page is one fault
// instead of 512, and the scattered accesses of the lattice passes miss the TLB far less.
// Elsewhere, or below 4 MiB, it is calloc. Contents are the same either way: all bits zero.
//
// Pre-faulted reuse: while a KeepZeroedBlocks object lives (the run layer's compute engine), the
// block handed to keep_zeroed_block() stays mapped after its task, and the next ZeroedMemory that
// fits in it gets it back, zeroed with memset over the bytes asked for (its pages are already
// backed, so no page faults and no first touch by the host: docs/exact.md). One block per
// process: the run layer counts memory per process (a rank's resident size, docs/running.md
// "Memory"), and the main thread must be able to release the block the compute thread kept.
// Every mapping first releases the kept block unless it reuses it (then its tail is unmapped),
// so a process never holds the kept block beside another one.
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
  // Bytes held: a mapping is whole 2 MiB pages.
  std::size_t capacity() const { return bytes_; }

 private:
  friend void keep_zeroed_block(ZeroedMemory&& block);
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

// While at least one of these lives, keep_zeroed_block() keeps a block; when the last one ends,
// the kept block is released.
class KeepZeroedBlocks {
 public:
  KeepZeroedBlocks();
  ~KeepZeroedBlocks();
  KeepZeroedBlocks(const KeepZeroedBlocks&) = delete;
  KeepZeroedBlocks& operator=(const KeepZeroedBlocks&) = delete;
};

// Keeps `block` for the next ZeroedMemory if blocks are kept and it is a mapping (replacing a
// smaller kept one); otherwise frees it.
void keep_zeroed_block(ZeroedMemory&& block);
// Unmaps the kept block (none: nothing to do). Any thread.
void release_kept_block();
// The kept block: its size, and how much of it is resident (mincore: the pages its tasks wrote).
std::size_t kept_block_bytes();
std::size_t kept_block_resident_bytes();

}  // namespace qsweep::exact
