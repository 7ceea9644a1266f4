#pragma once
// SHA-256 (FIPS 180-4) for provenance: the digest of the sweep file and of the expanded plan.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace qsweep::sweep {

// Incremental: update() any number of times, then hex_digest() or digest_words() once.
class Sha256 {
 public:
  // With the x86 SHA instructions where the CPU has them (8x the portable code: the plan hash
  // reads every task's canonical form), unless `portable` (tests compare both).
  explicit Sha256(bool portable = false);
  void update(std::string_view data);
  std::string hex_digest();  // lower-case, 64 characters
  // The digest as its eight big-endian 32-bit words (instead of hex_digest).
  std::array<std::uint32_t, 8> digest_words();
  // Whether this CPU has the SHA instructions.
  static bool accelerated();

 private:
  void compress(const unsigned char* blocks, std::size_t count);
  bool accelerated_;
  std::array<std::uint32_t, 8> state_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                         0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace qsweep::sweep
