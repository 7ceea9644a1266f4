#include "keys.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "qsweep/common/checked.hpp"
#include "qsweep/common/closest_match.hpp"

namespace qsweep::sweep::detail {
namespace {

// Value accessors: parse_axis guarantees the alternative that matches the key's kind.
std::int64_t integer(const Value& v) { return std::get<std::int64_t>(v); }
int small_int(const Value& v) { return static_cast<int>(std::get<std::int64_t>(v)); }
double real(const Value& v) { return std::get<double>(v); }
bool boolean(const Value& v) { return std::get<bool>(v); }
const std::string& text(const Value& v) { return std::get<std::string>(v); }

constexpr unsigned kExact = bit(Method::exact), kSimulate = bit(Method::simulate),
                   kLdp = bit(Method::ldp), kSystem = kExact | kSimulate;
constexpr double kIntMax = std::numeric_limits<int>::max();
constexpr double kMaxLdpServers = 0x1.0p53;  // ldp n: exact in a double

Bounds at_least(double lo) { return {lo, 1e300, false, false}; }
Bounds above(double lo) { return {lo, 1e300, true, false}; }
Bounds between(double lo, double hi, bool lo_open, bool hi_open) {
  return {lo, hi, lo_open, hi_open};
}

model::FamilyUses uses(const Draft& d) { return model::family_uses(d.task.family.kind); }

// ---- fixed (non-sweepable) keys ----------------------------------------------------------------

std::vector<double> positive_list(const YAML::Node& node, const Locator& loc,
                                  std::string_view what) {
  const std::string expected = "a non-empty list of numbers > 0";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("{} is {}; expected {}", what, show(node), expected));
  std::vector<double> out;
  for (const auto& item : node) {
    const double x = read_number(item, loc, what, expected);
    if (!(x > 0.0))
      fail(loc.at(item), fmt::format("{} has the value {}; expected {}", what, x, expected));
    out.push_back(x);
  }
  return out;
}

int server_index(const YAML::Node& node, const Locator& loc, std::string_view what) {
  const std::string expected = "a server number >= 1 (servers are numbered from 1)";
  const auto s = read_integer(node, loc, what, expected);
  if (s < 1 || static_cast<double>(s) > kIntMax)
    fail(loc.at(node), fmt::format("{} is {}; expected {}", what, s, expected));
  return static_cast<int>(s - 1);
}

Value parse_speeds(const YAML::Node& node, const Locator& loc) {
  return positive_list(node, loc, "speeds");
}
Value parse_service_values(const YAML::Node& node, const Locator& loc) {
  return positive_list(node, loc, "service_values");
}
Value parse_service_weights(const YAML::Node& node, const Locator& loc) {
  return positive_list(node, loc, "service_weights");
}

Value parse_initial_counts(const YAML::Node& node, const Locator& loc) {
  const std::string expected = "a list of counts >= 0 (index k: queues of length k at time 0)";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("initial_counts is {}; expected {}", show(node), expected));
  std::vector<std::int64_t> counts;
  std::int64_t total = 0;  // checked: a wrapped sum could equal n and pass as valid
  for (const auto& item : node) {
    const auto count = read_integer(item, loc, "a count", expected);
    if (count < 0) fail(loc.at(item), fmt::format("a count is {}; expected {}", count, expected));
    const auto sum = checked_add(total, count);
    if (!sum || *sum > (std::int64_t{1} << 53))  // n is at most 2^53
      fail(loc.at(item), fmt::format("initial_counts sum to more than 2^53 at this count; expected "
                                     "counts summing to n (at most 2^53)"));
    total = *sum;
    counts.push_back(count);
  }
  return counts;
}

Value parse_types(const YAML::Node& node, const Locator& loc) {
  const std::string expected = "a non-empty list of {servers: [i, j, ...], p: probability}";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("types is {}; expected {}", show(node), expected));
  std::vector<model::ExplicitType> types;
  for (const auto& item : node) {
    if (!item.IsMap())
      fail(loc.at(item),
           fmt::format("a type is {}; expected a mapping {{servers: [...], p: ...}}", show(item)));
    model::ExplicitType type;
    bool has_servers = false, has_p = false;
    for (const auto& kv : item) {
      const std::string key = kv.first.Scalar();
      if (key == "servers" && !has_servers) {
        has_servers = true;
        if (!kv.second.IsSequence() || kv.second.size() == 0)
          fail(loc.at(kv.second), fmt::format("servers is {}; expected a non-empty list of server "
                                              "numbers (from 1)",
                                              show(kv.second)));
        for (const auto& s : kv.second) type.servers.push_back(server_index(s, loc, "a server"));
      } else if (key == "p" && !has_p) {
        has_p = true;
        type.p = read_number(kv.second, loc, "p", "a probability > 0");
        if (!(type.p > 0.0 && type.p <= 1.0))
          fail(loc.at(kv.second), fmt::format("p = {} is out of range; expected a probability in "
                                              "(0, 1]",
                                              type.p));
      } else {
        const bool repeated = key == "servers" || key == "p";
        fail(loc.at(kv.first),
             fmt::format("{} key '{}' in a type; expected servers and p once each",
                         repeated ? "repeated" : "unknown", key));
      }
    }
    if (!has_servers || !has_p)
      fail(loc.at(item), fmt::format("type without {}; expected {{servers: [...], p: ...}}",
                                     has_servers ? "p" : "servers"));
    types.push_back(std::move(type));
  }
  return types;
}

