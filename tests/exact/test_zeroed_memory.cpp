// The block kept between tasks (include/qsweep/exact/lattice_array.hpp): a later block that fits
// reuses it zero-filled and already resident, a larger one replaces it, and releasing it unmaps
// it; the general engine gives bitwise the same results on a reused, dirty block as on a fresh
// one.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <vector>

#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/lattice_array.hpp"

namespace qsweep::exact {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// Bytes of [data, data + bytes) in memory (mincore); -1 if part of the range is not mapped.
long long resident(const void* data, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((bytes + page - 1) / page);
  // mincore takes a non-const pointer; it only reads the page tables.
  if (mincore(const_cast<void*>(data), bytes, pages.data()) != 0) return errno == ENOMEM ? -1 : -2;
  long long count = 0;
  for (const unsigned char p : pages) count += p & 1U;
  return count * static_cast<long long>(page);
}

bool all_zero(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  return std::all_of(p, p + bytes, [](unsigned char c) { return c == 0; });
}

// A mapped block of `bytes` written all over with a non-zero pattern.
ZeroedMemory dirty_block(std::size_t bytes) {
  ZeroedMemory block(bytes);
  EXPECT_TRUE(block.huge_page_advised());
  std::memset(block.data(), 0xA5, bytes);
  return block;
}

TEST(ZeroedMemory, NotKeptWithoutAKeeper) {
  ZeroedMemory block = dirty_block(8 * kMiB);
  const void* where = block.data();
  keep_zeroed_block(std::move(block));
  EXPECT_EQ(kept_block_bytes(), 0U);
  EXPECT_EQ(resident(where, 8 * kMiB), -1);  // unmapped
}

TEST(ZeroedMemory, SameSizeReusesTheKeptBlockZeroed) {
  const KeepZeroedBlocks keep;
  ZeroedMemory block = dirty_block(8 * kMiB);
  void* where = block.data();
  keep_zeroed_block(std::move(block));
  ASSERT_EQ(kept_block_bytes(), 8 * kMiB);
  EXPECT_EQ(kept_block_resident_bytes(), 8 * kMiB);  // every page was written

  ZeroedMemory again(8 * kMiB);
  EXPECT_EQ(again.data(), where);
  EXPECT_EQ(kept_block_bytes(), 0U);  // handed out: not kept twice
  // Resident before this test reads it: the old pages, not a fresh mapping (whose pages would
  // only come with the first touch).
  EXPECT_EQ(resident(again.data(), 8 * kMiB), static_cast<long long>(8 * kMiB));
  EXPECT_TRUE(all_zero(again.data(), 8 * kMiB));
}

TEST(ZeroedMemory, SmallerRequestReusesTheKeptBlockAndUnmapsItsTail) {
  const KeepZeroedBlocks keep;
  ZeroedMemory block = dirty_block(12 * kMiB);
  auto* where = static_cast<char*>(block.data());
  keep_zeroed_block(std::move(block));

  const std::size_t asked = 5 * kMiB + 3;  // rounded up to 6 MiB of whole huge pages
  ZeroedMemory smaller(asked);
  EXPECT_EQ(smaller.data(), where);
  EXPECT_EQ(smaller.capacity(), 6 * kMiB);
  EXPECT_EQ(resident(where, 6 * kMiB), static_cast<long long>(6 * kMiB));
  EXPECT_EQ(resident(where + 6 * kMiB, 6 * kMiB), -1);  // the tail went back
  EXPECT_TRUE(all_zero(smaller.data(), asked));

  // Kept again at its new size.
  keep_zeroed_block(std::move(smaller));
  EXPECT_EQ(kept_block_bytes(), 6 * kMiB);
}

TEST(ZeroedMemory, LargerRequestReleasesTheKeptBlockFirst) {
  const KeepZeroedBlocks keep;
  ZeroedMemory block = dirty_block(8 * kMiB);
  auto* old = static_cast<char*>(block.data());
  keep_zeroed_block(std::move(block));

  ZeroedMemory larger(32 * kMiB);
  EXPECT_EQ(kept_block_bytes(), 0U);
  EXPECT_TRUE(all_zero(larger.data(), 32 * kMiB));
  // The old block is gone: unmapped, or (the kernel reusing the address) inside the new one.
  auto* begin = static_cast<char*>(larger.data());
  if (old < begin || old >= begin + larger.capacity()) {
    EXPECT_EQ(resident(old, 8 * kMiB), -1);
  }
}

TEST(ZeroedMemory, KeepsTheLargerOfTwoAndReleasesOnRequest) {
  ZeroedMemory big = dirty_block(16 * kMiB), small = dirty_block(8 * kMiB);
  const void* big_at = big.data();
  const void* small_at = small.data();
  const void* last_at = nullptr;
  {
    const KeepZeroedBlocks keep;
    keep_zeroed_block(std::move(big));
    keep_zeroed_block(std::move(small));
    EXPECT_EQ(kept_block_bytes(), 16 * kMiB);
    EXPECT_EQ(resident(small_at, 8 * kMiB), -1);
    release_kept_block();
    EXPECT_EQ(kept_block_bytes(), 0U);
    EXPECT_EQ(resident(big_at, 16 * kMiB), -1);
    EXPECT_EQ(kept_block_resident_bytes(), 0U);

    ZeroedMemory last = dirty_block(8 * kMiB);
    last_at = last.data();
    keep_zeroed_block(std::move(last));
    EXPECT_EQ(kept_block_bytes(), 8 * kMiB);
  }
  // The last keeper's end releases it.
  EXPECT_EQ(kept_block_bytes(), 0U);
  EXPECT_EQ(resident(last_at, 8 * kMiB), -1);
}

TEST(ZeroedMemory, SmallBlocksAreNotKept) {
  const KeepZeroedBlocks keep;
  ZeroedMemory block(kMiB);  // calloc below 4 MiB
  EXPECT_FALSE(block.huge_page_advised());
  keep_zeroed_block(std::move(block));
  EXPECT_EQ(kept_block_bytes(), 0U);
}

// A ring of N servers (types {n, n + 1}) at per-server load 0.8.
detail::Moments ring(int N, int qmax) {
  std::vector<model::JobType> types;
  for (int n = 0; n < N; ++n)
    types.push_back(
        {(model::ServerMask{1} << n) | (model::ServerMask{1} << ((n + 1) % N)), 1.0 / N});
  std::vector<double> speeds(static_cast<std::size_t>(N));
  for (int n = 0; n < N; ++n) speeds[static_cast<std::size_t>(n)] = 1.0 + 0.01 * n;
  return detail::general_engine(types, speeds, 0.8 * N, qmax, true);
}

void expect_bitwise_equal(const detail::Moments& a, const detail::Moments& b) {
  EXPECT_EQ(std::memcmp(&a.log_f, &b.log_f, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&a.EQ, &b.EQ, sizeof(double)), 0);
  EXPECT_EQ(std::memcmp(&a.VarQ, &b.VarQ, sizeof(double)), 0);
  ASSERT_EQ(a.log_weight.size(), b.log_weight.size());
  EXPECT_EQ(
      std::memcmp(a.log_weight.data(), b.log_weight.data(), a.log_weight.size() * sizeof(double)),
      0);
  ASSERT_EQ(a.EQ_type.size(), b.EQ_type.size());
  EXPECT_EQ(std::memcmp(a.EQ_type.data(), b.EQ_type.data(), a.EQ_type.size() * sizeof(double)), 0);
  EXPECT_EQ(a.unions, b.unions);
}

// N = 18 (4 MiB) on fresh memory, then on the block an N = 19 task (8 MiB) left dirty.
TEST(ZeroedMemory, GeneralEngineOnAReusedBlockIsBitwiseTheSame) {
  const detail::Moments fresh = ring(18, 12);
  const KeepZeroedBlocks keep;
  const detail::Moments other = ring(19, 12);
  ASSERT_EQ(kept_block_bytes(), 8 * kMiB);
  ASSERT_EQ(kept_block_resident_bytes(), 8 * kMiB);
  const detail::Moments reused = ring(18, 12);
  EXPECT_EQ(kept_block_bytes(), 4 * kMiB);  // the same block, its tail unmapped
  expect_bitwise_equal(fresh, reused);
  EXPECT_NE(other.EQ, reused.EQ);
}

}  // namespace
}  // namespace qsweep::exact
