// The example sweeps in sweeps/ are valid, and the default one is small and covers several
// families with the exact method.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "qsweep/sweep/columns.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

namespace fs = std::filesystem;

TEST(Examples, AllSweepsValidate) {
  std::size_t count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(QSWEEP_SOURCE_DIR) / "sweeps")) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    EXPECT_NO_THROW(load_plan(entry.path().string())) << entry.path();
  }
  EXPECT_GE(count, 1u);
}

TEST(Examples, DefaultSweepIsSmallAndCoversSeveralFamilies) {
  const Plan plan = load_plan(std::string(QSWEEP_SOURCE_DIR) + "/sweeps/default.yaml");
  std::set<model::FamilyKind> families;
  double cost = 0.0;
  for (const Task& t : plan.tasks) {
    EXPECT_EQ(t.method(), Method::exact);
    families.insert(t.system().family.kind);
    cost += t.cost;
  }
  EXPECT_GE(families.size(), 4u);
  EXPECT_LT(cost, 10.0);
  EXPECT_TRUE(plan.unstable_tasks.empty());
}

// docs/sweep-format.md documents every key and every result column (as `name`).
TEST(Docs, EveryKeyAndColumnIsDocumented) {
  std::ifstream in(std::string(QSWEEP_SOURCE_DIR) + "/docs/sweep-format.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  ASSERT_FALSE(doc.empty());
  for (const auto& key : block_keys())
    EXPECT_NE(doc.find("`" + key.name + "`"), std::string::npos) << "key " << key.name;
  for (Method m : kMethods)
    for (const auto& column : group_columns(m))
      EXPECT_NE(doc.find("`" + column.name + "`"), std::string::npos)
          << group_name(m) << " column " << column.name;
  for (const char* top : {"name", "seed", "output", "on_unstable", "max_tasks", "blocks", "zip",
                          "method", "linspace", "logspace", "base", "heavy_traffic"})
    EXPECT_TRUE(doc.find(std::string("`") + top) != std::string::npos ||
                doc.find(std::string("{") + top + ":") != std::string::npos)
        << top;
}

}  // namespace
}  // namespace qsweep::sweep
