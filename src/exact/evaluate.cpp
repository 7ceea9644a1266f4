#include <fmt/format.h>

#include <bit>
#include <cmath>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/model/stability.hpp"

namespace qsweep::exact {
namespace {

// P(Q = q) and alpha_q cost qmax passes; beyond this a request is a mistake, not a study.
constexpr int kMaxQmax = 1'000'000;

bool use_symmetric(const model::System& system, Engine engine) {
  switch (engine) {
    case Engine::general: return false;
    case Engine::automatic: return detail::symmetric_applies(system);
    case Engine::symmetric:
      if (!detail::symmetric_applies(system))
        throw InputError(fmt::format(
            "exact: the symmetric engine needs a complete, independent or singletons_full family on "
            "identical speeds; got family {} with N = {}{}",
            model::to_string(system.family.kind()), system.N(),
            system.identical_speeds() ? "" : " and unequal speeds"));
      return true;
  }
  return false;
}

void check_options(const model::System& system, const Options& options, bool symmetric) {
  if (options.qmax < 0 || options.qmax > kMaxQmax)
    throw InputError(fmt::format("exact: qmax = {} is out of range; expected 0 <= qmax <= {}",
                                 options.qmax, kMaxQmax));
  if (!symmetric && system.N() > kMaxGeneralServers)
    throw InputError(fmt::format(
        "exact: N = {} is too large for the general engine (at most {}: it stores 2^(N+4) bytes); "
        "family {} has no symmetric engine{}",
        system.N(), kMaxGeneralServers, model::to_string(system.family.kind()),
        system.identical_speeds() ? "" : " with unequal speeds"));
}

// Sojourn times (Little), heavy-traffic scaling and per-server means from per-type means.
void fill_per_type(const model::System& system, const std::vector<model::JobType>& types,
                   const std::vector<double>& EQ_type, Result& r) {
  const double L = system.total_arrival_rate();
  r.ER_server.assign(static_cast<std::size_t>(system.N()), 0.0);
  for (std::size_t t = 0; t < types.size(); ++t) {
    const double eq = EQ_type[t], p = types[t].p;
    r.type_servers.push_back(types[t].servers);
    r.type_p.push_back(p);
    r.EQ_type.push_back(eq);
    r.ET_type.push_back(eq / (L * p));
    r.scaled_EQ_type.push_back((1.0 - r.rho) * eq / p);
    for (model::ServerMask m = types[t].servers; m != 0; m &= m - 1) {
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

}  // namespace

Result evaluate(const model::System& system, const Options& options) {
  const bool symmetric = use_symmetric(system, options.engine);
  check_options(system, options, symmetric);

  Result r;
  r.engine = symmetric ? detail::symmetric_engine_name(system) : "general";
  r.rho = system.rho();
  r.locally_stable = model::check_local_stability(system.family, system.speeds).ok;
  const auto stability = model::check_stability(system);
  if (!stability.ok) {
    r.stable = false;
    r.unstable_reason = stability.describe();
    return r;
  }

  std::vector<model::JobType> types;
  detail::Moments m;
  if (symmetric) {
    m = detail::symmetric_engine(system, options.qmax, options.per_type);
  } else {
    types = system.family.enumerate();
    m = detail::general_engine(types, system.speeds, system.total_arrival_rate(), options.qmax,
                               options.per_type);
  }
  if (!m.violating_set.empty()) {
    r.stable = false;
    r.unstable_reason = model::StabilityReport{false, m.violating_set, m.slack}.describe();
    return r;
  }

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
    if (options.light_traffic) r.alpha.push_back(std::exp(m.log_weight[q] - static_cast<double>(q) * log_load));
  }
  if (options.per_type) {
    if (symmetric) {
      fill_classes(system, std::move(m.classes), r);
    } else {
      fill_per_type(system, types, m.EQ_type, r);
    }
  }
  return r;
}

}  // namespace qsweep::exact
