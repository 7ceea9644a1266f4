// Row images (src/store/row_image.hpp): a row alone may be written from its own ragged cells
// (Cells::viewed) instead of a copy; its bytes, counts and checksum are those of the copy, and of
// the image decoded back.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

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

// A viewed image of one row as the file receives it: its values, then its fill.
ColumnImage written(const ColumnImage& image) {
  ColumnImage whole;
  const auto values = image.row(0);
  whole.bytes.assign(values.begin(), values.end());
  for (std::uint64_t k = 0; k < image.fill_count; ++k)
    whole.bytes.insert(whole.bytes.end(), image.fill.begin(), image.fill.end());
  whole.row_start = {0, whole.bytes.size()};
  whole.counts = image.counts;
  return whole;
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
    std::vector<ColumnImage> whole;
    for (std::size_t c = 0; c < layout.size(); ++c) {
      whole.push_back(written(viewed[c]));
      EXPECT_TRUE(same_bytes(whole[c].row(0), copied[c].row(0))) << "row " << i << " column " << c;
      EXPECT_EQ(viewed[c].counts, copied[c].counts) << "row " << i << " column " << c;
    }
    EXPECT_EQ(row_checksum(no_task_columns, no_task_images, 0, viewed, 0),
              row_checksum(no_task_columns, no_task_images, 0, copied, 0));
    EXPECT_EQ(decode_row(layout, whole, 0).cells, decode_row(layout, copied, 0).cells);
  }
  // A viewed image points into its cells: nothing is copied.
  const RowEntries first{{0, &rows[0]}};
  const auto viewed = encode_rows(layout, first, Cells::viewed);
  const auto& values = std::get<std::vector<double>>(rows[0].cells[1]);
  EXPECT_EQ(viewed[1].data(), reinterpret_cast<const unsigned char*>(values.data()));
  EXPECT_TRUE(viewed[1].bytes.empty());
  EXPECT_EQ(viewed[1].fill_count, 0u);
  // Nor is the padding made: the short row is its 2 values, then 2 NaN of fill.
  const RowEntries second{{1, &rows[1]}};
  const auto padded = encode_rows(layout, second, Cells::viewed);
  EXPECT_TRUE(padded[1].bytes.empty());
  EXPECT_EQ(padded[1].row(0).size(), 2 * sizeof(double));
  EXPECT_EQ(padded[1].fill_count, 2u);
  EXPECT_TRUE(std::isnan(std::bit_cast<double>(padded[1].fill)));
  EXPECT_EQ(padded[1].counts, std::vector<std::int64_t>{2});
  EXPECT_EQ(padded[2].fill_count, 0u);  // masks: 0 planned
}

// A Repeated cell is its value and count alone when viewed; copied, it is made value by value,
// and both have the bytes, counts and checksum of the same row with the values listed.
TEST(RowImage, ARepeatedCellIsAFill) {
  const auto layout = columns();
  const std::vector<ColumnLayout> no_task_columns;
  const std::vector<ColumnImage> no_task_images;
  const Row listed = row(2.5, {0.75, 0.75, 0.75, 0.75}, {});
  const Row repeated{{2.5, Repeated{0.75, 4}, std::vector<std::int64_t>{}}};
  const RowEntries entries{{1, &repeated}};
  const RowEntries listed_entries{{1, &listed}};
  const auto reference = encode_rows(layout, listed_entries);
  const auto viewed = encode_rows(layout, entries, Cells::viewed);
  const auto copied = encode_rows(layout, entries);
  EXPECT_TRUE(viewed[1].row(0).empty());
  EXPECT_EQ(viewed[1].fill_count, 4u);
  EXPECT_EQ(std::bit_cast<double>(viewed[1].fill), 0.75);
  for (std::size_t c = 0; c < layout.size(); ++c) {
    EXPECT_TRUE(same_bytes(written(viewed[c]).row(0), reference[c].row(0))) << "column " << c;
    EXPECT_TRUE(same_bytes(copied[c].row(0), reference[c].row(0))) << "column " << c;
    EXPECT_EQ(viewed[c].counts, reference[c].counts) << "column " << c;
    EXPECT_EQ(copied[c].counts, reference[c].counts) << "column " << c;
  }
  const std::uint64_t checksum = row_checksum(no_task_columns, no_task_images, 0, reference, 0);
  EXPECT_EQ(row_checksum(no_task_columns, no_task_images, 0, viewed, 0), checksum);
  EXPECT_EQ(row_checksum(no_task_columns, no_task_images, 0, copied, 0), checksum);
  // Shorter than planned, it is copied with NaN padding (count 3 of 4).
  const Row short_row{{2.5, Repeated{0.75, 3}, std::vector<std::int64_t>{}}};
  const auto short_image = encode_rows(layout, {{1, &short_row}}, Cells::viewed);
  EXPECT_EQ(short_image[1].bytes.size(), 4 * sizeof(double));
  EXPECT_EQ(short_image[1].counts, std::vector<std::int64_t>{3});
  EXPECT_EQ(std::get<std::vector<double>>(decode_row(layout, short_image, 0).cells[1]),
            std::vector<double>(3, 0.75));
}

// A row of more than the gathering buffer (64 KiB) hashes as its bytes made whole would.
TEST(RowImage, ALargeRowHashesAsItsBytes) {
  const std::uint64_t n = 100'000;
  const std::vector<ColumnLayout> layout{ragged("values", ColumnType::f64_ragged, {0, n + 5})};
  const std::vector<ColumnLayout> no_task_columns;
  const std::vector<ColumnImage> no_task_images;
  std::vector<double> values(n);
  for (std::uint64_t k = 0; k < n; ++k) values[k] = static_cast<double>(k) / 3.0;
  const Row r{{values}};
  const RowEntries entries{{0, &r}};
  const auto viewed = encode_rows(layout, entries, Cells::viewed);
  const auto copied = encode_rows(layout, entries);
  EXPECT_EQ(viewed[0].fill_count, 5u);
  // The bytes hashed at once, as docs/results-layout.md defines the checksum: values, padding,
  // then the count.
  std::vector<unsigned char> bytes(copied[0].bytes);
  const std::int64_t count = n;
  bytes.insert(bytes.end(), reinterpret_cast<const unsigned char*>(&count),
               reinterpret_cast<const unsigned char*>(&count) + sizeof count);
  ASSERT_EQ(bytes.size(), (n + 5 + 1) * 8);
  const std::uint64_t expected = XXH3_64bits(bytes.data(), bytes.size());
  EXPECT_EQ(row_checksum(no_task_columns, no_task_images, 0, viewed, 0), expected);
  EXPECT_EQ(row_checksum(no_task_columns, no_task_images, 0, copied, 0), expected);
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
