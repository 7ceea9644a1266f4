#include "method_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "canonical.hpp"
#include "qsweep/model/family_registry.hpp"
#include "qsweep/model/stability.hpp"

namespace qsweep::sweep::detail {
namespace {

const model::FamilyInfo& family(const Draft& d) {
  return model::family_info(d.task.system().family.kind);
}

// ---- fixed (non-sweepable) keys ----------------------------------------------------------------

int server_index(const YAML::Node& node, const Locator& loc, std::string_view what) {
  const std::string expected = "a server number >= 1 (servers are numbered from 1)";
  const auto s = read_integer(node, loc, what, expected);
  if (s < 1 || s > std::numeric_limits<int>::max())
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
                         repeated ? "repeated" : "unknown", printable(key)));
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
    // Consecutive tasks mostly share their system: compared without making its key.
    if (last_ && last_family_ == s.family && last_speeds_ == s.speeds) return *last_;
    key_.clear();
    append_canonical_text(key_, s.family);
    append_canonical_text(key_, s.speeds);
    auto it = systems_.find(key_);
    if (it == systems_.end()) {
      if (systems_.size() >= kCapacity) {  // keeps memory bounded for huge N
        systems_.clear();
        last_ = nullptr;
      }
      KnownSystem known;
      try {
        known.system = std::make_unique<model::System>(model::Family(s.family), s.speeds, s.lambda);
        known.sums = system_sums(*known.system);
      } catch (const InputError& e) {
        fail_from(where, e, "parameters this family accepts (docs/sweep-format.md)");
      }
      it = systems_.emplace(key_, std::move(known)).first;
    }
    last_ = &it->second;
    last_family_ = s.family;
    last_speeds_ = s.speeds;
    return *last_;
  }

 private:
  static constexpr std::size_t kCapacity = 256;
  std::unordered_map<std::string, KnownSystem> systems_;
  // The previous task's system (unordered_map nodes do not move) and its parameters as given.
  KnownSystem* last_ = nullptr;
  model::FamilyParams last_family_;
  std::vector<double> last_speeds_;
  std::string key_;
};

// ---- the family parameters' keys, from the registry (src/model/families.cpp) ----------------

// Whether the family takes the parameter and it has an effect there.
bool in_effect(const model::FamilyParamInfo& param, const model::FamilyParams& f) {
  return model::family_info(f.kind).uses(param.id) &&
         (param.in_effect == nullptr || param.in_effect(f));
}

// "family complete", "families hetero_ring, tree_singletons and singletons_full".
std::string families_text(const std::vector<std::string_view>& names) {
  return fmt::format("{} {}", names.size() == 1 ? "family" : "families",
                     model::list_text(names, " and "));
}

// The texts below are made once (the KeySpecs hold string_views of them).

// Parameter i's used_by: the families that take it.
std::string_view param_used_by(model::FamilyParam param) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const model::FamilyParamInfo& info : model::family_params()) {
      std::vector<std::string_view> users;
      for (const model::FamilyInfo& f : model::families())
        if (f.uses(info.id)) users.push_back(f.name);
      out.push_back(families_text(users));
    }
    return out;
  }();
  return texts[static_cast<std::size_t>(param)];
}

// Parameter i's help, with the families that take it (model::param_help).
std::string_view param_text(model::FamilyParam param) {
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> out;
    for (const model::FamilyParamInfo& info : model::family_params())
      out.push_back(model::param_help(info.id));
    return out;
  }();
  return texts[static_cast<std::size_t>(param)];
}

// The families whose N follows from their parameters: "torus (N = rows x cols)" or, with
// `help`, "torus: rows x cols".
std::string derived_n_list(bool help) {
  std::string list;
  for (const model::FamilyInfo& f : model::families())
    if (f.derived_n != nullptr)
      list += fmt::format(fmt::runtime(help ? "{}{}: {}" : "{}{} (N = {})"),
                          list.empty() ? "" : ", ", f.name, f.derived_n->formula);
  return list;
}

std::string_view n_used_by() {
  static const std::string text = "every family except " + derived_n_list(false);
  return derived_n_list(false).empty() ? std::string_view() : std::string_view(text);
}

std::string_view n_help() {
  static const std::string text =
      "number of servers" +
      (derived_n_list(true).empty() ? "" : " (" + derived_n_list(true) + ", not given)");
  return text;
}

// The value kinds of the parameters' fields (model::ParamField), as keys.
constexpr std::array kFieldKinds{Kind::integer, Kind::real, Kind::integer, Kind::fixed,
                                 Kind::fixed};
static_assert(kFieldKinds.size() == std::variant_size_v<model::ParamField>);

// Sets the field of parameter I from a key's value (parse_axis gives the field's alternative).
template <std::size_t I>
void apply_param(Draft& d, const Value& v) {
  model::FamilyParams& family = d.task.system().family;
  std::visit(
      [&](auto member) {
        using Field = std::remove_reference_t<decltype(family.*member)>;
        if constexpr (std::is_same_v<Field, int>)
          family.*member = small_int(v);
        else if constexpr (std::is_same_v<Field, std::uint64_t>)
          family.*member = static_cast<std::uint64_t>(integer(v));
        else
          family.*member = std::get<Field>(v);
      },
      model::param_info(static_cast<model::FamilyParam>(I)).field);
}

template <std::size_t I>
bool applies_param(const Draft& d) {
  return family(d).uses(static_cast<model::FamilyParam>(I));
}

// One function of each per parameter slot (a ParamSet has 32).
template <std::size_t... I>
constexpr auto param_functions(std::index_sequence<I...> /*slots*/) {
  using Apply = void (*)(Draft&, const Value&);
  using Applies = bool (*)(const Draft&);
  return std::pair{std::array<Apply, sizeof...(I)>{apply_param<I>...},
                   std::array<Applies, sizeof...(I)>{applies_param<I>...}};
}
constexpr auto kParamFunctions = param_functions(std::make_index_sequence<32>{});

