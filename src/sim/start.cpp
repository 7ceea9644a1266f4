// Starting states of a replication (docs/sim.md, "Starting states").
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "qsweep/common/enum_names.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/sim/kernel.hpp"

namespace qsweep::sim {

namespace {

// The mean-field policy whose fixed point belongs to this dispatching on complete: jsq and jiq
// over all N servers, jsq over a sampled d (the family's) = power_of_d, power_of_d with policy_d.
meanfield::Options fixed_point_policy(const model::System& system, const Options& options) {
  const model::Family& family = system.family;
  const auto refuse = [&](const std::string& why) {
    throw InputError(
        fmt::format("start fixed_point applies to {}; expected start empty or counts", why));
  };
  if (family.kind() != model::FamilyKind::complete || !system.identical_speeds() ||
      options.service.kind != ServiceKind::exponential)
    refuse(
        "the complete family with identical speeds and exponential service (the mean-field "
        "model)");
  const int N = system.N();
  const int d = family.params().d;
  meanfield::Options mf;
  mf.lambda = system.rho();
  switch (options.policy) {
    case Policy::random:
      mf.policy = meanfield::Policy::random;
      break;
    case Policy::power_of_d:
      mf.policy = meanfield::Policy::power_of_d;
      mf.policy_d = std::min(options.policy_d, d);
      break;
    case Policy::jsq:
      mf.policy = d >= N ? meanfield::Policy::jsq : meanfield::Policy::power_of_d;
      mf.policy_d = d;
      break;
    case Policy::jiq:
      if (d < N) refuse("jiq over all N servers (d = N); JIQ(d) has no fixed point in qsweep");
      mf.policy = meanfield::Policy::jiq;
      break;
    default:
      refuse("dispatching (jsq, jiq, random, power_of_d), not redundancy");
  }
  if (!(mf.lambda < 1.0)) refuse(fmt::format("a stable load (rho = {:g} >= 1)", mf.lambda));
  return mf;
}

// Weights of lengths 0, 1, ... -> number of servers of each length, summing to N (largest
// remainders; ties to the shorter length).
std::vector<std::uint32_t> servers_per_length(const std::vector<double>& weights, int N) {
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<std::uint32_t> count(weights.size());
  std::vector<std::pair<double, std::size_t>> remainder;
  std::uint64_t placed = 0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const double share = weights[k] / total * N;
    count[k] = static_cast<std::uint32_t>(std::floor(share));
    placed += count[k];
    remainder.emplace_back(-(share - std::floor(share)), k);
  }
  std::sort(remainder.begin(), remainder.end());
  for (std::size_t i = 0; placed < static_cast<std::uint64_t>(N); ++i, ++placed)
    ++count[remainder[i % remainder.size()].second];
  return count;
}

std::vector<double> start_weights(const model::System& system, const Options& options) {
  if (options.start == Start::counts) return options.initial_counts;
  const meanfield::Options mf = fixed_point_policy(system, options);
  // x_k (servers with >= k jobs) to the fraction with exactly k; levels below 1 / (10 N) hold
  // no server after rounding.
  meanfield::Options levels_of = mf;
  levels_of.tolerance = 0.1 / system.N();
  const std::vector<double> x =
      meanfield::fixed_point(mf.policy, mf.policy_d, mf.lambda, meanfield::levels(levels_of));
  std::vector<double> weights(x.size() + 1);
  for (std::size_t k = 0; k <= x.size(); ++k)
    weights[k] = (k == 0 ? 1.0 : x[k - 1]) - (k < x.size() ? x[k] : 0.0);
  return weights;
}

void check_counts(const model::System& system, const std::vector<double>& weights) {
  double total = 0.0, jobs = 0.0;
  for (std::size_t k = 0; k < weights.size(); ++k) {
    if (!(weights[k] >= 0.0 && std::isfinite(weights[k])))
      throw InputError(
          fmt::format("initial_counts[{}] = {}; expected a finite weight >= 0", k, weights[k]));
    total += weights[k];
    jobs += weights[k] * static_cast<double>(k);
  }
  if (!(total > 0.0 && std::isfinite(total)))
    throw InputError("initial_counts sum to 0; expected a positive total (start counts)");
  // Rounding adds at most one job per server.
  if (jobs / total * system.N() + system.N() > static_cast<double>(kMaxJobsInSystem))
    throw InputError(
        fmt::format("initial_counts put about {:.3g} jobs in the system; expected at "
                    "most {} (the simulator's limit)",
                    jobs / total * system.N(), kMaxJobsInSystem));
}

// The start's weights of lengths 0, 1, ..., checked (options.start is not empty).
std::vector<double> checked_weights(const model::System& system, const Options& options) {
  if (options.policy == Policy::redundancy_coc)
    throw InputError(
        fmt::format("start {} does not apply to redundancy_coc (its state is the order of the "
                    "jobs' types, not queue lengths); expected start empty, with a warm-up",
                    name_of(options.start)));
  std::vector<double> weights = start_weights(system, options);
  check_counts(system, weights);
  return weights;
}

}  // namespace

void validate_start(const model::System& system, const Options& options) {
  if (options.start != Start::empty) checked_weights(system, options);
}

std::vector<std::uint32_t> start_lengths(const model::System& system, const Options& options) {
  if (options.start == Start::empty) return {};
  const std::vector<double> weights = checked_weights(system, options);
  const std::vector<std::uint32_t> count = servers_per_length(weights, system.N());
  std::vector<std::uint32_t> lengths;
  lengths.reserve(static_cast<std::size_t>(system.N()));
  for (std::size_t k = 0; k < count.size(); ++k)
    lengths.insert(lengths.end(), count[k], static_cast<std::uint32_t>(k));
  return lengths;
}

}  // namespace qsweep::sim
