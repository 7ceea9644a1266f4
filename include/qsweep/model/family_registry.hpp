#pragma once
// The families as data (src/model/families.cpp): one entry per parameter (its field of
// FamilyParams, bounds, help, result column and text) and one entry per family (its name, the
// parameters it takes, its size check, builder and traits). The family's checks and building
// (Family), the stability check, the exact engines' choice and cost, and the sweep's keys,
// messages, descriptions and parameter columns (src/sweep/method_system.cpp) read them.
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "qsweep/common/rng.hpp"
#include "qsweep/model/family.hpp"

namespace qsweep::model {

namespace detail {
struct FamilyBuild;    // what a builder fills (src/model/family_detail.hpp)
struct ListedWeights;  // the exact probabilities of listed types (src/model/family_detail.hpp)
}  // namespace detail

// A parameter's field of FamilyParams. Its type is the key's kind: int and std::uint64_t
// integers, double a real number, the lists structured values (their own parsers in the sweep).
using ParamField =
    std::variant<int FamilyParams::*, double FamilyParams::*, std::uint64_t FamilyParams::*,
                 std::vector<std::pair<int, int>> FamilyParams::*,
                 std::vector<ExplicitType> FamilyParams::*>;

struct FamilyParamInfo {
  FamilyParam id;
  std::string_view name;  // its key and its result column
  ParamField field;
  // One line: what it means (--help, docs); "{families}" stands for the families that take it
  // (param_help()).
  std::string_view help;
  // The range of a number, checked on every value of the key (also generated ones).
  double lo = -1e300, hi = 1e300;
  bool lo_open = false, hi_open = false;
  bool required = false;  // no default: a block with a family that takes it must give it
  // Its result column's description ("" = no column); the families that do not take it store
  // -1 (integers) or NaN (numbers).
  std::string_view column;
  // Its part of a task's description (" d=3", "" if none); called for the families that take it.
  std::string (*text)(const FamilyParams&) = nullptr;
  // False where a family takes it but it has no effect (graph_seed with a given tree): its
  // column then stores -1 / NaN and its text is not called. nullptr = always in effect.
  bool (*in_effect)(const FamilyParams&) = nullptr;
};

// A set of parameters (bit i: FamilyParam i).
using ParamSet = std::uint32_t;
constexpr ParamSet param_set(std::initializer_list<FamilyParam> params) {
  ParamSet set = 0;
  for (FamilyParam p : params) set |= ParamSet{1} << static_cast<unsigned>(p);
  return set;
}

// A family whose N follows from its other parameters (torus: rows x cols): the key N does not
// apply to it.
struct DerivedN {
  std::string_view formula;                    // "rows x cols"
  std::int64_t (*count)(const FamilyParams&);  // N from the parameters (no overflow)
  std::string (*shape)(const FamilyParams&);   // "torus 3 x 4", for messages
};

// The exact general engine's cost: it visits about base^(N + shift) unions of types.
struct UnionGrowth {
  double base = 2.0;
  std::string_view base_text = "2";  // for the cost formula: "2^N"
  int shift = 0;
};

struct FamilyInfo {
  FamilyKind kind;
  std::string_view name;  // in sweep files, messages and results (EnumNames<FamilyKind>)
  ParamSet params = 0;    // the parameters it takes besides N
  int min_n = 1;          // smallest N it is defined for ("needs N >= n")
  const DerivedN* derived_n = nullptr;  // nullptr: N is given
  // How many job types the builder will list, from the parameters alone (checked against
  // kMaxListedJobTypes before anything is allocated); nullptr: at most 2 N.
  double (*listed_count)(const FamilyParams&) = nullptr;
  // Checks the family's own parameters (after N >= min_n and the size check) and lists its
  // types (a listed family) or prepares sampling (an implicit one); fails with fail_family().
  void (*build)(const FamilyParams&, detail::FamilyBuild&) = nullptr;

  // ---- traits ----
  // Size-symmetric: the subset mass g(U) = sum_{S subset U} p_S depends only on |U|. The
  // stability check then minimises over the N prefixes (closed forms subset_mass and
  // ExactSubsetMass in src/model/stability.cpp) and the exact symmetric engine lumps the chain
  // by union size (build_chain in src/exact/symmetric.cpp, its cost in
  // src/sweep/method_exact.cpp), with identical speeds. The one predicate of both.
  bool size_symmetric = false;
  UnionGrowth unions;
  // Listed families with other than uniform probabilities: their exact values p_t = w_t / W for
  // the stability check (nullptr: uniform over the listed types), and the bound on the
  // relative error of the floating-point ones in units of 2^-53 (nullptr: 4).
  void (*exact_weights)(const Family&, detail::ListedWeights&) = nullptr;
  double (*probability_roundings)(const FamilyParams&) = nullptr;

  // ---- implicit families (not listed: sampled and enumerated by formula) ----
  double (*num_types)(const FamilyParams&) = nullptr;
  int (*max_type_size)(const FamilyParams&) = nullptr;
  // Draws one type into `servers` (cleared); `tuples` as the builder set it.
  void (*sample)(const FamilyParams&, std::uint64_t tuples, Rng&, std::vector<int>&) = nullptr;
  void (*enumerate)(const FamilyParams&, std::vector<JobType>&) = nullptr;

  bool uses(FamilyParam p) const { return (params >> static_cast<unsigned>(p)) & 1U; }
  bool implicit() const { return num_types != nullptr; }
};

// Every family, in FamilyKind order (the order of listings).
std::span<const FamilyInfo> families();
// The entry of `kind`; InputError for a value outside the enum (a corrupt byte).
const FamilyInfo& family_info(FamilyKind kind);

// Every parameter, in FamilyParam order (the order of keys and columns).
std::span<const FamilyParamInfo> family_params();
const FamilyParamInfo& param_info(FamilyParam param);
// Its help with "{families}" replaced by the families that take it ("a, b, c").
std::string param_help(FamilyParam param);

// The names of the families with `trait`, in registry order.
std::vector<std::string_view> family_names(bool (*trait)(const FamilyInfo&));
// "a", "a and b", "a, b and c" with `last` = " and " (", " joins the others).
std::string list_text(const std::vector<std::string_view>& names, std::string_view last);

}  // namespace qsweep::model
