// Derived tables (store/derived_table.hpp): a group of rows that are not one per task (the
// thresholds a refinement found, /thresholds), written whole into a results file, read back by
// the reader like any group but not listed among the method groups, and compared byte by byte.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "qsweep/run/plan_results.hpp"
#include "qsweep/store/derived_table.hpp"
#include "qsweep/store/results_reader.hpp"
#include "store_test_util.hpp"

namespace qsweep::store {
namespace {

using testing::mixed_plan;
using testing::ResultsFileTest;

DerivedTable table_of_two_rows() {
  DerivedTable table;
  table.name = "thresholds";
  table.description = "test rows";
  table.columns = {{"block", "a block", "", ColumnType::i32},
                   {"axis", "an axis", "", ColumnType::str, false, 8},
                   {"threshold", "a value", "1/time", ColumnType::f64},
                   {"points", "a count", "", ColumnType::i64},
                   {"note", "words", "", ColumnType::str, false, 16}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  table.rows = {Row{{std::int64_t{0}, std::string("lambda"), 0.25, std::int64_t{12},
                     std::string("converged")}},
                Row{{std::int64_t{3}, std::string("N"), nan, std::int64_t{-1},
                     std::string("a note longer than sixteen bytes")}}};
  table.attributes = {{"comment", "written by a test"}};
  return table;
}

TEST_F(ResultsFileTest, DerivedTableIsReadLikeAGroupButIsNoMethodGroup) {
  const sweep::Plan plan = mixed_plan();
  run::create_results_file(path_, plan, run::results_layout(plan), provenance(), MPI_COMM_WORLD);
  const DerivedTable table = table_of_two_rows();
  EXPECT_EQ(derived_table_difference(path_, table), "no group /thresholds");
  {
    const ResultsReader reader(path_);
    EXPECT_TRUE(reader.derived_groups().empty());
    EXPECT_THROW(reader.read_table("thresholds"), InputError);
  }
  write_derived_table(path_, table);
  const ResultsReader reader(path_);
  EXPECT_EQ(reader.method_groups(), (std::vector<std::string>{"exact", "simulate", "ldp"}));
  EXPECT_EQ(reader.derived_groups(), std::vector<std::string>{"thresholds"});
  EXPECT_EQ(derived_table_attribute(path_, "thresholds", "comment"), "written by a test");
  EXPECT_NE(derived_table_attribute(path_, "thresholds", kDerivedAttribute), "");
  EXPECT_EQ(derived_table_attribute(path_, "exact", kDerivedAttribute), "");
  const std::vector<TableColumn> read = reader.read_table("thresholds");
  ASSERT_EQ(read.size(), 5u);  // no status column: its rows are not tasks
  EXPECT_EQ(read[0].name, "block");
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(read[0].values), (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(std::get<std::vector<std::string>>(read[1].values),
            (std::vector<std::string>{"lambda", "N"}));
  const auto& threshold = std::get<std::vector<double>>(read[2].values);
  EXPECT_EQ(threshold[0], 0.25);
  EXPECT_TRUE(std::isnan(threshold[1]));
  // Text is cut to its column, as in the method groups.
  EXPECT_EQ(std::get<std::vector<std::string>>(read[4].values)[1],
            fit_text("a note longer than sixteen "
                     "bytes",
                     15));
  EXPECT_EQ(derived_table_difference(path_, table), "");
}

TEST_F(ResultsFileTest, DerivedTableIsReplacedWholeAndComparedByteByByte) {
  const sweep::Plan plan = mixed_plan();
  run::create_results_file(path_, plan, run::results_layout(plan), provenance(), MPI_COMM_WORLD);
  DerivedTable table = table_of_two_rows();
  write_derived_table(path_, table);
  DerivedTable changed = table;
  changed.rows[0].cells[2] = 0.5;
  EXPECT_EQ(derived_table_difference(path_, changed), "/thresholds/threshold differs in row 0");
  changed.rows.push_back(changed.rows[0]);
  EXPECT_NE(derived_table_difference(path_, changed), "");
  DerivedTable other_columns = table;
  other_columns.columns[3].name = "count";
  EXPECT_NE(derived_table_difference(path_, other_columns), "");
  // Written again: the group holds the new rows only.
  write_derived_table(path_, changed);
  EXPECT_EQ(derived_table_difference(path_, changed), "");
  const ResultsReader reader(path_);
  EXPECT_EQ(std::get<std::vector<double>>(reader.read_table("thresholds")[2].values).size(), 3u);
  EXPECT_EQ(reader.derived_groups(), std::vector<std::string>{"thresholds"});
  // A column that is not one value per row is refused.
  DerivedTable ragged = table;
  ragged.columns[2].type = ColumnType::f64_ragged;
  EXPECT_THROW(write_derived_table(path_, ragged), std::logic_error);
}

}  // namespace
}  // namespace qsweep::store
