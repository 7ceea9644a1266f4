// Every named enum (common/enum_names.hpp): names and values distinct, names round-trip, and a
// value outside the table (a corrupt byte read from a file) is "unknown", not a crash.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "qsweep/common/enum_names.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/ldp/options.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/sim/options.hpp"
#include "qsweep/sweep/execute.hpp"
#include "qsweep/sweep/task.hpp"

namespace qsweep {
namespace {

template <class E>
void check_table(const std::string& what) {
  SCOPED_TRACE(what);
  std::set<std::string_view> names;
  std::set<E> values;
  for (const auto& [value, name] : EnumNames<E>::table) {
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << "name twice: " << name;
    EXPECT_TRUE(values.insert(value).second) << "value twice: " << name;
    EXPECT_EQ(name_of(value), name);
    EXPECT_EQ(parse_name<E>(name), value) << name;
  }
  EXPECT_EQ(enum_names<E>().size(), EnumNames<E>::table.size());
  EXPECT_EQ(parse_name<E>("no-such-name"), std::nullopt);
  EXPECT_EQ(name_of(static_cast<E>(100)), "unknown");
}

TEST(EnumNames, EveryTableIsAOneToOneMap) {
  check_table<model::FamilyKind>("FamilyKind");
  check_table<exact::Engine>("exact::Engine");
  check_table<exact::Policy>("exact::Policy");
  check_table<sim::Policy>("sim::Policy");
  check_table<sim::ServiceKind>("sim::ServiceKind");
  check_table<ldp::Policy>("ldp::Policy");
  check_table<ldp::Estimator>("ldp::Estimator");
  check_table<sweep::Method>("sweep::Method");
  check_table<TaskStatus>("TaskStatus");
}

// The names are a file format: results files store them (method groups, /tasks/status names,
// parameter columns) and sweep files use them, so they never change.
TEST(EnumNames, NamesStoredInFilesAreStable) {
  EXPECT_EQ(enum_names<sweep::Method>(),
            (std::vector<std::string_view>{"exact", "simulate", "ldp", "meanfield"}));
  EXPECT_EQ(name_of(TaskStatus::unstable), "unstable");
  EXPECT_EQ(name_of(model::FamilyKind::explicit_types), "explicit");
  EXPECT_EQ(name_of(sim::Policy::power_of_d), "power_of_d");
}

}  // namespace
}  // namespace qsweep