Value parse_tree_edges(const YAML::Node& node, const Locator& loc) {
  const std::string expected = "a list of edges [i, j] between servers numbered from 1";
  if (!node.IsSequence() || node.size() == 0)
    fail(loc.at(node), fmt::format("tree_edges is {}; expected {}", show(node), expected));
  std::vector<std::pair<int, int>> edges;
  for (const auto& edge : node) {
    if (!edge.IsSequence() || edge.size() != 2)
      fail(loc.at(edge), fmt::format("an edge is {}; expected [i, j]", show(edge)));
    edges.emplace_back(server_index(edge[0], loc, "an edge end"),
                       server_index(edge[1], loc, "an edge end"));
  }
  return edges;
}

// Designated initializers leave the unnamed members at their defaults, as intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
std::vector<KeySpec> make_specs() {
  std::vector<KeySpec> k;
  // ---- the system (exact and simulate) ----
  k.push_back({.name = "family",
               .methods = kSystem,
               .kind = Kind::choice,
               .help = "compatibility structure (graph family) of the job types",
               .choices = enum_names<model::FamilyKind>(),
               .selector = true,
               .required = true,
               .apply = [](Draft& d, const Value& v) {
                 d.task.family.kind = *parse_name<model::FamilyKind>(text(v));
               }});
  k.push_back({.name = "N",
               .methods = kSystem,
               .kind = Kind::integer,
               .help = "number of servers (torus: rows x cols, not given)",
               .bounds = between(1, model::kMaxServers, false, false),
               .required = true,
               .used_by = "every family except torus (N = rows x cols)",
               .applies = [](const Draft& d) { return !uses(d).torus_shape; },
               .apply = [](Draft& d, const Value& v) { d.task.family.N = small_int(v); }});
  k.push_back({.name = "d",
               .methods = kSystem,
               .kind = Kind::integer,
               .help = "servers per job type of the complete family (default 2)",
               .bounds = between(1, kIntMax, false, false),
               .used_by = "family complete",
               .applies = [](const Draft& d) { return uses(d).d; },
               .apply = [](Draft& d, const Value& v) { d.task.family.d = small_int(v); }});
  k.push_back({.name = "eps",
               .methods = kSystem,
               .kind = Kind::real,
               .help = "asymmetry parameter of hetero_ring, tree_singletons, singletons_full",
               .bounds = between(0, 1, true, true),
               .required = true,
               .used_by = "families hetero_ring, tree_singletons and singletons_full",
               .applies = [](const Draft& d) { return uses(d).eps; },
               .apply = [](Draft& d, const Value& v) { d.task.family.eps = real(v); }});
  k.push_back({.name = "degree",
               .methods = kSystem,
               .kind = Kind::integer,
               .help = "degree of the random_regular graph (default 3)",
               .bounds = between(1, kIntMax, false, false),
               .used_by = "family random_regular",
               .applies = [](const Draft& d) { return uses(d).degree; },
               .apply = [](Draft& d, const Value& v) { d.task.family.degree = small_int(v); }});
  k.push_back({.name = "edge_prob",
               .methods = kSystem,
               .kind = Kind::real,
               .help = "edge probability of the erdos_renyi graph",
               .bounds = between(0, 1, true, false),
               .required = true,
               .used_by = "family erdos_renyi",
               .applies = [](const Draft& d) { return uses(d).edge_prob; },
               .apply = [](Draft& d, const Value& v) { d.task.family.edge_prob = real(v); }});
  k.push_back({.name = "graph_seed",
               .methods = kSystem,
               .kind = Kind::integer,
               .help = "seed of the random graph or tree (default 1)",
               .bounds = between(0, 0x1.0p63 - 1024, false, false),
               .used_by = "families random_regular, erdos_renyi and tree_singletons",
               .applies = [](const Draft& d) { return uses(d).graph_seed; },
               .apply =
                   [](Draft& d, const Value& v) {
                     d.task.family.graph_seed = static_cast<std::uint64_t>(integer(v));
                   }});
  k.push_back({.name = "rows",
               .methods = kSystem,
               .kind = Kind::integer,
               .help = "rows of the torus",
               .bounds = between(3, kIntMax, false, false),
               .required = true,
               .used_by = "family torus",
               .applies = [](const Draft& d) { return uses(d).torus_shape; },
               .apply = [](Draft& d, const Value& v) { d.task.family.rows = small_int(v); }});
  k.push_back({.name = "cols",
               .methods = kSystem,
               .kind = Kind::integer,
               .help = "columns of the torus",
               .bounds = between(3, kIntMax, false, false),
               .required = true,
               .used_by = "family torus",
               .applies = [](const Draft& d) { return uses(d).torus_shape; },
               .apply = [](Draft& d, const Value& v) { d.task.family.cols = small_int(v); }});
  k.push_back(
      {.name = "tree_edges",
       .methods = kSystem,
       .kind = Kind::fixed,
       .help = "the tree of tree_singletons as [[i, j], ...] (default: random from graph_seed)",
       .used_by = "family tree_singletons",
       .applies = [](const Draft& d) { return uses(d).tree_edges; },
       .apply =
           [](Draft& d, const Value& v) {
             d.task.family.tree_edges = std::get<std::vector<std::pair<int, int>>>(v);
           },
       .parse_fixed = parse_tree_edges});
  k.push_back({.name = "types",
               .methods = kSystem,
               .kind = Kind::fixed,
               .help = "job types of the explicit family: [{servers: [1, 2], p: 0.5}, ...]",
               .required = true,
               .used_by = "family explicit",
               .applies = [](const Draft& d) { return uses(d).types; },
               .apply =
                   [](Draft& d, const Value& v) {
                     d.task.family.types = std::get<std::vector<model::ExplicitType>>(v);
                   },
               .parse_fixed = parse_types});
  k.push_back(
      {.name = "speeds",
       .methods = kSystem,
       .kind = Kind::fixed,
       .help = "server speeds mu_1..mu_N as a list (default all 1)",
       .apply = [](Draft& d, const Value& v) { d.task.speeds = std::get<std::vector<double>>(v); },
       .parse_fixed = parse_speeds});
  k.push_back({.name = "speed_profile",
               .methods = kSystem,
               .kind = Kind::choice,
               .help = "named speeds: two_class (first half `fast`, rest 1) or linear (1..fast)",
               .choices = {"two_class", "linear"},
               .selector = true,
               .alternative = "speeds",
               .apply = [](Draft& d, const Value& v) { d.speed_profile = text(v); }});
  k.push_back({.name = "fast",
               .methods = kSystem,
               .kind = Kind::real,
               .help = "the fast speed of speed_profile",
               .bounds = above(0),
               .required = true,
               .used_by = "blocks with a speed_profile",
               .applies = [](const Draft& d) { return !d.speed_profile.empty(); },
               .apply = [](Draft& d, const Value& v) { d.fast = real(v); }});
  k.push_back({.name = "lambda",
               .methods = kSystem | kLdp,
               .kind = Kind::load,
               .help = "per-server arrival rate (total N * lambda), or {heavy_traffic: k}: mean "
                       "speed x (1 - 10^-k)",
               .bounds = above(0),
               .required = true,
               .alternative = "rho",
               .apply = [](Draft& d, const Value& v) {
                 d.load = std::get<Load>(v);
                 d.has_load = true;
               }});
  k.push_back({.name = "rho",
               .methods = kSystem,
               .kind = Kind::load,
               .help = "load lambda / mean speed, instead of lambda",
               .bounds = above(0),
               .alternative = "lambda",
               .apply = [](Draft& d, const Value& v) {
                 d.load = std::get<Load>(v);
                 d.has_load = true;
               }});
  // ---- exact ----
  k.push_back({.name = "qmax",
               .methods = kExact | kSimulate,
               .kind = Kind::integer,
               .help = "P(Q = q) is computed for q = 0..qmax (default 0)",
               .bounds = between(0, 100'000, false, false),
               .apply = [](Draft& d, const Value& v) {
                 (d.task.method == Method::exact ? d.task.exact.qmax : d.task.simulate.qmax) =
                     small_int(v);
               }});
  k.push_back({.name = "light_traffic",
               .methods = kExact,
               .kind = Kind::boolean,
               .help = "compute the light-traffic coefficients alpha_q (default true)",
               .apply = [](Draft& d, const Value& v) { d.task.exact.light_traffic = boolean(v); }});
  k.push_back({.name = "per_type",
               .methods = kExact,
               .kind = Kind::boolean,
               .help = "compute E[Q_S], E[T_S] per type and E[R_n] per server (default true)",
               .apply = [](Draft& d, const Value& v) { d.task.exact.per_type = boolean(v); }});
  k.push_back({.name = "engine",
               .methods = kExact,
               .kind = Kind::choice,
               .help = "exact engine (default automatic: symmetric where it applies)",
               .choices = enum_names<exact::Engine>(),
               .apply = [](Draft& d, const Value& v) {
                 d.task.exact.engine = *parse_name<exact::Engine>(text(v));
               }});
  k.push_back({.name = "joint_qmax",
               .methods = kExact,
               .kind = Kind::integer,
               .help = "joint pmf of the per-type counts on 0..joint_qmax per type (<= 3 types; "
                       "default: off)",
               .bounds = between(0, 1'000'000, false, false),
               .selector = true,
               .apply = [](Draft& d, const Value& v) { d.task.exact.joint_qmax = small_int(v); }});
  k.push_back({.name = "joint_bin",
               .methods = kExact,
               .kind = Kind::integer,
               .help = "counts per bin on each axis of the joint pmf (default 1)",
               .bounds = between(1, kIntMax, false, false),
               .used_by = "joint_qmax",
               .applies = [](const Draft& d) { return d.task.exact.joint_qmax >= 0; },
               .apply = [](Draft& d, const Value& v) { d.task.exact.joint_bin = small_int(v); }});
  k.push_back({.name = "policy",
               .methods = kExact,
               .kind = Kind::choice,
               .help = "exact: redundancy_coc (cancel on completion, default) or redundancy_cos "
                       "(cancel on start, the longest idle server first)",
               .choices = enum_names<exact::Policy>(),
               .apply = [](Draft& d, const Value& v) {
                 d.task.exact.policy = *parse_name<exact::Policy>(text(v));
               }});
  // ---- simulate ----
  k.push_back({.name = "policy",
               .methods = kSimulate,
               .kind = Kind::choice,
               .help = "simulate: redundancy or dispatching policy (default redundancy_coc)",
               .choices = enum_names<sim::Policy>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 d.task.simulate.policy = *parse_name<sim::Policy>(text(v));
               }});
  k.push_back(
      {.name = "policy_d",
       .methods = kSimulate,
       .kind = Kind::integer,
       .help = "servers sampled by power_of_d (default 2)",
       .bounds = between(1, kIntMax, false, false),
       .used_by = "policy power_of_d",
       .applies = [](const Draft& d) { return d.task.simulate.policy == sim::Policy::power_of_d; },
       .apply = [](Draft& d, const Value& v) { d.task.simulate.policy_d = small_int(v); }});
  k.push_back({.name = "service",
               .methods = kSimulate,
               .kind = Kind::choice,
               .help = "job size distribution, unit mean (default exponential)",
               .choices = enum_names<sim::ServiceKind>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 d.task.simulate.service.kind = *parse_name<sim::ServiceKind>(text(v));
               }});
  k.push_back({.name = "cv2",
               .methods = kSimulate,
               .kind = Kind::real,
               .help = "squared coefficient of variation of the hyperexponential service",
               .bounds = at_least(1),
               .required = true,
               .used_by = "service hyperexponential",
               .applies =
                   [](const Draft& d) {
                     return d.task.simulate.service.kind == sim::ServiceKind::hyperexponential;
                   },
               .apply = [](Draft& d, const Value& v) { d.task.simulate.service.cv2 = real(v); }});
  k.push_back({.name = "service_values",
               .methods = kSimulate,
               .kind = Kind::fixed,
               .help = "support of the empirical service distribution (rescaled to mean 1)",
               .required = true,
               .used_by = "service empirical",
               .applies =
                   [](const Draft& d) {
                     return d.task.simulate.service.kind == sim::ServiceKind::empirical;
                   },
               .apply =
                   [](Draft& d, const Value& v) {
                     d.task.simulate.service.values = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_service_values});
  k.push_back({.name = "service_weights",
               .methods = kSimulate,
               .kind = Kind::fixed,
               .help = "probabilities of service_values (default uniform)",
               .used_by = "service empirical",
               .applies =
                   [](const Draft& d) {
                     return d.task.simulate.service.kind == sim::ServiceKind::empirical;
                   },
               .apply =
                   [](Draft& d, const Value& v) {
                     d.task.simulate.service.weights = std::get<std::vector<double>>(v);
                   },
               .parse_fixed = parse_service_weights});
  k.push_back(
      {.name = "identical_replicas",
       .methods = kSimulate,
       .kind = Kind::boolean,
       .help = "replicas of a job share one size (default false: independent sizes)",
       .used_by = "policy redundancy_coc",
       .applies =
           [](const Draft& d) { return d.task.simulate.policy == sim::Policy::redundancy_coc; },
       .apply = [](Draft& d, const Value& v) { d.task.simulate.identical_replicas = boolean(v); }});
  k.push_back(
      {.name = "longest_idle",
       .methods = kSimulate,
       .kind = Kind::boolean,
       .help = "a job that finds several idle servers starts at the one idle longest (default "
               "false: uniformly)",
       .used_by = "policy redundancy_cos",
       .applies =
           [](const Draft& d) { return d.task.simulate.policy == sim::Policy::redundancy_cos; },
       .apply = [](Draft& d, const Value& v) { d.task.simulate.longest_idle = boolean(v); }});
  k.push_back({.name = "horizon",
               .methods = kSimulate,
               .kind = Kind::real,
               .help = "simulated time per replication after warm-up (default 1e5)",
               .bounds = above(0),
               .apply = [](Draft& d, const Value& v) { d.task.simulate.horizon = real(v); }});
  k.push_back({.name = "warmup",
               .methods = kSimulate,
               .kind = Kind::real,
               .help = "simulated time discarded first (default: detected by MSER-5)",
               .bounds = at_least(0),
               .apply = [](Draft& d, const Value& v) { d.task.simulate.warmup = real(v); }});
  k.push_back(
      {.name = "replications",
       .methods = kSimulate,
       .kind = Kind::integer,
       .help = "independent replications, the confidence intervals come from them (default 8)",
       .bounds = between(2, 1'000'000, false, false),
       .apply = [](Draft& d, const Value& v) { d.task.simulate.replications = small_int(v); }});
  k.push_back(
      {.name = "target_rel_half_width",
       .methods = kSimulate,
       .kind = Kind::real,
       .help = "add replications until E[T]'s relative half-width is below this (default 0: off)",
       .bounds = at_least(0),
       .apply = [](Draft& d, const Value& v) { d.task.simulate.target_rel_half_width = real(v); }});
  k.push_back(
      {.name = "max_replications",
       .methods = kSimulate,
       .kind = Kind::integer,
       .help = "cap on replications with target_rel_half_width (default 256)",
       .bounds = between(2, 1'000'000, false, false),
       .apply = [](Draft& d, const Value& v) { d.task.simulate.max_replications = small_int(v); }});
  k.push_back(
      {.name = "occupancy_max",
       .methods = kSimulate,
       .kind = Kind::integer,
       .help = "fraction of servers with >= i jobs for i = 1..occupancy_max (default 0)",
       .bounds = between(0, 100'000, false, false),
       .apply = [](Draft& d, const Value& v) { d.task.simulate.occupancy_max = small_int(v); }});
  // ---- ldp ----
  k.push_back({.name = "policy",
               .methods = kLdp,
               .kind = Kind::choice,
               .help = "ldp: dispatching policy of the many-server system (default jsq)",
               .choices = enum_names<ldp::Policy>(),
               .selector = true,
               .apply = [](Draft& d, const Value& v) {
                 d.task.ldp.policy = *parse_name<ldp::Policy>(text(v));
               }});
  k.push_back(
      {.name = "policy_d",
       .methods = kLdp,
       .kind = Kind::integer,
       .help = "servers sampled by power_of_d (default 2)",
       .bounds = between(1, kIntMax, false, false),
       .used_by = "policy power_of_d",
       .applies = [](const Draft& d) { return d.task.ldp.policy == ldp::Policy::power_of_d; },
       .apply = [](Draft& d, const Value& v) { d.task.ldp.policy_d = small_int(v); }});
  k.push_back({.name = "n",
               .methods = kLdp,
               .kind = Kind::integer,
               .help = "number of servers (rate 1 each)",
               .bounds = between(1, kMaxLdpServers, false, false),
               .required = true,
               .apply = [](Draft& d, const Value& v) { d.task.ldp.n = integer(v); }});
  k.push_back({.name = "j",
               .methods = kLdp,
               .kind = Kind::integer,
               .help = "the event: some queue reaches j jobs by time T (queues start at 1)",
               .bounds = between(2, 1'000'000, false, false),
               .required = true,
               .apply = [](Draft& d, const Value& v) { d.task.ldp.j = small_int(v); }});
  k.push_back({.name = "T",
               .methods = kLdp,
               .kind = Kind::real,
               .help = "time horizon of the event",
               .bounds = above(0),
               .required = true,
               .apply = [](Draft& d, const Value& v) { d.task.ldp.T = real(v); }});
  k.push_back(
      {.name = "estimator",
       .methods = kLdp,
       .kind = Kind::choice,
       .help = "exact (lumped chain), monte_carlo or importance sampling (default importance)",
       .choices = enum_names<ldp::Estimator>(),
       .selector = true,
       .apply = [](Draft& d, const Value& v) {
         d.task.ldp.estimator = *parse_name<ldp::Estimator>(text(v));
       }});
  k.push_back(
      {.name = "samples",
       .methods = kLdp,
       .kind = Kind::real,
       .help = "sample paths (upper bound with target_rel_error; default 1e5)",
       .bounds = between(1, 1e15, false, false),
       .used_by = "estimators monte_carlo and importance",
       .applies = [](const Draft& d) { return d.task.ldp.estimator != ldp::Estimator::exact; },
       .apply = [](Draft& d, const Value& v) { d.task.ldp.samples = std::floor(real(v)); }});
  k.push_back(
      {.name = "target_rel_error",
       .methods = kLdp,
       .kind = Kind::real,
       .help = "stop sampling once the relative error is below this (default 0: off)",
       .bounds = at_least(0),
       .used_by = "estimators monte_carlo and importance",
       .applies = [](const Draft& d) { return d.task.ldp.estimator != ldp::Estimator::exact; },
       .apply = [](Draft& d, const Value& v) { d.task.ldp.target_rel_error = real(v); }});
  k.push_back(
      {.name = "truncation",
       .methods = kLdp,
       .kind = Kind::real,
       .help = "exact estimator: bound on the neglected probability mass (default 1e-12)",
       .bounds = between(0, 1, true, true),
       .used_by = "estimator exact",
       .applies = [](const Draft& d) { return d.task.ldp.estimator == ldp::Estimator::exact; },
       .apply = [](Draft& d, const Value& v) { d.task.ldp.truncation = real(v); }});
  k.push_back(
      {.name = "initial_counts",
       .methods = kLdp,
       .kind = Kind::fixed,
       .help = "queues of length k = 0, 1, ... at time 0, summing to n (default: all length 1)",
       .apply =
           [](Draft& d, const Value& v) {
             d.task.ldp.initial_counts = std::get<std::vector<std::int64_t>>(v);
           },
       .parse_fixed = parse_initial_counts});
  return k;
}
#pragma GCC diagnostic pop

std::string format_bound(double x) {
  return x == std::floor(x) && std::abs(x) < 1e15 ? fmt::format("{:.0f}", x)
                                                  : fmt::format("{:g}", x);
}

// ---- values ------------------------------------------------------------------------------------

// Checks a numeric value against the key and converts it to the key's Value alternative.
Value numeric_value(const KeySpec& key, double x, const std::string& where,
                    std::string_view origin) {
  if (key.kind == Kind::integer) {
    const double rounded = std::round(x);
    if (std::abs(x - rounded) > 1e-9 * std::max(1.0, std::abs(x)))
      fail(where, fmt::format("{}{} = {} is not an integer; expected {}", origin, key.name, x,
                              key.expected()));
    x = rounded;
  }
  if (!key.bounds.contains(x))
    fail(where, fmt::format("{}{} = {} is out of range; expected {}", origin, key.name, x,
                            key.expected()));
  switch (key.kind) {
    case Kind::integer:
      return static_cast<std::int64_t>(x);
    case Kind::load:
      return Load{x, key.name == "rho"};
    default:
      return x;
  }
}

Value scalar_value(const KeySpec& key, const YAML::Node& node, const Locator& loc) {
  const std::string where = loc.at(node);
  const std::string expected = key.expected();
  switch (key.kind) {
    case Kind::integer: {
      const auto x = read_integer(node, loc, key.name, expected);
      if (!key.bounds.contains(static_cast<double>(x)))
        fail(where, fmt::format("{} = {} is out of range; expected {}", key.name, x, expected));
      return x;
    }
    case Kind::real:
    case Kind::load:
      return numeric_value(key, read_number(node, loc, key.name, expected), where, "");
    case Kind::boolean:
      return read_bool(node, loc, key.name);
    case Kind::choice: {
      std::string name = read_string(node, loc, key.name, expected);
      for (auto choice : key.choices)
        if (choice == name) return name;
      const std::string guess = closest_match(name, key.choices);
      fail(where,
           fmt::format("unknown {} '{}'{}; expected {}", key.name, name,
                       guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess), expected));
    }
    case Kind::fixed:
      break;
  }
  return Value{};
}

