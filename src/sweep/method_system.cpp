#include "method_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "canonical.hpp"
#include "qsweep/model/stability.hpp"

namespace qsweep::sweep::detail {
namespace {

model::FamilyUses uses(const Draft& d) { return model::family_uses(d.task.system().family.kind); }

// ---- fixed (non-sweepable) keys ----------------------------------------------------------------

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

// Systems (family + speeds) already built in this block, with what is known of their stability
// region: stability is monotone in lambda (every f(U) decreases with it), so checks are skipped
// for a lambda below a known stable one or above a known unstable one.
class SystemCache : public BlockMemo {
 public:
  KnownSystem& get(const SystemParams& s, const std::string& where) {
    std::string key = canonical_text(s.family) + canonical_text(s.speeds);
    auto it = systems_.find(key);
    if (it != systems_.end()) return it->second;
    if (systems_.size() >= kCapacity) systems_.clear();  // keeps memory bounded for huge N
    KnownSystem known;
    try {
      known.system = std::make_unique<model::System>(model::Family(s.family), s.speeds, s.lambda);
    } catch (const InputError& e) {
      fail_from(where, e, "parameters this family accepts (docs/sweep-format.md)");
    }
    return systems_.emplace(std::move(key), std::move(known)).first->second;
  }

 private:
  static constexpr std::size_t kCapacity = 256;
  std::unordered_map<std::string, KnownSystem> systems_;
};

}  // namespace

// Designated initializers leave the unnamed members at their defaults, as intended.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
KeySpec lambda_key() {
  return {.name = "lambda",
          .kind = Kind::load,
          .help =
              "per-server arrival rate (total N * lambda), or {heavy_traffic: k}: mean "
              "speed x (1 - 10^-k)",
          .bounds = above(0),
          .required = true,
          .alternative = "rho",
          .apply = [](Draft& d, const Value& v) {
            d.load = std::get<Load>(v);
            d.has_load = true;
          }};
}

std::vector<KeySpec> system_keys() {
  std::vector<KeySpec> k;
  k.push_back({.name = "family",
               .kind = Kind::choice,
               .help = "compatibility structure (graph family) of the job types",
               .choices = enum_names<model::FamilyKind>(),
               .selector = true,
               .required = true,
               .apply = [](Draft& d, const Value& v) {
                 d.task.system().family.kind = *parse_name<model::FamilyKind>(text(v));
               }});
  k.push_back({.name = "N",
               .kind = Kind::integer,
               .help = "number of servers (torus: rows x cols, not given)",
               .bounds = between(1, model::kMaxServers, false, false),
               .required = true,
               .used_by = "every family except torus (N = rows x cols)",
               .applies = [](const Draft& d) { return !uses(d).torus_shape; },
               .apply = [](Draft& d, const Value& v) { d.task.system().family.N = small_int(v); }});
  k.push_back({.name = "d",
               .kind = Kind::integer,
               .help = "servers per job type of the complete family (default 2)",
               .bounds = between(1, kIntMax, false, false),
               .used_by = "family complete",
               .applies = [](const Draft& d) { return uses(d).d; },
               .apply = [](Draft& d, const Value& v) { d.task.system().family.d = small_int(v); }});
  k.push_back({.name = "eps",
               .kind = Kind::real,
               .help = "asymmetry parameter of hetero_ring, tree_singletons, singletons_full",
               .bounds = between(0, 1, true, true),
               .required = true,
               .used_by = "families hetero_ring, tree_singletons and singletons_full",
               .applies = [](const Draft& d) { return uses(d).eps; },
               .apply = [](Draft& d, const Value& v) { d.task.system().family.eps = real(v); }});
  k.push_back(
      {.name = "degree",
       .kind = Kind::integer,
       .help = "degree of the random_regular graph (default 3)",
       .bounds = between(1, kIntMax, false, false),
       .used_by = "family random_regular",
       .applies = [](const Draft& d) { return uses(d).degree; },
       .apply = [](Draft& d, const Value& v) { d.task.system().family.degree = small_int(v); }});
  k.push_back(
      {.name = "edge_prob",
       .kind = Kind::real,
       .help = "edge probability of the erdos_renyi graph",
       .bounds = between(0, 1, true, false),
       .required = true,
       .used_by = "family erdos_renyi",
       .applies = [](const Draft& d) { return uses(d).edge_prob; },
       .apply = [](Draft& d, const Value& v) { d.task.system().family.edge_prob = real(v); }});
  k.push_back({.name = "graph_seed",
               .kind = Kind::integer,
               .help = "seed of the random graph or tree (default 1)",
               .bounds = between(0, 0x1.0p63 - 1024, false, false),
               .used_by = "families random_regular, erdos_renyi and tree_singletons",
               .applies = [](const Draft& d) { return uses(d).graph_seed; },
               .apply =
                   [](Draft& d, const Value& v) {
                     d.task.system().family.graph_seed = static_cast<std::uint64_t>(integer(v));
                   }});
  k.push_back(
      {.name = "rows",
       .kind = Kind::integer,
       .help = "rows of the torus",
       .bounds = between(3, kIntMax, false, false),
       .required = true,
       .used_by = "family torus",
       .applies = [](const Draft& d) { return uses(d).torus_shape; },
       .apply = [](Draft& d, const Value& v) { d.task.system().family.rows = small_int(v); }});
  k.push_back(
      {.name = "cols",
       .kind = Kind::integer,
       .help = "columns of the torus",
       .bounds = between(3, kIntMax, false, false),
       .required = true,
       .used_by = "family torus",
       .applies = [](const Draft& d) { return uses(d).torus_shape; },
       .apply = [](Draft& d, const Value& v) { d.task.system().family.cols = small_int(v); }});
  k.push_back(
      {.name = "tree_edges",
       .kind = Kind::fixed,
       .help = "the tree of tree_singletons as [[i, j], ...] (default: random from graph_seed)",
       .used_by = "family tree_singletons",
       .applies = [](const Draft& d) { return uses(d).tree_edges; },
       .apply =
           [](Draft& d, const Value& v) {
             d.task.system().family.tree_edges = std::get<std::vector<std::pair<int, int>>>(v);
           },
       .parse_fixed = parse_tree_edges});
  k.push_back({.name = "types",
               .kind = Kind::fixed,
               .help = "job types of the explicit family: [{servers: [1, 2], p: 0.5}, ...]",
               .required = true,
               .used_by = "family explicit",
               .applies = [](const Draft& d) { return uses(d).types; },
               .apply =
                   [](Draft& d, const Value& v) {
                     d.task.system().family.types = std::get<std::vector<model::ExplicitType>>(v);
                   },
               .parse_fixed = parse_types});
  k.push_back(
      {.name = "speeds",
       .kind = Kind::fixed,
       .help = "server speeds mu_1..mu_N as a list (default all 1)",
       .apply = [](Draft& d,
                   const Value& v) { d.task.system().speeds = std::get<std::vector<double>>(v); },
       .parse_fixed = parse_speeds});
  k.push_back({.name = "speed_profile",
               .kind = Kind::choice,
               .help = "named speeds: two_class (first half `fast`, rest 1) or linear (1..fast)",
               .choices = {"two_class", "linear"},
               .selector = true,
               .alternative = "speeds",
               .apply = [](Draft& d, const Value& v) { d.speed_profile = text(v); }});
  k.push_back({.name = "fast",
               .kind = Kind::real,
               .help = "the fast speed of speed_profile",
               .bounds = above(0),
               .required = true,
               .used_by = "blocks with a speed_profile",
               .applies = [](const Draft& d) { return !d.speed_profile.empty(); },
               .apply = [](Draft& d, const Value& v) { d.fast = real(v); }});
  k.push_back(lambda_key());
  k.push_back({.name = "rho",
               .kind = Kind::load,
               .help = "load lambda / mean speed, instead of lambda",
               .bounds = above(0),
               .alternative = "lambda",
               .apply = [](Draft& d, const Value& v) {
                 d.load = std::get<Load>(v);
                 d.has_load = true;
               }});
  return k;
}
#pragma GCC diagnostic pop

void derive_system(Draft& d, const BlockContext& block) {
  SystemParams& s = d.task.system();
  if (model::family_uses(s.family.kind).torus_shape) {
    const std::int64_t N = std::int64_t{s.family.rows} * s.family.cols;  // ints: no overflow
    if (N > model::kMaxServers)
      fail(block.where(), fmt::format("torus {} x {} has {} servers; expected rows x cols <= {} "
                                      "(model::kMaxServers)",
                                      s.family.rows, s.family.cols, N, model::kMaxServers));
    s.family.N = static_cast<int>(N);
  }
  if (!d.speed_profile.empty()) {
    try {
      s.speeds = model::speed_profile(d.speed_profile, s.family.N, d.fast);
    } catch (const InputError& e) {
      fail_from(block.where_of("speed_profile"), e, "a known speed profile");
    }
  } else if (!s.speeds.empty() && s.speeds.size() != static_cast<std::size_t>(s.family.N)) {
    fail(block.where_of("speeds"), fmt::format("speeds lists {} values but N = {}; expected one "
                                               "speed per server",
                                               s.speeds.size(), s.family.N));
  }
  s.lambda = d.load.relative ? d.load.value * mean_speed(s) : d.load.value;
}

std::uint64_t system_list_bytes(const SystemParams& s) {
  std::uint64_t bytes =
      s.speeds.size() * sizeof(double) + s.family.tree_edges.size() * sizeof(std::pair<int, int>);
  for (const auto& type : s.family.types) bytes += sizeof(type) + type.servers.size() * sizeof(int);
  return bytes;
}

double mean_speed(const SystemParams& s) {
  return s.speeds.empty() ? 1.0
                          : std::accumulate(s.speeds.begin(), s.speeds.end(), 0.0) /
                                static_cast<double>(s.speeds.size());
}

KnownSystem& known_system(const Task& t, BlockContext& block) {
  if (!block.memo) block.memo = std::make_unique<SystemCache>();
  KnownSystem& known = static_cast<SystemCache&>(*block.memo).get(t.system(), block.where());
  known.system->lambda = t.system().lambda;
  return known;
}

bool check_stable(const Task& t, KnownSystem& known, const BlockContext& block) {
  const double lambda = t.system().lambda;
  if (lambda <= known.stable_up_to) return true;
  if (lambda >= known.unstable_from && !block.on_unstable_error()) return false;
  const auto report = model::check_stability(*known.system);
  if (report.ok) {
    known.stable_up_to = lambda;
    return true;
  }
  known.unstable_from = std::min(known.unstable_from, lambda);
  if (block.on_unstable_error())
    fail(block.where(), fmt::format("task '{}' is unstable: {}; expected a load inside the "
                                    "stability region (or on_unstable: store)",
                                    describe(t), report.describe()));
  return false;
}

model::System build_system(const SystemParams& s) {
  return model::System(model::Family(s.family), s.speeds, s.lambda);
}

std::string family_text(const SystemParams& s) {
  const auto& f = s.family;
  const auto uses = model::family_uses(f.kind);
  std::string text = fmt::format("{} N={}", name_of(f.kind), f.N);
  if (uses.d) text += fmt::format(" d={}", f.d);
  if (uses.eps) text += fmt::format(" eps={:g}", f.eps);
  if (uses.degree) text += fmt::format(" degree={}", f.degree);
  if (uses.edge_prob) text += fmt::format(" edge_prob={:g}", f.edge_prob);
  if (uses.torus_shape) text += fmt::format(" ({}x{})", f.rows, f.cols);
  if (uses.types) text += fmt::format(" ({} types)", f.types.size());
  if (uses.tree_edges && !f.tree_edges.empty())
    text += " (given tree)";
  else if (uses.graph_seed)
    text += fmt::format(" graph_seed={}", f.graph_seed);
  if (!s.speeds.empty()) text += " (speeds given)";
  return text + fmt::format(" lambda={:.6g}", s.lambda);
}

// ---- results columns: planned lengths -----------------------------------------------------------

// Number of job types of the task's family (the store asks for every ragged column of every
// task; consecutive tasks mostly share a family, so one cached family per thread suffices).
double type_count(const Task& t) {
  thread_local model::FamilyParams cached_params;
  thread_local double cached_types = -1.0;
  if (cached_types < 0.0 || !(cached_params == t.system().family)) {
    cached_types = model::Family(t.system().family).num_types();
    cached_params = t.system().family;
  }
  return cached_types;
}

std::size_t listable_types(const Task& t, double limit) {
  if (t.system().family.N > model::kMaxMaskServers) return 0;
  const double types = std::round(type_count(t));  // binomials come from lgamma: 90.99999...
  return types <= limit ? static_cast<std::size_t>(types) : 0;
}

std::size_t servers(const Task& t) { return static_cast<std::size_t>(t.system().family.N); }

// ---- results columns: the system's parameters ---------------------------------------------------

void add_system_parameters(std::vector<Column>& c) {
  auto uses = [](const Task& t) { return model::family_uses(t.system().family.kind); };
  c.push_back(parameter("family", "compatibility family", "", ColumnType::str, [](const Task& t) {
    return std::string(name_of(t.system().family.kind));
  }));
  c.push_back(parameter("N", "number of servers", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.system().family.N}; }));
  c.push_back(parameter(
      "d", "servers per type of the complete family (-1: other family)", "", ColumnType::i64,
      [uses](const Task& t) { return uses(t).d ? std::int64_t{t.system().family.d} : kNone; }));
  c.push_back(
      parameter("eps", "asymmetry parameter eps (NaN: not used by the family)", "", ColumnType::f64,
                [uses](const Task& t) { return uses(t).eps ? t.system().family.eps : kNaN; }));
  c.push_back(parameter("degree", "degree of random_regular (-1: other family)", "",
                        ColumnType::i64, [uses](const Task& t) {
                          return uses(t).degree ? std::int64_t{t.system().family.degree} : kNone;
                        }));
  c.push_back(parameter(
      "edge_prob", "edge probability of erdos_renyi (NaN: other family)", "", ColumnType::f64,
      [uses](const Task& t) { return uses(t).edge_prob ? t.system().family.edge_prob : kNaN; }));
  c.push_back(
      parameter("graph_seed", "seed of the random graph or tree (-1: none)", "", ColumnType::i64,
                [uses](const Task& t) {
                  const bool random = uses(t).graph_seed && t.system().family.tree_edges.empty();
                  return random ? static_cast<std::int64_t>(t.system().family.graph_seed) : kNone;
                }));
  c.push_back(parameter("rows", "torus rows (-1: other family)", "", ColumnType::i64,
                        [uses](const Task& t) {
                          return uses(t).torus_shape ? std::int64_t{t.system().family.rows} : kNone;
                        }));
  c.push_back(parameter("cols", "torus columns (-1: other family)", "", ColumnType::i64,
                        [uses](const Task& t) {
                          return uses(t).torus_shape ? std::int64_t{t.system().family.cols} : kNone;
                        }));
  c.push_back(parameter(
      "speeds", "server speeds mu_1..mu_N (count 0: all speeds 1)", "1/time",
      ColumnType::f64_ragged, [](const Task& t) { return t.system().speeds; },
      [](const Task& t) { return t.system().speeds.size(); }));
  c.push_back(parameter("lambda", "per-server arrival rate (total rate N * lambda)", "1/time",
                        ColumnType::f64, [](const Task& t) { return t.system().lambda; }));
  c.push_back(parameter("rho", "load lambda / mean speed", "", ColumnType::f64,
                        [](const Task& t) { return t.system().lambda / mean_speed(t.system()); }));
}

}  // namespace qsweep::sweep::detail
