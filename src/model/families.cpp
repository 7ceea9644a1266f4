// The registry of families (include/qsweep/model/family_registry.hpp): the parameter catalogue,
// the helpers of the families' code, then the entries, one per family, from families.def.
// Adding a family is its entry there; a new parameter is an enumerator of FamilyParam, its field
// of FamilyParams (family.hpp) and its entry in the catalogue below (docs/architecture.md,
// "Adding a family").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "family_detail.hpp"
#include "graphs.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/model/family_registry.hpp"
#include "qsweep/model/sampling.hpp"

namespace qsweep::model {

void detail::fail_family(const FamilyParams& p, const std::string& what) {
  throw InputError(fmt::format("family {} with N = {}: {}", name_of(p.kind), p.N, what));
}

namespace {

using detail::Dyadic;
using detail::Edge;
using detail::fail_family;
using detail::FamilyBuild;
using detail::ListedWeights;
using P = FamilyParam;

constexpr double kIntMax = std::numeric_limits<int>::max();

// Designated initializers leave the unnamed members at their defaults, as intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

// ---- the parameters ----------------------------------------------------------------------------

constexpr std::array kParams = std::to_array<FamilyParamInfo>({
    {.id = P::d,
     .name = "d",
     .field = &FamilyParams::d,
     .help = "servers per job type of the {families} family (default 2)",
     .lo = 1,
     .hi = kIntMax,
     .column = "servers per type of the complete family (-1: other family)",
     .text = [](const FamilyParams& p) { return fmt::format(" d={}", p.d); }},
    {.id = P::eps,
     .name = "eps",
     .field = &FamilyParams::eps,
     .help = "asymmetry parameter of {families}",
     .lo = 0,
     .hi = 1,
     .lo_open = true,
     .hi_open = true,
     .required = true,
     .column = "asymmetry parameter eps (NaN: not used by the family)",
     .text = [](const FamilyParams& p) { return fmt::format(" eps={:g}", p.eps); }},
    {.id = P::degree,
     .name = "degree",
     .field = &FamilyParams::degree,
     .help = "degree of the {families} graph (default 3)",
     .lo = 1,
     .hi = kIntMax,
     .column = "degree of random_regular (-1: other family)",
     .text = [](const FamilyParams& p) { return fmt::format(" degree={}", p.degree); }},
    {.id = P::edge_prob,
     .name = "edge_prob",
     .field = &FamilyParams::edge_prob,
     .help = "edge probability of the {families} graph",
     .lo = 0,
     .hi = 1,
     .lo_open = true,
     .required = true,
     .column = "edge probability of erdos_renyi (NaN: other family)",
     .text = [](const FamilyParams& p) { return fmt::format(" edge_prob={:g}", p.edge_prob); }},
    {.id = P::graph_seed,
     .name = "graph_seed",
     .field = &FamilyParams::graph_seed,
     .help = "seed of the random graph or tree (default 1)",
     .lo = 0,
     .hi = 0x1.0p63,
     .hi_open = true,
     .column = "seed of the random graph or tree (-1: none)",
     .text = [](const FamilyParams& p) { return fmt::format(" graph_seed={}", p.graph_seed); },
     .in_effect = [](const FamilyParams& p) { return p.tree_edges.empty(); }},
    {.id = P::rows,
     .name = "rows",
     .field = &FamilyParams::rows,
     .help = "rows of the {families}",
     .lo = 3,
     .hi = kIntMax,
     .required = true,
     .column = "torus rows (-1: other family)",
     .text = [](const FamilyParams& p) { return fmt::format(" ({}x{})", p.rows, p.cols); }},
    {.id = P::cols,
     .name = "cols",
     .field = &FamilyParams::cols,
     .help = "columns of the {families}",
     .lo = 3,
     .hi = kIntMax,
     .required = true,
     .column = "torus columns (-1: other family)"},
    {.id = P::tree_edges,
     .name = "tree_edges",
     .field = &FamilyParams::tree_edges,
     .help = "the tree of {families} as [[i, j], ...] (default: random from graph_seed)",
     .text = [](const FamilyParams&
                    p) { return std::string(p.tree_edges.empty() ? "" : " (given tree)"); }},
    {.id = P::types,
     .name = "types",
     .field = &FamilyParams::types,
     .help = "job types of the {families} family: [{servers: [1, 2], p: 0.5}, ...]",
     .required = true,
     .text = [](const FamilyParams& p) { return fmt::format(" ({} types)", p.types.size()); }},
});

// ---- what the families share -------------------------------------------------------------------

void require_eps(const FamilyParams& p) {
  if (!(p.eps > 0.0 && p.eps < 1.0))
    fail_family(p, fmt::format("eps = {} is outside (0, 1); expected a value strictly between 0 "
                               "and 1",
                               p.eps));
}

// Binomial coefficient as a double; the running product is exact while it fits in 53 bits,
// so small families get p = 1 / C(N, d) to the last bit.
double binomial(int n, int k) {
  if (k < 0 || k > n) return 0.0;
  k = std::min(k, n - k);
  double c = 1.0;
  for (int i = 1; i <= k; ++i) c = c * (n - k + i) / i;
  return std::round(c) < 0x1p53 ? std::round(c) : c;
}

ServerMask bit(int n) { return ServerMask{1} << n; }

// The general engine's unions on a cycle or path: the sets without an isolated server, about
// psi^N with psi = 1.7549 (the real root of x^3 = 2x^2 - x + 1); on a star the sets holding the
// centre, 2^(N-1); every other family 2^N (with singletons or dense types nearly all sets; an
// upper bound for other graphs).
constexpr UnionGrowth kCycleUnions{1.7548776662466927, "1.755", 0};
constexpr UnionGrowth kStarUnions{2.0, "2", -1};

constexpr DerivedN kTorusN{
    .formula = "rows x cols",
    .count = [](const FamilyParams& p) { return std::int64_t{p.rows} * p.cols; },
    .shape = [](const FamilyParams& p) { return fmt::format("torus {} x {}", p.rows, p.cols); }};

// ---- the families (include/qsweep/model/families.def) ---------------------------------------

constexpr std::array kFamilies = std::to_array<FamilyInfo>({
#define QSWEEP_FAMILY(kind_, ...) {.kind = FamilyKind::kind_, __VA_ARGS__},
#include "qsweep/model/families.def"
#undef QSWEEP_FAMILY
});

#pragma GCC diagnostic pop

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kParams.size(); ++i)
    if (static_cast<std::size_t>(kParams[i].id) != i) return false;
  return kParams.size() <= 32;
}
static_assert(in_enum_order(),
              "one catalogue entry per FamilyParam, in enumerator order (at most 32)");

