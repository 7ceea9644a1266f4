// The registry of families (model/family_registry.hpp): one entry per FamilyKind and per
// FamilyParam, in enumerator order, consistent with the names, FamilyParams and Family.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <variant>

#include "qsweep/common/error.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/model/family_registry.hpp"

namespace qsweep::model {
namespace {

TEST(FamilyRegistry, OneEntryPerFamilyInEnumOrderNamedAsTheEnumNames) {
  const auto all = families();
  ASSERT_EQ(all.size(), EnumNames<FamilyKind>::table.size());
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const FamilyInfo& f = all[i];
    EXPECT_EQ(static_cast<std::size_t>(f.kind), i) << f.name;
    EXPECT_EQ(name_of(f.kind), f.name);
    EXPECT_EQ(&family_info(f.kind), &f);
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    EXPECT_GE(f.min_n, 1) << f.name;
    // An implicit family has every formula; a listed one none (its builder lists its types).
    const bool formulas[] = {f.num_types != nullptr, f.max_type_size != nullptr,
                             f.sample != nullptr, f.enumerate != nullptr};
    for (bool has : formulas) EXPECT_EQ(has, f.implicit()) << f.name;
    // The closed forms of size-symmetric families (stability, lumped chain) are the implicit
    // families' ones.
    EXPECT_EQ(f.size_symmetric, f.implicit()) << f.name;
    if (f.implicit()) {
      EXPECT_EQ(f.exact_weights, nullptr) << f.name;
      EXPECT_EQ(f.listed_count, nullptr) << f.name;
    }
  }
  EXPECT_THROW(family_info(static_cast<FamilyKind>(100)), InputError);
}

TEST(FamilyRegistry, OneEntryPerParameterUsedBySomeFamily) {
  const auto params = family_params();
  const FamilyParams defaults;
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < params.size(); ++i) {
    const FamilyParamInfo& p = params[i];
    EXPECT_EQ(static_cast<std::size_t>(p.id), i) << p.name;
    EXPECT_EQ(&param_info(p.id), &p);
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_NE(p.name, "N");
    EXPECT_FALSE(p.help.empty()) << p.name;
    bool used = false;
    for (const FamilyInfo& f : families()) used = used || f.uses(p.id);
    EXPECT_TRUE(used) << p.name << " is used by no family";
    // Numbers have a column and bounds that hold their default unless they must be given;
    // lists have neither.
    std::visit(
        [&](auto member) {
          using Field = std::decay_t<decltype(defaults.*member)>;
          if constexpr (std::is_arithmetic_v<Field>) {
            EXPECT_FALSE(p.column.empty()) << p.name;
            EXPECT_LT(p.lo, p.hi) << p.name;
            if (!p.required) {
              const auto x = static_cast<double>(defaults.*member);
              EXPECT_TRUE(p.lo_open ? x > p.lo : x >= p.lo) << p.name;
              EXPECT_TRUE(p.hi_open ? x < p.hi : x <= p.hi) << p.name;
            }
          } else {
            EXPECT_TRUE(p.column.empty()) << p.name;
          }
        },
        p.field);
  }
}

TEST(FamilyRegistry, FamilyUsesAgreesWithTheEntries) {
  for (const FamilyInfo& f : families()) {
    const FamilyUses u = family_uses(f.kind);
    EXPECT_EQ(u.d, f.uses(FamilyParam::d)) << f.name;
    EXPECT_EQ(u.eps, f.uses(FamilyParam::eps)) << f.name;
    EXPECT_EQ(u.degree, f.uses(FamilyParam::degree)) << f.name;
    EXPECT_EQ(u.edge_prob, f.uses(FamilyParam::edge_prob)) << f.name;
    EXPECT_EQ(u.graph_seed, f.uses(FamilyParam::graph_seed)) << f.name;
    EXPECT_EQ(u.torus_shape, f.uses(FamilyParam::rows)) << f.name;
    EXPECT_EQ(u.torus_shape, f.uses(FamilyParam::cols)) << f.name;
    EXPECT_EQ(u.tree_edges, f.uses(FamilyParam::tree_edges)) << f.name;
    EXPECT_EQ(u.types, f.uses(FamilyParam::types)) << f.name;
    // A family whose N is derived takes the parameters it is derived from.
    if (f.derived_n != nullptr) {
      EXPECT_NE(f.params, 0U) << f.name;
    }
  }
}

TEST(FamilyRegistry, BelowMinNTheFamilyRefusesNamingTheBound) {
  for (const FamilyInfo& f : families()) {
    if (f.min_n <= 1) continue;
    FamilyParams p;
    p.kind = f.kind;
    p.N = f.min_n - 1;
    p.eps = 0.5;
    p.edge_prob = 0.5;
    try {
      Family family(p);
      ADD_FAILURE() << f.name << " accepted N = " << p.N;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("needs N >= " + std::to_string(f.min_n)),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(FamilyRegistry, ListTextJoinsWithTheLastSeparator) {
  EXPECT_EQ(list_text({}, " and "), "");
  EXPECT_EQ(list_text({"a"}, " and "), "a");
  EXPECT_EQ(list_text({"a", "b"}, " or "), "a or b");
  EXPECT_EQ(list_text({"a", "b", "c"}, " and "), "a, b and c");
  // The closed forms of the size-symmetric families (subset_mass and ExactSubsetMass in
  // stability.cpp, build_chain in exact/symmetric.cpp, the lumped cost in method_exact.cpp) name
  // these three; a new one needs its own there (docs/architecture.md, "Adding a family").
  EXPECT_EQ(family_names([](const FamilyInfo& f) { return f.size_symmetric; }),
            (std::vector<std::string_view>{"independent", "complete", "singletons_full"}));
}

}  // namespace
}  // namespace qsweep::model
