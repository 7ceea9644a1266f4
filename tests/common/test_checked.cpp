// Overflow-checked integer arithmetic at the edges of the types.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "qsweep/common/checked.hpp"

namespace qsweep {
namespace {

TEST(Checked, AddReportsOverflowInsteadOfWrapping) {
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(checked_add<std::int64_t>(max - 1, 1), max);
  EXPECT_FALSE(checked_add<std::int64_t>(max, 1));
  // The initial_counts case: two maxima and 3 wrap to 1 in 64-bit arithmetic.
  const auto two = checked_add<std::int64_t>(max, max);
  EXPECT_FALSE(two);
  EXPECT_EQ(checked_add<std::int64_t>(-5, 3), -2);
  EXPECT_FALSE(checked_add<std::uint64_t>(std::numeric_limits<std::uint64_t>::max(), 1));
}

TEST(Checked, MulReportsOverflowInsteadOfWrapping) {
  // 2^32 * 2^32 wraps to 0 in uint64; 2^32 * (2^32 - 1) just fits.
  constexpr std::uint64_t two32 = std::uint64_t{1} << 32;
  EXPECT_FALSE(checked_mul(two32, two32));
  EXPECT_EQ(checked_mul(two32, two32 - 1), std::numeric_limits<std::uint64_t>::max() - two32 + 1);
  EXPECT_EQ(checked_mul<std::uint64_t>(0, two32), 0u);
  EXPECT_FALSE(checked_mul<std::int64_t>(std::numeric_limits<std::int64_t>::min(), -1));
  EXPECT_EQ(checked_mul<std::int64_t>(-3, 7), -21);
}

}  // namespace
}  // namespace qsweep
