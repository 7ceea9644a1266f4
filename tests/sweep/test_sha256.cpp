// SHA-256 against FIPS 180-4 example vectors and, for the padding boundaries (55, 56, 63, 64,
// 65, 119, 120 bytes), digests computed with coreutils sha256sum.
#include <gtest/gtest.h>

#include <string>

#include "qsweep/sweep/sha256.hpp"

namespace qsweep::sweep {
namespace {

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PaddingBoundariesMatchCoreutils) {
  const std::pair<std::size_t, const char*> cases[] = {
      {55, "85528b5baff5639cb8e7daca79d085ac29ac0978e873ed7527158616b2b6c379"},
      {56, "f8ce2f8d6990c639668fe404262f35ed72d8bb145ad6bae786af7284447386df"},
      {63, "9b49777003a4143d8c3f4d3002eb631c6bda8b030a3ccc87f8a21d5f61c89e87"},
      {64, "ee8e658590c9a5e119400a774415a01db104de1ee6e2c29ec69aa73ef46544d2"},
      {65, "2b6c3f7f12b1b12fc5409626dc4e5302d8d37082cbeddea7755eac43aba039c8"},
      {119, "c8bc8a6e9626586bb888ad131d44ed2bd37fc608e902904ade3c566c4208e6ca"},
      {120, "77a2d49d72a11e41678c51f8f0cb67f5cb570f30370c3aeffe266a0d1ee43209"}};
  for (const auto& [length, digest] : cases)
    EXPECT_EQ(sha256_hex(std::string(length, 'q')), digest) << length;
}

TEST(Sha256, IncrementalEqualsOneShot) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += static_cast<char>('a' + i * 7 % 26);
  for (std::size_t chunk : {1u, 3u, 63u, 64u, 65u, 500u}) {
    Sha256 sha;
    for (std::size_t at = 0; at < text.size(); at += chunk)
      sha.update(std::string_view(text).substr(at, chunk));
    EXPECT_EQ(sha.hex_digest(), sha256_hex(text)) << chunk;
  }
}

// The SHA instructions (where this CPU has them) and the portable code give the same digests, on
// every length up to 300 bytes (every padding case, several blocks) and in pieces.
TEST(Sha256, PortableEqualsAccelerated) {
  Sha256 portable_abc(true);
  portable_abc.update("abc");
  EXPECT_EQ(portable_abc.hex_digest(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string text;
  for (std::size_t length = 0; length <= 300; ++length) {
    Sha256 portable(true), fast;
    portable.update(text);
    fast.update(std::string_view(text).substr(0, length / 2));
    fast.update(std::string_view(text).substr(length / 2));
    EXPECT_EQ(portable.hex_digest(), fast.hex_digest()) << length;
    text += static_cast<char>(length * 37 % 251);
  }
  if (!Sha256::accelerated()) GTEST_SKIP() << "this CPU has no SHA instructions: one code path";
}

}  // namespace
}  // namespace qsweep::sweep
