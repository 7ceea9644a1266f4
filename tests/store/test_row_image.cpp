// Row images (src/store/row_image.hpp): a row alone may be written from its own ragged cells
// (Cells::viewed) instead of a copy; its bytes, counts and checksum are those of the copy, and of
// the image decoded back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "../../src/store/row_image.hpp"

namespace qsweep::store::detail {
namespace {

ColumnLayout ragged(const char* name, ColumnType type, std::vector<std::uint64_t> offsets) {
  return {{name, "", "", type}, 0, std::move(offsets)};
}

// Columns of three rows: an f64, a ragged f64 column planned 3, 4 and 2 long, a ragged i64
// column planned 1, 0 and 2 long.
std::vector<ColumnLayout> columns() {
  return {{{"x", "", "", ColumnType::f64}, 0, {}},
          ragged("values", ColumnType::f64_ragged, {0, 3, 7, 9}),
          ragged("masks", ColumnType::i64_ragged, {0, 1, 1, 3})};
}

Row row(double x, std::vector<double> values, std::vector<std::int64_t> masks) {
  return Row{{x, std::move(values), std::move(masks)}};
}

bool same_bytes(std::span<const unsigned char> a, std::span<const unsigned char> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

TEST(RowImage, AViewedRowHasTheBytesOfItsCopy) {
  const auto layout = columns();
  const std::vector<ColumnLayout> no_task_columns;
  const std::vector<ColumnImage> no_task_images;
  const Row rows[] = {row(1.5, {1.0, 2.0, 3.0}, {5}),           // fills both: viewed
                      row(2.5, {4.0, 5.0}, {}),                 // short of 4: padded, copied
                      row(-1.0, {6.0, 7.0}, {-3, 1LL << 62})};  // fills both
  const std::uint64_t numbers[] = {0, 1, 2};
  for (std::size_t i = 0; i < std::size(rows); ++i) {
    const RowEntries entries{{numbers[i], &rows[i]}};
    const auto copied = encode_rows(layout, entries);
    const auto viewed = encode_rows(layout, entries, Cells::viewed);
    ASSERT_EQ(viewed.size(), layout.size());
    for (std::size_t c = 0; c < layout.size(); ++c) {
      EXPECT_TRUE(same_bytes(viewed[c].row(0), copied[c].row(0))) << "row " << i << " column " << c;
      EXPECT_EQ(viewed[c].counts, copied[c].counts) << "row " << i << " column " << c;
      EXPECT_EQ(viewed[c].row_start, copied[c].row_start) << "row " << i << " column " << c;
    }
    EXPECT_EQ(row_checksum(no_task_columns, no_task_images, 0, viewed, 0),
              row_checksum(no_task_columns, no_task_images, 0, copied, 0));
    EXPECT_EQ(decode_row(layout, viewed, 0).cells, decode_row(layout, copied, 0).cells);
  }
  // Where a cell fills its planned length the image points into it: nothing is copied.
  const RowEntries first{{0, &rows[0]}};
  const auto viewed = encode_rows(layout, first, Cells::viewed);
  const auto& values = std::get<std::vector<double>>(rows[0].cells[1]);
  EXPECT_EQ(viewed[1].data(), reinterpret_cast<const unsigned char*>(values.data()));
  EXPECT_TRUE(viewed[1].bytes.empty());
  // The padded row is copied, NaN after its values.
  const RowEntries second{{1, &rows[1]}};
  const auto padded = encode_rows(layout, second, Cells::viewed);
  EXPECT_EQ(padded[1].bytes.size(), 4 * sizeof(double));
  EXPECT_EQ(padded[1].counts, std::vector<std::int64_t>{2});
}

// Several rows are copied back to back even when viewed cells are allowed.
TEST(RowImage, SeveralRowsAreCopied) {
  const auto layout = columns();
  const Row a = row(1.0, {1.0, 2.0, 3.0}, {5});
  const Row b = row(2.0, {4.0, 5.0, 6.0, 7.0}, {});
  const RowEntries entries{{0, &a}, {1, &b}};
  const auto viewed = encode_rows(layout, entries, Cells::viewed);
  const auto copied = encode_rows(layout, entries);
  for (std::size_t c = 0; c < layout.size(); ++c) {
    EXPECT_EQ(viewed[c].bytes, copied[c].bytes) << "column " << c;
    EXPECT_TRUE(viewed[c].cell.empty()) << "column " << c;
  }
  EXPECT_EQ(copied[1].bytes.size(), 7 * sizeof(double));
  EXPECT_EQ(decode_row(layout, viewed, 1).cells, b.cells);
}

}  // namespace
}  // namespace qsweep::store::detail