std::uint64_t generator_count(const YAML::Node& node, const Locator& loc, std::string_view gen,
                              std::uint64_t max_values) {
  const std::string expected = fmt::format("a count between 1 and {}", max_values);
  const auto n = read_integer(node, loc, fmt::format("the {} count", gen), expected);
  if (n < 1 || static_cast<std::uint64_t>(n) > max_values)
    fail(loc.at(node),
         fmt::format("the {} count is {}; expected {} (max_tasks)", gen, n, expected));
  return static_cast<std::uint64_t>(n);
}

// {linspace: [a, b, n]}, {logspace: [a, b, n], base: 10}, {heavy_traffic: [k, ...]}.
void parse_generator(const KeySpec& key, const YAML::Node& node, const Locator& loc,
                     std::uint64_t max_values, Axis& axis) {
  const bool numeric =
      key.kind == Kind::integer || key.kind == Kind::real || key.kind == Kind::load;
  const std::string where = loc.at(node);
  if (!numeric) fail(where, fmt::format("{} is a mapping; expected {}", key.name, key.expected()));
  const std::string gens =
      key.kind == Kind::load
          ? "{linspace: [a, b, n]}, {logspace: [a, b, n]} or {heavy_traffic: [k, ...]}"
          : "{linspace: [a, b, n]} or {logspace: [a, b, n]}";
  std::string generator;
  YAML::Node args, base_node;
  bool has_base = false;
  for (const auto& kv : node) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const bool is_generator = name == "linspace" || name == "logspace" ||
                              (name == "heavy_traffic" && key.kind == Kind::load);
    if (is_generator && generator.empty()) {
      generator = name;
      args = kv.second;
    } else if (name == "base" && !has_base) {
      has_base = true;
      base_node = kv.second;
    } else if (name == "heavy_traffic" && key.kind != Kind::load) {
      fail(loc.at(kv.first),
           fmt::format("heavy_traffic generates loads, not {}; expected {}", key.name, gens));
    } else {
      const std::string guess =
          closest_match(name, {"linspace", "logspace", "heavy_traffic", "base"});
      fail(
          loc.at(kv.first),
          fmt::format("unexpected '{}' in the value generator of {}{}; expected {}", name, key.name,
                      guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess), gens));
    }
  }
  if (generator.empty())
    fail(where,
         fmt::format("value generator of {} names no generator; expected {}", key.name, gens));
  if (has_base && generator != "logspace")
    fail(loc.at(base_node), fmt::format("base belongs to logspace, not {}; expected {{logspace: "
                                        "[a, b, n], base: b}}",
                                        generator));

  std::vector<double> values;
  std::string origin = generator + " value of ";
  if (generator == "heavy_traffic") {
    const std::string expected = "k > 0 (lambda = mean speed * (1 - 10^-k))";
    std::vector<YAML::Node> ks;
    if (args.IsSequence()) {
      for (const auto& item : args) ks.push_back(item);
    } else {
      ks.push_back(args);
    }
    if (ks.empty() || ks.size() > max_values)
      fail(loc.at(args), fmt::format("heavy_traffic is {}; expected a non-empty list of {}",
                                     show(args), expected));
    for (const auto& item : ks) {
      const double k = read_number(item, loc, "heavy_traffic k", expected);
      if (!(k > 0.0))
        fail(loc.at(item), fmt::format("heavy_traffic k = {}; expected {}", k, expected));
      axis.values.push_back(Load{1.0 - std::pow(10.0, -k), true});
      axis.value_where.push_back(loc.at(item));
    }
    return;
  }
  if (!args.IsSequence() || args.size() != 3)
    fail(loc.at(args),
         fmt::format("{} is {}; expected [first, last, count]", generator, show(args)));
  const double a =
      read_number(args[0], loc, fmt::format("the first {} value", generator), "a number");
  const double b =
      read_number(args[1], loc, fmt::format("the last {} value", generator), "a number");
  const std::uint64_t n = generator_count(args[2], loc, generator, max_values);
  double base = 10.0;
  if (has_base) {
    base = read_number(base_node, loc, "base", "a number > 0 other than 1");
    if (!(base > 0.0) || base == 1.0)
      fail(loc.at(base_node), fmt::format("base = {}; expected a number > 0 other than 1", base));
  }
  // The values run monotonically from the first to the last: a range error shows at an end,
  // before n values are made.
  for (const double end : {a, b}) {
    const double x = generator == "linspace" ? end : std::pow(base, end);
    if (std::isfinite(x)) numeric_value(key, x, where, origin);
  }
  // As numpy.linspace computes them, so that values equal what users compare with: a + i * step,
  // step = (b - a) / (n - 1), the last exactly b; where the step underflows, a + (i / (n - 1)) (b -
  // a). logspace is pow(base, x) of those (numpy's own power differs by an ulp on AVX-512
  // machines).
  const double div = static_cast<double>(n - 1);
  const double delta = b - a;
  const double step = n > 1 ? delta / div : 0.0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const double index = static_cast<double>(i);
    double x = step != 0.0 ? index * step + a : n > 1 ? index / div * delta + a : a;
    if (i + 1 == n && n > 1) x = b;
    values.push_back(generator == "linspace" ? x : std::pow(base, x));
  }
  for (double x : values) {
    if (!std::isfinite(x))
      fail(where,
           fmt::format("{} gives {} for {}; expected finite values", generator, x, key.name));
    axis.values.push_back(numeric_value(key, x, where, origin));
    axis.value_where.push_back(where);
  }
}

}  // namespace

