#include "qsweep/sweep/sha256.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define QSWEEP_SHA_NI 1
#endif

#include <algorithm>
#include <cstring>

namespace qsweep::sweep {
namespace {

constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// One 64-byte block into `state` (FIPS 180-4, 6.2.2).
void compress_portable(std::array<std::uint32_t, 8>& state, const unsigned char* block) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i)
    w[i] = static_cast<std::uint32_t>(block[4 * i]) << 24 |
           static_cast<std::uint32_t>(block[4 * i + 1]) << 16 |
           static_cast<std::uint32_t>(block[4 * i + 2]) << 8 |
           static_cast<std::uint32_t>(block[4 * i + 3]);
  for (std::size_t i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = state;
  for (std::size_t i = 0; i < 64; ++i) {
    const std::uint32_t t1 =
        h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const std::uint32_t t2 =
        (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, h};
  for (std::size_t i = 0; i < 8; ++i) state[i] += add[i];
}

#ifdef QSWEEP_SHA_NI
// The same with the SHA extensions (Intel's reference sequence): the state as ABEF and CDGH
// vectors, two rounds per instruction, four message words per vector.
__attribute__((target("sha,sse4.1"))) void compress_sha_ni(std::array<std::uint32_t, 8>& state,
                                                           const unsigned char* data,
                                                           std::size_t count) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  const auto load = [](const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); };
  const __m128i cdab = _mm_shuffle_epi32(load(&state[0]), 0xB1);
  const __m128i efgh = _mm_shuffle_epi32(load(&state[4]), 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; count > 0; --count, data += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];  // message words 4i..4i+3, for i mod 4 (std::array drops its alignment)
    for (std::size_t i = 0; i < 16; ++i) {
      __m128i& words = w[i % 4];
      if (i < 4) {
        words = _mm_shuffle_epi8(load(data + 16 * i), byte_swap);
      } else {
        const __m128i last = w[(i - 1) % 4];
        words = _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(words, w[(i - 3) % 4]),
                                                   _mm_alignr_epi8(last, w[(i - 2) % 4], 4)),
                                     last);
      }
      const __m128i message = _mm_add_epi32(words, load(&kRound[4 * i]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, message);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(message, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  const __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[0]), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(&state[4]), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

}  // namespace

bool Sha256::accelerated() {
#ifdef QSWEEP_SHA_NI
  static const bool has_sha = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    const bool sse41 = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_1) != 0;
    return sse41 && __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (ebx & bit_SHA) != 0;
  }();
  return has_sha;
#else
  return false;
#endif
}

Sha256::Sha256(bool portable) : accelerated_(!portable && accelerated()) {}

void Sha256::compress(const unsigned char* blocks, std::size_t count) {
#ifdef QSWEEP_SHA_NI
  if (accelerated_) return compress_sha_ni(state_, blocks, count);
#endif
  for (; count > 0; --count, blocks += 64) compress_portable(state_, blocks);
}

void Sha256::update(std::string_view data) {
  total_bytes_ += data.size();
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  std::size_t size = data.size();
  if (buffered_ > 0) {  // complete the partial block first
    const std::size_t take = std::min(size, 64 - buffered_);
    std::memcpy(buffer_.data() + buffered_, bytes, take);
    buffered_ += take;
    bytes += take;
    size -= take;
    if (buffered_ < 64) return;
    compress(buffer_.data(), 1);
    buffered_ = 0;
  }
  compress(bytes, size / 64);
  bytes += size / 64 * 64;
  size %= 64;
  std::memcpy(buffer_.data(), bytes, size);
  buffered_ = size;
}

std::array<std::uint32_t, 8> Sha256::digest_words() {
  // Padding: 0x80, zeros up to 56 mod 64, then the message length in bits, big-endian.
  const std::uint64_t bits = total_bytes_ * 8;
  std::array<char, 72> padding{};
  padding[0] = static_cast<char>(0x80);
  const std::size_t zeros = (buffered_ < 56 ? 56 : 120) - buffered_ - 1;
  for (int i = 0; i < 8; ++i)
    padding[1 + zeros + static_cast<std::size_t>(i)] = static_cast<char>(bits >> (56 - 8 * i));
  update(std::string_view(padding.data(), 1 + zeros + 8));
  return state_;
}

std::string Sha256::hex_digest() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(64);
  for (std::uint32_t word : digest_words())
    for (int shift = 28; shift >= 0; shift -= 4) hex += kHex[(word >> shift) & 0xf];
  return hex;
}

std::string sha256_hex(std::string_view data) {
  Sha256 sha;
  sha.update(data);
  return sha.hex_digest();
}

}  // namespace qsweep::sweep
