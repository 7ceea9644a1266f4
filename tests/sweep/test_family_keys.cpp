// The family keys of exact and simulate blocks come from the model's registry
// (model/family_registry.hpp): one key per parameter, its help, and messages that name the
// families that take it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "plan_error.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/model/family_registry.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace {

using testing::error_of;

// "family a", "families a, b and c": the families that take `param`, in registry order.
std::string users(model::FamilyParam param) {
  std::vector<std::string_view> names;
  for (const model::FamilyInfo& f : model::families())
    if (f.uses(param)) names.push_back(f.name);
  return (names.size() == 1 ? "family " : "families ") + model::list_text(names, " and ");
}

// A value inside the parameter's bounds (numbers only).
std::string valid_value(const model::FamilyParamInfo& p) {
  return std::to_string((p.lo + std::min(p.hi, p.lo + 2)) / 2);
}

// ", name: value" for every numeric parameter `f` takes except `skip`.
std::string numbers_of(const model::FamilyInfo& f, const model::FamilyParamInfo* skip) {
  std::string text;
  for (const model::FamilyParamInfo& p : model::family_params())
    if (f.uses(p.id) && &p != skip && p.field.index() < 3)
      text += ", " + std::string(p.name) + ": " + valid_value(p);
  return text;
}

TEST(FamilyKeys, OneKeyPerParameterWithItsHelp) {
  const auto keys = block_keys();
  for (const model::FamilyParamInfo& p : model::family_params()) {
    bool found = false;
    for (const KeyInfo& k : keys)
      if (k.name == p.name) {
        found = true;
        EXPECT_EQ(k.help, model::param_help(p.id));
        EXPECT_EQ(k.help.find('{'),
                  k.name == "types" ? k.help.find("{servers") : std::string::npos);
        EXPECT_EQ(k.methods, "exact, simulate");
      }
    EXPECT_TRUE(found) << p.name;
  }
}

TEST(FamilyKeys, AParameterOfAnotherFamilyNamesTheFamiliesThatTakeIt) {
  EXPECT_EQ(users(model::FamilyParam::eps),
            "families hetero_ring, tree_singletons and singletons_full");
  EXPECT_EQ(users(model::FamilyParam::d), "family complete");
  for (const model::FamilyParamInfo& p : model::family_params()) {
    if (p.field.index() >= 3) continue;  // the lists: values of their own shape
    const std::string yaml = "name: x\nblocks: [{method: exact, family: ring, N: 4, lambda: 0.5, " +
                             std::string(p.name) + ": " + valid_value(p) + "}]";
    const std::string error = error_of(yaml);
    EXPECT_NE(error.find("key '" + std::string(p.name) +
                         "' applies to no task of this block (it "
                         "is used by " +
                         users(p.id) + ")"),
              std::string::npos)
        << error;
  }
}

TEST(FamilyKeys, ARequiredParameterIsMissingForTheFamiliesThatTakeIt) {
  for (const model::FamilyInfo& f : model::families())
    for (const model::FamilyParamInfo& p : model::family_params()) {
      if (!p.required || !f.uses(p.id)) continue;
      const std::string N = f.derived_n != nullptr ? "" : ", N: 6";
      const std::string error =
          error_of("name: x\nblocks: [{method: exact, family: " + std::string(f.name) + N +
                   numbers_of(f, &p) + ", lambda: 0.5}]");
      EXPECT_NE(error.find("key '" + std::string(p.name) + "' is missing (required for " +
                           users(p.id) + ")"),
                std::string::npos)
          << f.name << ": " << error;
    }
}

TEST(FamilyKeys, NIsNotAKeyOfAFamilyWhoseNIsDerived) {
  for (const model::FamilyInfo& f : model::families()) {
    if (f.derived_n == nullptr) continue;
    const std::string error =
        error_of("name: x\nblocks: [{method: exact, family: " + std::string(f.name) + ", N: 9" +
                 numbers_of(f, nullptr) + ", lambda: 0.5}]");
    EXPECT_NE(error.find("every family except " + std::string(f.name) +
                         " (N = " + std::string(f.derived_n->formula) + ")"),
              std::string::npos)
        << error;
  }
}

}  // namespace
}  // namespace qsweep::sweep
