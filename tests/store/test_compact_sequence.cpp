// CompactSequence (include/qsweep/store/layout.hpp): the task ids of a group and the offsets of a
// ragged column, held as runs of arithmetic progressions or as the values; either way it reads
// back the values pushed.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "qsweep/store/layout.hpp"

namespace qsweep::store {
namespace {

void expect_holds(const CompactSequence& sequence, const std::vector<std::uint64_t>& values) {
  ASSERT_EQ(sequence.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(sequence[i], values[i]) << i;
  EXPECT_EQ(sequence.values(), values);
  if (!values.empty()) {
    EXPECT_EQ(sequence.back(), values.back());
  }
}

TEST(CompactSequence, ReadsBackRunsOfEqualSteps) {
  std::vector<std::uint64_t> values;
  for (std::uint64_t i = 0; i < 100000; ++i) values.push_back(3 * i);      // offsets of 3 each
  for (std::uint64_t i = 0; i < 50000; ++i) values.push_back(300000 + i);  // then of 1 each
  for (std::uint64_t i = 0; i < 10; ++i) values.push_back(350000);         // then of 0
  const CompactSequence sequence(values);
  expect_holds(sequence, values);
  EXPECT_LT(sequence.bytes(), 1024U);  // three runs, not 8 bytes a value
}

TEST(CompactSequence, StepsDownAndSingleValuesReadBack) {
  // A row number per task, restarting where tasks of another group come between (row_of).
  const std::vector<std::uint64_t> values{0, 1, 2, 0, 1, 3, 2, 7, 7, 5};
  expect_holds(CompactSequence(values), values);
  expect_holds(CompactSequence(std::vector<std::uint64_t>{42}), {42});
  expect_holds(CompactSequence(), {});
}

TEST(CompactSequence, TurnsIntoValuesWhenRunsWouldTakeMoreRoom) {
  std::vector<std::uint64_t> values;
  std::uint64_t offset = 0;
  for (std::uint64_t i = 0; i < 10000; ++i) {  // lengths 1, 2, 5, 1, 2, 5, ...
    values.push_back(offset);
    offset += i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : 5;
  }
  const CompactSequence sequence(values);
  expect_holds(sequence, values);
  EXPECT_LE(sequence.bytes(), 2 * values.size() * sizeof(std::uint64_t));
}

TEST(CompactSequence, LowerBoundOfAscendingValues) {
  const CompactSequence ids(std::vector<std::uint64_t>{2, 3, 4, 10, 11, 20});
  EXPECT_EQ(ids.lower_bound(0), 0U);
  EXPECT_EQ(ids.lower_bound(3), 1U);
  EXPECT_EQ(ids.lower_bound(5), 3U);
  EXPECT_EQ(ids.lower_bound(11), 4U);
  EXPECT_EQ(ids.lower_bound(12), 5U);
  EXPECT_EQ(ids.lower_bound(21), 6U);
}

}  // namespace
}  // namespace qsweep::store