bool Bounds::contains(double x) const {
  return (lo_open ? x > lo : x >= lo) && (hi_open ? x < hi : x <= hi);
}

std::string Bounds::describe(Kind kind) const {
  const std::string noun = kind == Kind::integer ? "an integer" : "a number";
  // Upper limits that only guard the integer type are left out of messages.
  const bool has_hi = hi < std::numeric_limits<int>::max();
  if (!has_hi) return fmt::format("{} {} {}", noun, lo_open ? ">" : ">=", format_bound(lo));
  return fmt::format("{} in {}{}, {}{}", noun, lo_open ? "(" : "[", format_bound(lo),
                     format_bound(hi), hi_open ? ")" : "]");
}

std::string KeySpec::expected() const {
  switch (kind) {
    case Kind::choice: {
      std::string list;
      for (auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
      return "one of: " + list;
    }
    case Kind::boolean:
      return "true or false";
    case Kind::fixed:
      return std::string(help);
    default:
      return bounds.describe(kind);
  }
}

const std::vector<KeySpec>& key_specs() {
  static const std::vector<KeySpec> specs = make_specs();
  return specs;
}

const KeySpec* find_key(std::string_view name, Method method) {
  for (const auto& spec : key_specs())
    if (spec.name == name && (spec.methods & bit(method))) return &spec;
  return nullptr;
}

std::uint64_t axis_length(const KeySpec& key, const YAML::Node& value, const Locator& loc,
                          std::uint64_t max_values) {
  if (key.kind == Kind::fixed || !value) return 1;
  if (value.IsSequence()) {
    if (value.size() > max_values)
      fail(loc.at(value), fmt::format("{} lists {} values; expected at most max_tasks = {}",
                                      key.name, value.size(), max_values));
    return value.size();
  }
  if (!value.IsMap()) return 1;
  // A generator's own count; parse_axis reports a malformed generator.
  for (const auto& kv : value) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : "";
    const YAML::Node& args = kv.second;
    if (name == "heavy_traffic") return args.IsSequence() ? args.size() : 1;
    if ((name == "linspace" || name == "logspace") && args.IsSequence() && args.size() == 3)
      return generator_count(args[2], loc, name, max_values);
  }
  return 1;
}

