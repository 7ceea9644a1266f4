#include <fmt/format.h>

#include <bit>
#include <cmath>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/exact/lattice_array.hpp"  // release_kept_block
#include "qsweep/model/family_registry.hpp"
#include "qsweep/model/stability.hpp"

namespace qsweep::exact {
namespace {

// P(Q = q) and alpha_q cost qmax passes; beyond this a request is a mistake, not a study.
constexpr int kMaxQmax = 1'000'000;

// The families with a symmetric engine (with identical speeds), for messages.
std::vector<std::string_view> symmetric_families() {
  return model::family_names([](const model::FamilyInfo& f) { return f.size_symmetric; });
}

// Marks `v` invalid; returns true so that checks read "if (...) return reject(...)".
bool reject(Validation& v, std::string option, std::string problem, std::string expected) {
  v.option = std::move(option);
  v.problem = std::move(problem);
  v.expected = std::move(expected);
  return true;
}

bool engine_rejects(const model::System& system, const Options& options, bool lumps,
                    int max_general_servers, Validation& v) {
  if (options.engine == Engine::symmetric && !lumps)
    return reject(v, "engine",
                  fmt::format("engine symmetric does not apply to family {} with N = {}{}",
                              qsweep::name_of(system.family.kind()), system.N(),
                              system.identical_speeds() ? "" : " and unequal speeds"),
                  fmt::format("family {} with identical speeds",
                              model::list_text(symmetric_families(), " or ")));
  if (v.engine == Engine::general && system.N() > max_general_servers)
    return reject(
        v, "N",
        fmt::format("N = {} is too large for the general exact engine (it stores 2^(N+4) bytes) "
                    "and family {}{} has no symmetric engine",
                    system.N(), qsweep::name_of(system.family.kind()),
                    system.identical_speeds() ? "" : " with unequal speeds"),
        fmt::format("N <= {}, or a family with a symmetric engine ({}; identical speeds)",
                    max_general_servers, model::list_text(symmetric_families(), ", ")));
  if (options.qmax < 0 || options.qmax > kMaxQmax)
    return reject(v, "qmax", fmt::format("qmax = {} is out of range", options.qmax),
                  fmt::format("0 <= qmax <= {}", kMaxQmax));
  return false;
}

// The type count is Family::num_types(): an explicit family's repeated set counts twice here and
// once in the result (whose joint_shape says so).
bool joint_rejects(const model::System& system, const Options& options, Validation& v) {
  const int qmax = options.joint_qmax, bin = options.joint_bin;
  if (qmax == -1)
    return bin != 1 && reject(v, "joint_bin", fmt::format("joint_bin = {} without joint_qmax", bin),
                              "joint_qmax >= 0 with it (the joint pmf is off by default)");
  if (qmax < -1 || qmax > kMaxQmax)
    return reject(v, "joint_qmax", fmt::format("joint_qmax = {} is out of range", qmax),
                  fmt::format("-1 (off) or 0 <= joint_qmax <= {}", kMaxQmax));
  if (system.N() > model::kMaxMaskServers)
    return reject(v, "joint_qmax",
                  fmt::format("the joint pmf lists the job types as sets of at most {} servers and "
                              "N = {}",
                              model::kMaxMaskServers, system.N()),
                  fmt::format("N <= {} for joint_qmax", model::kMaxMaskServers));
  const double types = system.family.num_types();
  if (types > kMaxJointTypes)
    return reject(v, "joint_qmax",
                  fmt::format("the joint pmf has one axis per job type and family {} with N = {} "
                              "has {:.3g} types",
                              qsweep::name_of(system.family.kind()), system.N(), types),
                  fmt::format("a family with at most {} job types", kMaxJointTypes));
  const double cells = std::pow(qmax + 1.0, types);
  if (cells > kMaxJointCells)
    return reject(
        v, "joint_qmax",
        fmt::format("joint_qmax = {} with {} types is a grid of {:.3g} counts", qmax, types, cells),
        fmt::format("(joint_qmax + 1)^types <= {:g}", kMaxJointCells));
  if (bin < 1 || bin > qmax + 1)
    return reject(v, "joint_bin", fmt::format("joint_bin = {} is out of range", bin),
                  fmt::format("1 <= joint_bin <= joint_qmax + 1 = {}", qmax + 1));
  const double per_axis = std::ceil((qmax + 1.0) / bin);
  if (std::pow(per_axis, types) > kMaxJointBins)
    return reject(v, "joint_qmax",
                  fmt::format("joint_qmax = {} with joint_bin = {} gives {:.3g} bins ({} per axis, "
                              "{} types)",
                              qmax, bin, std::pow(per_axis, types), per_axis, types),
                  fmt::format("(bins per axis)^types <= {:g} with bins per axis = "
                              "ceil((joint_qmax + 1) / joint_bin): a larger joint_bin",
                              kMaxJointBins));
  return false;
}

// Sojourn times (Little), heavy-traffic scaling and per-server means from per-type means.
// Cancel-on-start has no replicas waiting at servers: no E[R_n] (with_servers = false).
void fill_per_type(const model::System& system, const std::vector<model::JobType>& types,
                   const std::vector<double>& EQ_type, Result& r, bool with_servers = true) {
  const double L = system.total_arrival_rate();
  if (with_servers) r.ER_server.assign(static_cast<std::size_t>(system.N()), 0.0);
  for (std::size_t t = 0; t < types.size(); ++t) {
    const double eq = EQ_type[t], p = types[t].p;
    r.type_servers.push_back(types[t].servers);
    r.type_p.push_back(p);
    r.EQ_type.push_back(eq);
    r.ET_type.push_back(eq / (L * p));
    r.scaled_EQ_type.push_back((1.0 - r.rho) * eq / p);
    for (model::ServerMask m = with_servers ? types[t].servers : 0; m != 0; m &= m - 1) {
      r.ER_server[static_cast<std::size_t>(std::countr_zero(m))] += eq;
    }
  }
}

void fill_classes(const model::System& system, std::vector<TypeClass> classes, Result& r) {
  const double L = system.total_arrival_rate();
  double per_server = 0.0;  // by symmetry every server is in count * size / N types of a class
  for (auto& c : classes) {
    c.ET = c.EQ / (L * c.p);
    c.scaled_EQ = (1.0 - r.rho) * c.EQ / c.p;
    per_server += c.count * c.size * c.EQ / system.N();
  }
  if (system.family.num_types() <= kMaxListedTypes && system.N() <= model::kMaxMaskServers) {
    const auto types = system.family.enumerate();
    std::vector<double> EQ_type;
    for (const auto& type : types) {
      const int size = std::popcount(type.servers);
      for (const auto& c : classes) {
        if (c.size == size) EQ_type.push_back(c.EQ);
      }
    }
    fill_per_type(system, types, EQ_type, r);
  }
  r.ER_server.assign(static_cast<std::size_t>(system.N()), per_server);
  r.type_classes = std::move(classes);
}

// Results whose estimated relative rounding error exceeds this carry a warning.
constexpr double kConditioningWarning = 1e-9;

std::string join_warnings(const std::vector<std::string>& sentences) {
  std::string text;
  for (const auto& sentence : sentences)
    if (!sentence.empty()) text += (text.empty() ? "" : "; ") + sentence;
  return text;
}

// Cancel-on-start: its own lattice engine (Validation::engine general, Result::engine
// "cancel-on-start"), no symmetric engine, no joint pmf.
bool cancel_on_start_rejects(const model::System& system, const Options& options, Validation& v) {
  if (options.engine == Engine::symmetric)
    return reject(v, "engine",
                  "engine symmetric has no cancel-on-start version (policy redundancy_cos)",
                  "engine automatic or general with policy redundancy_cos");
  if (system.N() > kMaxCancelOnStartServers)
    return reject(v, "N",
                  fmt::format("N = {} is too large for the cancel-on-start exact engine (it stores "
                              "48 x 2^N bytes)",
                              system.N()),
                  fmt::format("N <= {} with policy redundancy_cos", kMaxCancelOnStartServers));
  if (options.joint_qmax != -1 || options.joint_bin != 1)
    return reject(v, options.joint_qmax != -1 ? "joint_qmax" : "joint_bin",
                  "the joint pmf of the per-type counts is computed for policy redundancy_coc only",
                  "no joint_qmax with policy redundancy_cos");
  if (options.qmax < 0 || options.qmax > kMaxQmax)
    return reject(v, "qmax", fmt::format("qmax = {} is out of range", options.qmax),
                  fmt::format("0 <= qmax <= {}", kMaxQmax));
  return false;
}

}  // namespace

Validation validate(const model::System& system, const Options& options) {
  return detail::validate_with(system, options, kMaxGeneralServers);
}

Validation detail::validate_with(const model::System& system, const Options& options,
                                 int max_general_servers) {
  Validation v;
  if (options.policy == Policy::redundancy_cos) {
    v.engine = Engine::general;
    cancel_on_start_rejects(system, options, v);
    return v;
  }
  const bool lumps = detail::symmetric_applies(system);
  const bool symmetric =
      options.engine == Engine::symmetric || (options.engine == Engine::automatic && lumps);
  v.engine = symmetric ? Engine::symmetric : Engine::general;
  if (!engine_rejects(system, options, lumps, max_general_servers, v))
    joint_rejects(system, options, v);
  return v;
}

Result evaluate(const model::System& system, const Options& options) {
  return detail::evaluate_with(system, options, detail::general_engine, kMaxGeneralServers);
}

Result detail::evaluate_with(const model::System& system, const Options& options,
                             const GeneralEngine& general, int max_general_servers) {
  const Validation validation = validate_with(system, options, max_general_servers);
  if (!validation.ok())
    throw InputError(
        fmt::format("exact: {}; expected {}", validation.problem, validation.expected));
  const bool symmetric = validation.engine == Engine::symmetric;
  const bool cancel_on_start = options.policy == Policy::redundancy_cos;

  Result r;
  r.engine = symmetric         ? detail::symmetric_engine_name(system)
             : cancel_on_start ? "cancel-on-start"
                               : "general";
  r.rho = system.rho();
  const auto local = model::check_local_stability(system.family, system.speeds);
  r.locally_stable = local.ok;
  const auto stability = model::check_stability(system);
  std::vector<std::string> warnings{stability.warning, local.warning};
  if (!stability.ok) {
    r.stable = false;
    r.unstable_reason = stability.describe();
    r.warning = join_warnings(warnings);
    return r;
  }

  std::vector<model::JobType> types;
  detail::Moments m;
  // A block kept from an earlier task (lattice_array.hpp) is for the general engine's lattice;
  // the other engines and the joint pmf run without it, as their memory estimates assume.
  if (symmetric || cancel_on_start) release_kept_block();
  if (symmetric) {
    m = detail::symmetric_engine(system, options.qmax, options.per_type);
  } else if (cancel_on_start) {
    types = system.family.enumerate();
    m = detail::cancel_on_start_engine(types, system.speeds, system.total_arrival_rate(),
                                       options.qmax, options.per_type);
  } else {
    types = system.family.enumerate();
    m = general(types, system.speeds, system.total_arrival_rate(), options.qmax, options.per_type);
  }
  if (!m.violating_set.empty())  // stable (decided exactly above), but not in doubles
    throw Error(fmt::format(
        "exact: the system is stable, but so close to the boundary of eq. (2) that mu(B) - lam(B) "
        "rounds to {:.3g} <= 0 in double precision at servers {}; expected a load further from "
        "the boundary",
        m.slack, model::set_text(m.violating_set)));
  // d(B) = mu(B) - lam(B) is computed from sums of the speeds and the rates of the types inside
  // B, each term rounded (the symmetric engines: a few roundings per size): its relative error
  // is at most that many eps times the condition (mu(B) + lam(B)) / d(B).
  const double roundings =
      symmetric ? 8.0
                : static_cast<double>(types.size() + static_cast<std::size_t>(system.N())) + 4;
  const double rounding_error = roundings * std::numeric_limits<double>::epsilon() * m.condition;
  if (rounding_error > kConditioningWarning)
    warnings.insert(warnings.begin(),
                    fmt::format("near the stability boundary (mu(B) - lam(B) down to {:.2g} of "
                                "mu(B) + lam(B)): rounding limits the results to a relative error "
                                "of about {:.1g}",
                                1.0 / m.condition, rounding_error));
  r.warning = join_warnings(warnings);

  const double L = system.total_arrival_rate();
  r.unions = m.unions;
  r.log_C = -m.log_f;
  r.C = std::exp(r.log_C);
  r.EQ = m.EQ;
  r.VarQ = m.VarQ;
  r.ET = m.EQ / L;
  r.scaled_EQ = (1.0 - r.rho) * m.EQ;
  const double log_load = std::log(L / system.mean_speed());  // ln(N rho)
  for (std::size_t q = 0; q < m.log_weight.size(); ++q) {
    r.pmf.push_back(std::exp(m.log_weight[q] - m.log_f));
    if (options.light_traffic)
      r.alpha.push_back(std::exp(m.log_weight[q] - static_cast<double>(q) * log_load));
  }
  if (options.per_type) {
    if (symmetric) {
      fill_classes(system, std::move(m.classes), r);
    } else {
      fill_per_type(system, types, m.EQ_type, r, !cancel_on_start);
    }
  }
  if (options.joint_qmax >= 0) {
    release_kept_block();
    if (types.empty()) types = system.family.enumerate();  // symmetric engines: at most 3 here
    detail::joint_distribution(types, system.speeds, L, r.C, options.joint_qmax, options.joint_bin,
                               r);
  }
  return r;
}

}  // namespace qsweep::exact
