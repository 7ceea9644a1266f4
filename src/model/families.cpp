// The registry of families (include/qsweep/model/family_registry.hpp): the parameter catalogue,
// then one entry per family. Adding a family is an enumerator of FamilyKind (family.hpp) and
// its entry below; a new parameter is an enumerator of FamilyParam, its field of FamilyParams
// (family.hpp) and its entry in the catalogue (docs/architecture.md, "Adding a family").
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
     .hi = 0x1.0p63 - 1024,
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

// ---- the families, in FamilyKind order ---------------------------------------------------------

constexpr std::array kFamilies =
    std::to_array<FamilyInfo>({
        {.kind = FamilyKind::independent,
         .name = "independent",
         .size_symmetric = true,
         .num_types = [](const FamilyParams& p) { return static_cast<double>(p.N); },
         .max_type_size = [](const FamilyParams&) { return 1; },
         .sample =
             [](const FamilyParams& p, std::uint64_t, Rng& rng, std::vector<int>& servers) {
               servers.push_back(static_cast<int>(rng.below(static_cast<std::uint64_t>(p.N))));
             },
         .enumerate =
             [](const FamilyParams& p, std::vector<JobType>& types) {
               for (int n = 0; n < p.N; ++n) types.push_back({bit(n), 1.0 / p.N});
             }},
        {.kind = FamilyKind::complete,
         .name = "complete",
         .params = param_set({P::d}),
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               if (p.d < 1 || p.d > p.N)
                 fail_family(p, fmt::format("d = {} is out of range; expected 1 <= d <= N", p.d));
               out.tuples = ordered_tuples(p.N, p.d);
             },
         .size_symmetric = true,
         .num_types = [](const FamilyParams& p) { return binomial(p.N, p.d); },
         .max_type_size = [](const FamilyParams& p) { return p.d; },
         .sample =
             [](const FamilyParams& p, std::uint64_t tuples, Rng& rng, std::vector<int>& servers) {
               if (tuples > 0) return sample_ordered_tuple(rng, p.N, p.d, tuples, servers);
               // Floyd's algorithm: a uniform d-subset with d draws (membership test is O(d)).
               const auto N = static_cast<std::uint64_t>(p.N);
               const auto d = static_cast<std::uint64_t>(p.d);
               for (std::uint64_t j = N - d; j < N; ++j) {
                 const auto t = static_cast<int>(rng.below(j + 1));
                 const bool seen = std::find(servers.begin(), servers.end(), t) != servers.end();
                 servers.push_back(seen ? static_cast<int>(j) : t);
               }
             },
         .enumerate =
             [](const FamilyParams& params, std::vector<JobType>& types) {
               const int N = params.N, d = params.d;
               const double p = 1.0 / binomial(N, d);
               std::vector<int> pick(static_cast<std::size_t>(d));
               std::iota(pick.begin(), pick.end(), 0);
               while (true) {
                 ServerMask m = 0;
                 for (int s : pick) m |= bit(s);
                 types.push_back({m, p});
                 int i = d - 1;
                 while (i >= 0 && pick[static_cast<std::size_t>(i)] == N - d + i) --i;
                 if (i < 0) break;
                 ++pick[static_cast<std::size_t>(i)];
                 for (int k = i + 1; k < d; ++k)
                   pick[static_cast<std::size_t>(k)] = pick[static_cast<std::size_t>(k - 1)] + 1;
               }
             }},
        {.kind = FamilyKind::ring,
         .name = "ring",
         .min_n = 3,
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               for (int i = 0; i < p.N; ++i) out.edges.emplace_back(i, (i + 1) % p.N);
             },
         .unions = kCycleUnions},
        {.kind = FamilyKind::hetero_ring,
         .name = "hetero_ring",
         .params = param_set({P::eps}),
         .min_n = 4,
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               const int N = p.N;
               if (N % 2 != 0)
                 fail_family(
                     p, "hetero_ring needs an even N; expected N = 4, 6, 8, ... (paper eq. 35)");
               require_eps(p);
               for (int i = 0; i < N; ++i) {
                 // Paper eq. (35), 1-based edge i = {i, i+1}: 2 eps / N for even i, 2 (1 - eps) / N
                 // for odd.
                 const int one_based = i + 1;
                 out.types.push_back({i, (i + 1) % N});
                 out.probs.push_back((one_based % 2 == 0 ? p.eps : 1.0 - p.eps) * 2.0 / N);
               }
             },
         .unions = kCycleUnions,
         .exact_weights =
             [](const Family& family, ListedWeights& out) {
               // 2 eps / N on even (1-based) edges, 2 (1 - eps) / N on odd ones.
               const Dyadic eps = Dyadic::of(family.params().eps);
               const Dyadic rest = Dyadic::of(std::int64_t{1}) - eps;
               for (std::size_t i = 0; i < family.listed_types().size(); ++i)
                 out.w.push_back((i + 1) % 2 == 0 ? eps : rest);
               out.W = Dyadic::of(std::int64_t{family.num_servers()} / 2);
             }},
        {.kind = FamilyKind::path,
         .name = "path",
         .min_n = 2,
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               for (int i = 0; i + 1 < p.N; ++i) out.edges.emplace_back(i, i + 1);
             },
         .unions = kCycleUnions},
        {.kind = FamilyKind::star,
         .name = "star",
         .min_n = 2,
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               for (int i = 1; i < p.N; ++i) out.edges.emplace_back(0, i);
             },
         .unions = kStarUnions},
        {.kind = FamilyKind::tree_singletons,
         .name = "tree_singletons",
         .params = param_set({P::eps, P::graph_seed, P::tree_edges}),
         .min_n = 2,
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               const int N = p.N;
               require_eps(p);
               std::vector<Edge> tree = p.tree_edges;
               for (auto& [a, b] : tree) {
                 if (a < 0 || a >= N || b < 0 || b >= N)
                   fail_family(p, fmt::format("tree edge ({}, {}) names a server outside 1..N",
                                              a + 1, b + 1));
                 if (a > b) std::swap(a, b);
               }
               if (tree.empty()) {
                 Rng rng(p.graph_seed, 0x7472656555ULL);
                 tree = detail::random_tree(N, rng);
               } else if (!detail::is_connected_tree(N, tree)) {
                 fail_family(p,
                             "tree_edges do not form a spanning tree (expected N - 1 edges, "
                             "connected, no cycle)");
               }
               for (int n = 0; n < N; ++n) {
                 out.types.push_back({n});
                 out.probs.push_back((1.0 - p.eps) / N);
               }
               for (auto [a, b] : tree) {
                 out.types.push_back({a, b});
                 out.probs.push_back(p.eps / (N - 1));
               }
             },
         .exact_weights =
             [](const Family& family, ListedWeights& out) {
               // (1 - eps) / N per singleton, eps / (N - 1) per edge
               const auto N = std::int64_t{family.num_servers()};
               const Dyadic eps = Dyadic::of(family.params().eps);
               const Dyadic single = (Dyadic::of(std::int64_t{1}) - eps) * Dyadic::of(N - 1);
               const Dyadic edge = eps * Dyadic::of(N);
               for (const auto& t : family.listed_types())
                 out.w.push_back(t.size() == 1 ? single : edge);
               out.W = Dyadic::of(N * (N - 1));
             }},
        {.kind = FamilyKind::singletons_full,
         .name = "singletons_full",
         .params = param_set({P::eps}),
         .min_n = 2,
         .build = [](const FamilyParams& p, FamilyBuild&) { require_eps(p); },
         .size_symmetric = true,
         .num_types = [](const FamilyParams& p) { return p.N + 1.0; },
         .max_type_size = [](const FamilyParams& p) { return p.N; },
         .sample =
             [](const FamilyParams& p, std::uint64_t, Rng& rng, std::vector<int>& servers) {
               const auto N = static_cast<std::uint64_t>(p.N);
               if (rng.uniform() < p.eps / static_cast<double>(N - 1)) {
                 servers.resize(N);
                 std::iota(servers.begin(), servers.end(), 0);
               } else {
                 servers.push_back(static_cast<int>(rng.below(N)));
               }
             },
         .enumerate =
             [](const FamilyParams& p, std::vector<JobType>& types) {
               const int N = p.N;
               const double eps = p.eps;
               for (int n = 0; n < N; ++n)
                 types.push_back({bit(n), (N - 1 - eps) / (N * (N - 1.0))});
               types.push_back({N == 64 ? ~ServerMask{0} : bit(N) - 1, eps / (N - 1)});
             }},
        {.kind = FamilyKind::random_regular,
         .name = "random_regular",
         .params = param_set({P::degree, P::graph_seed}),
         .listed_count =
             [](const FamilyParams& p) { return 0.5 * static_cast<double>(p.N) * p.degree; },
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               if (p.degree < 1 || p.degree >= p.N)
                 fail_family(p, fmt::format("degree = {} is out of range; expected 1 <= degree < N",
                                            p.degree));
               if ((static_cast<long>(p.N) * p.degree) % 2 != 0)
                 fail_family(p, "N * degree must be even for a regular graph");
               Rng rng(p.graph_seed, 0x72656775ULL);
               auto edges = detail::random_regular_graph(p.N, p.degree, rng);
               if (!edges)
                 fail_family(p,
                             fmt::format("could not generate a connected simple {}-regular graph "
                                         "after 1000 attempts",
                                         p.degree));
               out.edges = std::move(*edges);
             }},
        {.kind = FamilyKind::erdos_renyi,
         .name = "erdos_renyi",
         .params = param_set({P::edge_prob, P::graph_seed}),
         .min_n = 2,
         // the mean; the generator also stops at the limit
         .listed_count =
             [](const FamilyParams& p) {
               return p.edge_prob > 0.0 ? p.edge_prob * 0.5 * static_cast<double>(p.N) *
                                              static_cast<double>(p.N - 1)
                                        : 0.0;
             },
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               if (!(p.edge_prob > 0.0 && p.edge_prob <= 1.0))
                 fail_family(p, fmt::format("edge_prob = {} is outside (0, 1]", p.edge_prob));
               Rng rng(p.graph_seed, 0x45524752ULL);
               auto edges = detail::erdos_renyi_graph(p.N, p.edge_prob, kMaxListedJobTypes, rng);
               if (!edges)
                 fail_family(p, fmt::format("the random graph has more than {} edges; expected a "
                                            "smaller N x N x edge_prob (model::kMaxListedJobTypes)",
                                            kMaxListedJobTypes));
               if (edges->empty())
                 fail_family(p,
                             "the random graph has no edge; raise edge_prob or change graph_seed");
               out.edges = std::move(*edges);
             }},
        {.kind = FamilyKind::torus,
         .name = "torus",
         .params = param_set({P::rows, P::cols}),
         .derived_n = &kTorusN,
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               if (p.rows < 3 || p.cols < 3)
                 fail_family(p, fmt::format("torus {} x {}: rows and cols must be at least 3",
                                            p.rows, p.cols));
               if (static_cast<long>(p.rows) * p.cols != p.N)
                 fail_family(p, fmt::format("torus {} x {} has {} servers, not N", p.rows, p.cols,
                                            static_cast<long>(p.rows) * p.cols));
               out.edges = detail::torus_graph(p.rows, p.cols);
             }},
        {.kind = FamilyKind::explicit_types,
         .name = "explicit",
         .params = param_set({P::types}),
         .listed_count = [](const FamilyParams& p) { return static_cast<double>(p.types.size()); },
         .build =
             [](const FamilyParams& p, FamilyBuild& out) {
               const int N = p.N;
               if (p.types.empty()) fail_family(p, "explicit family needs at least one type");
               std::map<std::vector<int>, double> merged;
               double total = 0.0;
               for (std::size_t t = 0; t < p.types.size(); ++t) {
                 std::vector<int> servers = p.types[t].servers;
                 if (servers.empty()) fail_family(p, fmt::format("type {} has no servers", t + 1));
                 for (int s : servers)
                   if (s < 0 || s >= N)
                     fail_family(p, fmt::format("type {} names server {}, outside 1..{}; expected "
                                                "server numbers 1..N",
                                                t + 1, s + 1, N));
                 std::sort(servers.begin(), servers.end());
                 if (std::adjacent_find(servers.begin(), servers.end()) != servers.end())
                   fail_family(p, fmt::format("type {} lists a server twice", t + 1));
                 const double prob = p.types[t].p;
                 if (!(prob > 0.0 && std::isfinite(prob)))
                   fail_family(p, fmt::format("type {} has p = {}; expected p > 0", t + 1, prob));
                 merged[servers] += prob;
                 total += prob;
               }
               if (std::abs(total - 1.0) > 1e-9)
                 fail_family(p,
                             fmt::format("type probabilities sum to {:.12g}; expected 1", total));
               for (auto& [servers, prob] : merged) {
                 out.types.push_back(servers);
                 out.probs.push_back(prob / total);
               }
             },
         .exact_weights =
             [](const Family& family, ListedWeights& out) {
               // the given p's, duplicates merged, over their sum
               std::map<std::vector<int>, Dyadic> merged;
               for (const auto& t : family.params().types) {
                 std::vector<int> servers = t.servers;
                 std::sort(servers.begin(), servers.end());
                 merged[servers] += Dyadic::of(t.p);
               }
               for (const auto& t : family.listed_types()) {
                 out.w.push_back(merged.at(t));
                 out.W += out.w.back();
               }
             },
         // the sum of the T given p's, the sum of a type's duplicates and the division
         .probability_roundings =
             [](const FamilyParams& p) { return 2 * static_cast<double>(p.types.size()) + 4; }},
    });

#pragma GCC diagnostic pop

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kFamilies.size(); ++i)
    if (static_cast<std::size_t>(kFamilies[i].kind) != i) return false;
  for (std::size_t i = 0; i < kParams.size(); ++i)
    if (static_cast<std::size_t>(kParams[i].id) != i) return false;
  return kParams.size() <= 32;
}
static_assert(in_enum_order(), "one entry per enumerator, in enumerator order (at most 32 params)");

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