constexpr auto kNames = [] {
  std::array<EnumName<FamilyKind>, kFamilies.size()> names{};
  for (std::size_t i = 0; i < kFamilies.size(); ++i)
    names[i] = {kFamilies[i].kind, kFamilies[i].name};
  return names;
}();

}  // namespace

std::span<const FamilyInfo> families() { return kFamilies; }

const FamilyInfo& family_info(FamilyKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  if (i >= kFamilies.size())
    throw InputError(fmt::format("unknown family (value {})", static_cast<int>(kind)));
  return kFamilies[i];
}

std::span<const FamilyParamInfo> family_params() { return kParams; }

const FamilyParamInfo& param_info(FamilyParam param) {
  return kParams[static_cast<std::size_t>(param)];
}

std::vector<std::string_view> family_names(bool (*trait)(const FamilyInfo&)) {
  std::vector<std::string_view> names;
  for (const FamilyInfo& f : kFamilies)
    if (trait(f)) names.push_back(f.name);
  return names;
}

std::string list_text(const std::vector<std::string_view>& names, std::string_view last) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? last : std::string_view(", ");
    text += names[i];
  }
  return text;
}

std::string param_help(FamilyParam param) {
  const FamilyParamInfo& info = param_info(param);
  std::vector<std::string_view> users;
  for (const FamilyInfo& f : kFamilies)
    if (f.uses(param)) users.push_back(f.name);
  std::string help(info.help);
  constexpr std::string_view kPlaceholder = "{families}";
  if (const auto at = help.find(kPlaceholder); at != std::string::npos)
    help.replace(at, kPlaceholder.size(), list_text(users, ", "));
  return help;
}

FamilyUses family_uses(FamilyKind kind) {
  const FamilyInfo& f = family_info(kind);
  FamilyUses u;
  u.d = f.uses(P::d);
  u.eps = f.uses(P::eps);
  u.degree = f.uses(P::degree);
  u.edge_prob = f.uses(P::edge_prob);
  u.graph_seed = f.uses(P::graph_seed);
  u.torus_shape = f.uses(P::rows) || f.uses(P::cols);
  u.tree_edges = f.uses(P::tree_edges);
  u.types = f.uses(P::types);
  return u;
}

}  // namespace qsweep::model

constinit const std::span<const qsweep::EnumName<qsweep::model::FamilyKind>>
    qsweep::EnumNames<qsweep::model::FamilyKind>::table{qsweep::model::kNames};