KeySpec param_key(const model::FamilyParamInfo& param) {
  const auto slot = static_cast<std::size_t>(param.id);
  const Kind kind = kFieldKinds[param.field.index()];
  KeySpec key;
  key.name = param.name;
  key.kind = kind;
  key.help = param_text(param.id);
  if (kind != Kind::fixed) key.bounds = between(param.lo, param.hi, param.lo_open, param.hi_open);
  key.required = param.required;
  key.used_by = param_used_by(param.id);
  key.applies = kParamFunctions.second[slot];
  key.apply = kParamFunctions.first[slot];
  if (std::holds_alternative<std::vector<std::pair<int, int>> model::FamilyParams::*>(param.field))
    key.parse_fixed = parse_tree_edges;
  else if (std::holds_alternative<std::vector<model::ExplicitType> model::FamilyParams::*>(
               param.field))
    key.parse_fixed = parse_types;
  return key;
}

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
               .help = n_help(),
               .bounds = between(1, model::kMaxServers, false, false),
               .required = true,
               .used_by = n_used_by(),
               .applies = [](const Draft& d) { return family(d).derived_n == nullptr; },
               .apply = [](Draft& d, const Value& v) { d.task.system().family.N = small_int(v); }});
  for (const model::FamilyParamInfo& param : model::family_params()) k.push_back(param_key(param));
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
  if (const model::DerivedN* derived = model::family_info(s.family.kind).derived_n) {
    const std::int64_t N = derived->count(s.family);
    if (N > model::kMaxServers)
      fail(block.where(),
           fmt::format("{} has {} servers; expected {} <= {} (model::kMaxServers)",
                       derived->shape(s.family), N, derived->formula, model::kMaxServers));
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
  std::uint64_t bytes = s.speeds.size() * sizeof(double);
  // The family's list parameters (tree edges, types), in catalogue order.
  for (const model::FamilyParamInfo& param : model::family_params())
    std::visit(
        [&](auto member) {
          const auto& value = s.family.*member;
          using Field = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<Field, std::vector<model::ExplicitType>>) {
            for (const auto& type : value)
              bytes += sizeof(type) + type.servers.size() * sizeof(int);
          } else if constexpr (!std::is_arithmetic_v<Field>) {
            bytes += value.size() * sizeof(typename Field::value_type);
          }
        },
        param.field);
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

// The checks of a system before check_stable probes above its loads: a block of a few loads per
// system checks each once, as before.
constexpr int kChecksBeforeProbes = 8;

bool check_stable(const Task& t, KnownSystem& known, const BlockContext& block) {
  const double lambda = t.system().lambda;
  if (lambda <= known.stable_up_to) return true;
  if (lambda >= known.unstable_from && !block.on_unstable_error()) return false;
  // A block walks a system's loads upwards, one check each (a max flow for a graph). After a few,
  // a larger load is checked first: stable, it covers every load up to it and the step doubles;
  // unstable, it bounds the region and the step shrinks. A system of 10^4 loads takes a few dozen
  // checks, each verdict the one its own check would give (stability is monotone in lambda).
  if (++known.checks > kChecksBeforeProbes) {
    known.step = known.step > 0.0 ? known.step : lambda;
    const double probe = std::min(lambda + known.step, 0.5 * (lambda + known.unstable_from));
    if (probe > lambda && std::isfinite(probe)) {
      known.system->lambda = probe;
      const bool stable = model::check_stability(*known.system).ok;
      known.system->lambda = lambda;
      if (stable) {
        known.stable_up_to = probe;
        known.step *= 2.0;
        return true;
      }
      known.unstable_from = probe;
      known.step = 0.25 * (probe - lambda);
    }
  }
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
  std::string text = fmt::format("{} N={}", name_of(f.kind), f.N);
  for (const model::FamilyParamInfo& param : model::family_params())
    if (param.text != nullptr && in_effect(param, f)) text += param.text(f);
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

double per_server(const Task& t, double whole) {
  return whole / static_cast<double>(t.system().family.N);
}

// ---- results columns: the system's parameters ---------------------------------------------------

void add_system_parameters(std::vector<Column>& c) {
  c.push_back(parameter("family", "compatibility family", "", ColumnType::str, [](const Task& t) {
    return std::string(name_of(t.system().family.kind));
  }));
  c.push_back(parameter("N", "number of servers", "", ColumnType::i64,
                        [](const Task& t) { return std::int64_t{t.system().family.N}; }));
  // The family's parameters: their value where the task's family takes them, else -1 / NaN.
  for (const model::FamilyParamInfo& param : model::family_params()) {
    if (param.column.empty()) continue;
    const bool real = std::holds_alternative<double model::FamilyParams::*>(param.field);
    c.push_back(parameter(std::string(param.name), std::string(param.column), "",
                          real ? ColumnType::f64 : ColumnType::i64,
                          [&param, real](const Task& t) -> CellValue {
                            const model::FamilyParams& f = t.system().family;
                            if (!in_effect(param, f)) return real ? CellValue(kNaN) : kNone;
                            return std::visit(
                                [&f](auto member) -> CellValue {
                                  const auto& value = f.*member;
                                  using Field = std::decay_t<decltype(value)>;
                                  if constexpr (std::is_same_v<Field, double>)
                                    return value;
                                  else if constexpr (std::is_integral_v<Field>)
                                    return static_cast<std::int64_t>(value);
                                  else
                                    return kNone;  // lists have no column
                                },
                                param.field);
                          }));
  }
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
