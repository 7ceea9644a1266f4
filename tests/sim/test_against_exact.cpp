// Redundancy (cancel-on-completion) with exponential service against the exact product-form
// engine: a coverage test over random stable instances (random graphs, speeds and loads), with
// fixed seeds. The acceptance criterion: the exact E[Q] lies inside the simulator's 99% confidence
// interval in at least 95% of at least 50 instances, and P(Q = q) agrees within the intervals.
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>
#include <string>

#include "qsweep/common/error.hpp"
#include "qsweep/common/rng.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/model/stability.hpp"
#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

// A random family on N servers; nullopt when the draw is not a valid family (e.g. an
// Erdos-Renyi graph without edges), and the caller draws again.
std::optional<model::Family> random_family(Rng& rng, int N) {
  model::FamilyParams p;
  p.N = N;
  p.graph_seed = rng.next_u64();
  const FamilyKind kinds[] = {FamilyKind::ring,
                              FamilyKind::path,
                              FamilyKind::star,
                              FamilyKind::complete,
                              FamilyKind::random_regular,
                              FamilyKind::erdos_renyi,
                              FamilyKind::hetero_ring,
                              FamilyKind::singletons_full,
                              FamilyKind::tree_singletons,
                              FamilyKind::explicit_types,
                              FamilyKind::independent};
  p.kind = kinds[rng.below(std::size(kinds))];
  p.d = 2 + static_cast<int>(rng.below(2));
  p.degree = 2 + static_cast<int>(rng.below(2));
  p.edge_prob = 0.3 + 0.5 * rng.uniform();
  p.eps = 0.1 + 0.8 * rng.uniform();
  if (p.kind == FamilyKind::explicit_types) {
    const int count = 2 + static_cast<int>(rng.below(4));
    std::vector<double> weights;
    for (int t = 0; t < count; ++t) {
      model::ExplicitType type;
      for (int n = 0; n < N; ++n)
        if (rng.uniform() < 0.4) type.servers.push_back(n);
      if (type.servers.empty()) type.servers.push_back(static_cast<int>(rng.below(N)));
      p.types.push_back(type);
      weights.push_back(0.2 + rng.uniform());
    }
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    for (int t = 0; t < count; ++t)
      p.types[static_cast<std::size_t>(t)].p = weights[static_cast<std::size_t>(t)] / total;
  }
  const model::FamilyUses uses = model::family_uses(p.kind);
  model::FamilyParams clean;  // only the parameters this family takes
  clean.kind = p.kind;
  clean.N = N;
  if (uses.d) clean.d = p.d;
  if (uses.eps) clean.eps = p.eps;
  if (uses.degree) clean.degree = p.degree;
  if (uses.edge_prob) clean.edge_prob = p.edge_prob;
  if (uses.graph_seed) clean.graph_seed = p.graph_seed;
  if (uses.types) clean.types = p.types;
  try {
    return model::Family(clean);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// Largest stable per-server arrival rate, by bisection on the stability check (eq. 2).
double stability_limit(const model::Family& family, const std::vector<double>& speeds) {
  double lo = 0.0, hi = std::accumulate(speeds.begin(), speeds.end(), 0.0) / family.num_servers();
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (model::check_stability(model::System(family, speeds, mid)).ok ? lo : hi) = mid;
  }
  return lo;
}

struct Instance {
  model::System system;
  std::string label;
};

std::vector<Instance> random_instances(int count, std::uint64_t seed) {
  Rng rng(seed, 0);
  std::vector<Instance> instances;
  while (static_cast<int>(instances.size()) < count) {
    const int N = 3 + static_cast<int>(rng.below(4));
    auto family = random_family(rng, N);
    if (!family) continue;
    std::vector<double> speeds;
    for (int n = 0; n < N; ++n) speeds.push_back(0.5 + 1.5 * rng.uniform());
    const double load = 0.3 + 0.65 * rng.uniform();  // fraction of the stability limit
    const double lambda = load * stability_limit(*family, speeds);
    const std::string label = std::string(qsweep::name_of(family->kind())) +
                              " N=" + std::to_string(N) + " load=" + std::to_string(load);
    instances.push_back({model::System(std::move(*family), speeds, lambda), label});
  }
  return instances;
}

struct Coverage {
  int inside = 0, total = 0;
  void check(double estimate, double hw99, double truth) {
    ++total;
    if (std::abs(estimate - truth) <= hw99) ++inside;
  }
  double fraction() const { return total == 0 ? 0.0 : static_cast<double>(inside) / total; }
};

void run_coverage(Kernel kernel, int count, std::uint64_t instance_seed, double min_EQ_coverage) {
  constexpr int kQmax = 8;
  Coverage EQ, VarQ, pmf, type, server;
  int index = 0;
  for (const Instance& instance : random_instances(count, instance_seed)) {
    exact::Options eo;
    eo.qmax = kQmax;
    eo.light_traffic = false;
    const exact::Result truth = exact::evaluate(instance.system, eo);
    ASSERT_TRUE(truth.stable) << instance.label;
    Options o = testing::options(Policy::redundancy_coc, 2e4, -1.0, 10);
    o.qmax = kQmax;
    const Result r = simulate(instance.system, o, 7, static_cast<std::uint64_t>(index++), kernel);
    const double f = r.hw99_factor;
    EQ.check(r.EQ, f * r.EQ_hw, truth.EQ);
    if (std::abs(r.EQ - truth.EQ) > f * r.EQ_hw)
      std::printf("  outside: %s EQ exact %.4f sim %.4f +- %.4f (99%%)\n", instance.label.c_str(),
                  truth.EQ, r.EQ, f * r.EQ_hw);
    VarQ.check(r.VarQ, f * r.VarQ_hw, truth.VarQ);
    for (int q = 0; q <= kQmax; ++q) pmf.check(r.pmf[q], f * r.pmf_hw[q], truth.pmf[q]);
    ASSERT_EQ(r.type_servers, truth.type_servers) << instance.label;
    for (std::size_t k = 0; k < r.EQ_type.size(); ++k)
      type.check(r.EQ_type[k], f * r.EQ_type_hw[k], truth.EQ_type[k]);
    for (std::size_t n = 0; n < r.ER_server.size(); ++n)
      server.check(r.ER_server[n], f * r.ER_server_hw[n], truth.ER_server[n]);
  }
  std::printf(
      "99%% CI coverage over %d instances: E[Q] %d/%d, Var[Q] %d/%d, P(Q=q) %d/%d, "
      "E[Q_S] %d/%d, E[R_n] %d/%d\n",
      count, EQ.inside, EQ.total, VarQ.inside, VarQ.total, pmf.inside, pmf.total, type.inside,
      type.total, server.inside, server.total);
  EXPECT_GE(EQ.fraction(), min_EQ_coverage);
  EXPECT_GE(pmf.fraction(), 0.95);
  EXPECT_GE(type.fraction(), 0.95);
  EXPECT_GE(server.fraction(), 0.95);
  // The delta-method interval of a variance is rougher with 10 replications.
  EXPECT_GE(VarQ.fraction(), 0.85);
}

// The acceptance test: 50 instances, Markov (central-queue race) kernel.
TEST(AgainstExact, CoverageOfFiftyRandomInstancesMarkovKernel) {
  run_coverage(Kernel::markov, 50, 101, 0.95);
}

// The general event-driven kernel (residual sizes, event heap) on exponential sizes must agree
// too; 20 instances, at least 18 covered.
TEST(AgainstExact, CoverageOfRandomInstancesEventKernel) {
  run_coverage(Kernel::event_driven, 20, 202, 0.90);
}

// Cancel-on-start with the longest-idle rule (longest_idle, event-driven kernel) against the
// exact cancel-on-start engine (itself checked against brute-force chains in tests/exact): 25
// random instances with unequal speeds; E[Q], P(Q = q), E[Q_S] and E[T_S] in the 99% intervals.
TEST(AgainstExact, CancelOnStartLongestIdleCoverage) {
  constexpr int kQmax = 6;
  constexpr int kCount = 25;
  Coverage EQ, pmf, type, sojourn;
  int index = 0;
  for (const Instance& instance : random_instances(kCount, 303)) {
    exact::Options eo;
    eo.policy = exact::Policy::redundancy_cos;
    eo.qmax = kQmax;
    const exact::Result truth = exact::evaluate(instance.system, eo);
    ASSERT_TRUE(truth.stable) << instance.label;
    Options o = testing::options(Policy::redundancy_cos, 2e4, -1.0, 10);
    o.longest_idle = true;
    o.qmax = kQmax;
    const Result r = simulate(instance.system, o, 9, static_cast<std::uint64_t>(index++));
    const double f = r.hw99_factor;
    EQ.check(r.EQ, f * r.EQ_hw, truth.EQ);
    if (std::abs(r.EQ - truth.EQ) > f * r.EQ_hw)
      std::printf("  outside: %s EQ exact %.4f sim %.4f +- %.4f (99%%)\n", instance.label.c_str(),
                  truth.EQ, r.EQ, f * r.EQ_hw);
    for (int q = 0; q <= kQmax; ++q) pmf.check(r.pmf[q], f * r.pmf_hw[q], truth.pmf[q]);
    ASSERT_EQ(r.type_servers, truth.type_servers) << instance.label;
    for (std::size_t k = 0; k < r.EQ_type.size(); ++k) {
      type.check(r.EQ_type[k], f * r.EQ_type_hw[k], truth.EQ_type[k]);
      sojourn.check(r.ET_type[k], f * r.ET_type_hw[k], truth.ET_type[k]);
    }
  }
  std::printf(
      "cancel-on-start, 99%% CI coverage over %d instances: E[Q] %d/%d, P(Q=q) %d/%d, "
      "E[Q_S] %d/%d, E[T_S] %d/%d\n",
      kCount, EQ.inside, EQ.total, pmf.inside, pmf.total, type.inside, type.total, sojourn.inside,
      sojourn.total);
  EXPECT_GE(EQ.fraction(), 0.92);
  EXPECT_GE(pmf.fraction(), 0.95);
  EXPECT_GE(type.fraction(), 0.95);
  EXPECT_GE(sojourn.fraction(), 0.95);
}

}  // namespace
}  // namespace qsweep::sim