Axis parse_axis(const KeySpec& key, const YAML::Node& key_node, const YAML::Node& value,
                const Locator& loc, std::uint64_t max_values) {
  Axis axis;
  axis.key = &key;
  axis.where = loc.at(key_node);
  if (!value || value.IsNull())
    fail(axis.where, fmt::format("{} has no value; expected {}", key.name, key.expected()));
  if (key.kind == Kind::fixed) {
    axis.values.push_back(key.parse_fixed(value, loc));
    axis.value_where.push_back(loc.at(value));
    axis.length = axis.values.size();
    return axis;
  }
  if (value.IsMap()) {
    parse_generator(key, value, loc, max_values, axis);
    axis.length = axis.values.size();
    return axis;
  }
  if (value.IsSequence()) {
    if (value.size() == 0)
      fail(loc.at(value),
           fmt::format("{} is an empty list; expected {} or a non-empty list of them", key.name,
                       key.expected()));
    if (value.size() > max_values)
      fail(loc.at(value), fmt::format("{} lists {} values; expected at most max_tasks = {}",
                                      key.name, value.size(), max_values));
    for (const auto& item : value) {
      if (!item.IsScalar())
        fail(loc.at(item), fmt::format("a value of {} is {}; expected {} (lists do not nest)",
                                       key.name, show(item), key.expected()));
      axis.values.push_back(scalar_value(key, item, loc));
      axis.value_where.push_back(loc.at(item));
    }
    axis.length = axis.values.size();
    return axis;
  }
  axis.values.push_back(scalar_value(key, value, loc));
  axis.value_where.push_back(loc.at(value));
  axis.length = axis.values.size();
  return axis;
}

}  // namespace qsweep::sweep::detail
