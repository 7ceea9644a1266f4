#include "qsweep/sweep/cost.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cost_detail.hpp"
#include "qsweep/exact/exact.hpp"

namespace qsweep::sweep {
namespace detail {
namespace {

// Seconds per elementary step, measured with `qsweep eval` on the development machine
// (docs/sweep-format.md, "Cost estimates"); only the orders of magnitude matter.
constexpr double kSecondsPerGeneralStep = 1e-8;    // one (union, type, series term) update
constexpr double kSecondsPerSymmetricStep = 2e-8;  // one (size, growth, series term) update
constexpr double kSecondsPerListedType = 5e-8;     // listing a type's values (per_type)
constexpr double kSecondsPerJointCell = 2e-9;      // one count vector of the joint pmf
constexpr double kSecondsPerEvent = 1.6e-7;        // one simulated arrival or departure
constexpr double kSecondsPerPathEvent = 3.5e-8;    // one event of an occupancy-process path
constexpr double kSecondsPerChainStep = 1.5e-8;    // one (state, uniformization step) update

// Unions the general engine visits: every union of types. With singletons (or dense types)
// nearly all 2^N sets; on a cycle or path only the sets without an isolated server, about
// psi^N with psi = 1.7549 (the real root of x^3 = 2x^2 - x + 1); on a star the sets holding the
// centre, 2^(N-1). Other graphs count as 2^N, an upper bound.
double union_count(const model::System& system, std::string& text) {
  const int N = system.N();
  switch (system.family.kind()) {
    case model::FamilyKind::ring:
    case model::FamilyKind::hetero_ring:
    case model::FamilyKind::path:
      text = fmt::format("1.755^{}", N);
      return std::pow(1.7548776662466927, N);
    case model::FamilyKind::star:
      text = fmt::format("2^{}", N - 1);
      return std::ldexp(1.0, N - 1);
    default:
      text = fmt::format("2^{}", N);
      return std::ldexp(1.0, N);
  }
}

// The lattice (or lumped) passes of the chosen engine.
CostEstimate engine_cost(const Task& task, const model::System& system) {
  const double terms = task.exact.qmax + 3.0;  // the series up to qmax, plus the moment passes
  const double types = system.family.num_types();
  const bool symmetric = exact::validate(system, task.exact).engine == exact::Engine::symmetric;
  const int N = system.N();
  if (symmetric) {
    // A union of size u grows by 0..d servers (complete, d = 1 for independent); singletons_full
    // grows by one server or jumps to all N.
    const int growth = system.family.is_singletons_full() ? 2 : system.family.max_type_size() + 1;
    double seconds = N * static_cast<double>(growth) * terms * kSecondsPerSymmetricStep;
    if (task.exact.per_type && types <= exact::kMaxListedTypes)
      seconds += types * kSecondsPerListedType;
    return {seconds,
            fmt::format("{} sizes x {} growths x {:g} terms (symmetric)", N + 1, growth, terms)};
  }
  std::string unions_text;
  const double unions = union_count(system, unions_text);
  return {unions * types * terms * kSecondsPerGeneralStep,
          fmt::format("{} unions x {:g} types x {:g} terms", unions_text, types, terms)};
}

CostEstimate exact_cost(const Task& task, const model::System& system) {
  CostEstimate cost = engine_cost(task, system);
  if (task.exact.joint_qmax >= 0) {
    const double types = system.family.num_types();
    const double cells = std::pow(task.exact.joint_qmax + 1.0, types);
    cost.seconds += cells * kSecondsPerJointCell;
    cost.formula += fmt::format(" + {:.3g} joint pmf cells ({} + 1)^{:g}", cells,
                                task.exact.joint_qmax, types);
  }
  return cost;
}

CostEstimate simulate_cost(const Task& task, const model::System& system) {
  const auto& o = task.simulate;
  // A detected warm-up costs a pilot run and discards about a tenth of the horizon.
  const double warmup = o.warmup >= 0.0 ? o.warmup : 0.2 * o.horizon;
  const double replications = o.target_rel_half_width > 0.0 ? o.max_replications : o.replications;
  const double events = 2.0 * system.total_arrival_rate() * (o.horizon + warmup) * replications;
  return {events * kSecondsPerEvent,
          fmt::format("{:.3g} events (2 x {:g} arrivals/time x {:g} time x {:g} replications)",
                      events, system.total_arrival_rate(), o.horizon + warmup, replications)};
}

CostEstimate ldp_cost(const Task& task) {
  const auto& o = task.ldp;
  const double n = static_cast<double>(o.n);
  const double path_events = n * (1.0 + o.lambda) * o.T;
  if (o.estimator == ldp::Estimator::exact) {
    // Occupancy states: queue-length counts over 0..j-1 summing to n, C(n + j - 1, j - 1);
    // uniformization needs about the expected number of events plus a few standard deviations.
    const double states =
        std::exp(std::lgamma(n + o.j) - std::lgamma(n + 1.0) - std::lgamma(o.j * 1.0));
    const double steps = path_events + 10.0 * std::sqrt(path_events) + 10.0;
    return {states * steps * kSecondsPerChainStep,
            fmt::format("{:.3g} chain states x {:.3g} uniformization steps", states, steps)};
  }
  return {o.samples * path_events * kSecondsPerPathEvent,
          fmt::format("{:g} paths x {:.3g} events", o.samples, path_events)};
}

}  // namespace

CostEstimate estimate_cost(const Task& task, const model::System* system) {
  switch (task.method) {
    case Method::exact:
      return exact_cost(task, *system);
    case Method::simulate:
      return simulate_cost(task, *system);
    case Method::ldp:
      return ldp_cost(task);
  }
  return {};
}

}  // namespace detail

CostEstimate estimate_cost(const Task& task) {
  if (task.method == Method::ldp) return detail::estimate_cost(task, nullptr);
  const model::System system(model::Family(task.family), task.speeds, task.lambda);
  return detail::estimate_cost(task, &system);
}

}  // namespace qsweep::sweep
