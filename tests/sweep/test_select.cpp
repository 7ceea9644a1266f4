// `qsweep run --select` (sweep::TaskSelection): conditions on /tasks and method-group parameter
// columns, all of one text and any of several; numbers within 1e-12 relative; bad texts refused
// naming the option.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/sweep/plan.hpp"
#include "qsweep/sweep/select.hpp"

namespace qsweep::sweep {
namespace {

const Plan& plan() {
  static const Plan p = parse_plan(R"(name: select-test
seed: 3
blocks:
  - method: exact
    family: [complete, ring]
    N: 4
    lambda: {linspace: [0.1, 0.3, 3]}
    qmax: 5
  - method: meanfield
    policy: power_of_d
    policy_d: [1, 2]
    lambda: 0.7
)",
                                   "s.yaml");
  return p;
}

std::vector<std::uint64_t> selected(const std::vector<std::string>& texts) {
  const TaskSelection selection(texts);
  std::vector<std::uint64_t> ids;
  for (const Task& task : plan().tasks)
    if (selection.matches(task)) ids.push_back(task.id);
  return ids;
}

TEST(TaskSelection, AllConditionsOfATextAnyOfTheTexts) {
  using Ids = std::vector<std::uint64_t>;
  EXPECT_EQ(selected({"block=1"}), (Ids{6, 7}));
  EXPECT_EQ(selected({"family=ring"}), (Ids{3, 4, 5}));
  // 0.1 + 0.1 from linspace is 0.2 within rounding; a meanfield task has lambda too.
  EXPECT_EQ(selected({"lambda=0.2"}), (Ids{1, 4}));
  EXPECT_EQ(selected({"lambda=0.7,policy_d=2", "family=complete,lambda=0.3"}), (Ids{2, 7}));
  EXPECT_EQ(selected({"method=meanfield"}), (Ids{6, 7}));
  EXPECT_EQ(selected({"key=" + task_key(plan().tasks[5])}), (Ids{5}));
  EXPECT_EQ(selected({"N=5"}), Ids{});
}

TEST(TaskSelection, BadTextsAreRefusedNamingTheOption) {
  const auto message = [](const std::string& text) -> std::string {
    try {
      (void)TaskSelection({text});
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  };
  EXPECT_NE(message("lamda=0.3")
                .find("--select 'lamda=0.3': no parameter column 'lamda' (did you "
                      "mean 'lambda'?)"),
            std::string::npos)
      << message("lamda=0.3");
  EXPECT_NE(message("lambda").find("'lambda' is not COLUMN=VALUE"), std::string::npos);
  EXPECT_NE(message("N=four").find("'four' is not a value of N (an integer)"), std::string::npos);
  EXPECT_NE(message("lambda=0.3,").find("'' is not COLUMN=VALUE"), std::string::npos);
  EXPECT_NE(message("speeds=1").find("speeds holds a list per task"), std::string::npos);
  EXPECT_NE(message("EQ=1").find("no parameter column 'EQ'"), std::string::npos);
}

}  // namespace
}  // namespace qsweep::sweep
