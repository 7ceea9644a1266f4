// Dispatching policies (jsq, jiq, random, power_of_d) with exponential service against an
// independent brute-force computation: the Markov chain of the queue-length vector on a few
// servers, truncated at K jobs per server and solved by Gauss-Seidel. Fixed seeds; tolerances
// from the reported half-widths (sim_test_util.hpp).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <vector>

#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

struct ChainResult {
  double EQ = 0.0;
  std::vector<double> ER, pmf;
};

// Probability that a job of type `mask` joins each server, given queue lengths q.
std::vector<double> routing(Policy policy, int policy_d, model::ServerMask mask,
                            const std::vector<int>& q) {
  const int N = static_cast<int>(q.size());
  std::vector<int> S;
  for (int n = 0; n < N; ++n)
    if (mask >> n & 1) S.push_back(n);
  std::vector<double> p(static_cast<std::size_t>(N), 0.0);
  auto uniform_over = [&](const std::vector<int>& set, double weight) {
    for (int n : set) p[static_cast<std::size_t>(n)] += weight / static_cast<double>(set.size());
  };
  auto shortest = [&](const std::vector<int>& set) {
    int best = 1 << 30;
    for (int n : set) best = std::min(best, q[static_cast<std::size_t>(n)]);
    std::vector<int> out;
    for (int n : set)
      if (q[static_cast<std::size_t>(n)] == best) out.push_back(n);
    return out;
  };
  switch (policy) {
    case Policy::random:
      uniform_over(S, 1.0);
      break;
    case Policy::jsq:
      uniform_over(shortest(S), 1.0);
      break;
    case Policy::jiq: {
      std::vector<int> idle;
      for (int n : S)
        if (q[static_cast<std::size_t>(n)] == 0) idle.push_back(n);
      uniform_over(idle.empty() ? S : idle, 1.0);
      break;
    }
    case Policy::power_of_d: {
      // All subsets of S of size min(d, |S|), equally likely.
      const int k = static_cast<int>(S.size()), d = std::min(policy_d, k);
      std::vector<std::vector<int>> subsets;
      for (unsigned bits = 0; bits < (1U << k); ++bits) {
        if (std::popcount(bits) != d) continue;
        std::vector<int> subset;
        for (int i = 0; i < k; ++i)
          if (bits >> i & 1) subset.push_back(S[static_cast<std::size_t>(i)]);
        subsets.push_back(subset);
      }
      for (const auto& subset : subsets)
        uniform_over(shortest(subset), 1.0 / static_cast<double>(subsets.size()));
      break;
    }
    default:
      ADD_FAILURE() << "not a dispatching policy";
  }
  return p;
}

ChainResult solve_chain(const model::System& system, Policy policy, int policy_d, int K, int qmax) {
  const int N = system.N();
  const auto types = system.family.enumerate();
  std::size_t states = 1;
  for (int n = 0; n < N; ++n) states *= static_cast<std::size_t>(K + 1);
  auto decode = [&](std::size_t s) {
    std::vector<int> q(static_cast<std::size_t>(N));
    for (int n = 0; n < N; ++n) {
      q[static_cast<std::size_t>(n)] = static_cast<int>(s % static_cast<std::size_t>(K + 1));
      s /= static_cast<std::size_t>(K + 1);
    }
    return q;
  };
  std::vector<std::size_t> stride(static_cast<std::size_t>(N), 1);
  for (int n = 1; n < N; ++n)
    stride[static_cast<std::size_t>(n)] =
        stride[static_cast<std::size_t>(n - 1)] * static_cast<std::size_t>(K + 1);
  // Incoming transitions of every state (source, rate) and the total outflow rate.
  std::vector<std::vector<std::pair<std::size_t, double>>> incoming(states);
  std::vector<double> outflow(states, 0.0);
  const double L = system.total_arrival_rate();
  for (std::size_t s = 0; s < states; ++s) {
    const auto q = decode(s);
    for (const auto& type : types) {
      const auto p = routing(policy, policy_d, type.servers, q);
      for (int n = 0; n < N; ++n) {
        const double rate = L * type.p * p[static_cast<std::size_t>(n)];
        if (rate == 0.0 || q[static_cast<std::size_t>(n)] == K) continue;  // truncation: blocked
        incoming[s + stride[static_cast<std::size_t>(n)]].push_back({s, rate});
        outflow[s] += rate;
      }
    }
    for (int n = 0; n < N; ++n) {
      if (q[static_cast<std::size_t>(n)] == 0) continue;
      const double rate = system.speeds[static_cast<std::size_t>(n)];
      incoming[s - stride[static_cast<std::size_t>(n)]].push_back({s, rate});
      outflow[s] += rate;
    }
  }
  std::vector<double> pi(states, 1.0 / static_cast<double>(states));
  for (int sweep = 0; sweep < 5000; ++sweep) {
    double change = 0.0, total = 0.0;
    for (std::size_t s = 0; s < states; ++s) {
      double in = 0.0;
      for (auto [from, rate] : incoming[s]) in += pi[from] * rate;
      const double next = in / outflow[s];
      change += std::abs(next - pi[s]);
      pi[s] = next;
      total += next;
    }
    for (double& x : pi) x /= total;
    if (change / total < 1e-12) break;
  }
  ChainResult r;
  r.ER.assign(static_cast<std::size_t>(N), 0.0);
  r.pmf.assign(static_cast<std::size_t>(qmax) + 1, 0.0);
  for (std::size_t s = 0; s < states; ++s) {
    const auto q = decode(s);
    int total = 0;
    for (int n = 0; n < N; ++n) {
      r.ER[static_cast<std::size_t>(n)] += pi[s] * q[static_cast<std::size_t>(n)];
      total += q[static_cast<std::size_t>(n)];
    }
    r.EQ += pi[s] * total;
    if (total <= qmax) r.pmf[static_cast<std::size_t>(total)] += pi[s];
  }
  return r;
}

void compare(const model::System& system, Policy policy, int policy_d, std::uint64_t task,
             Kernel kernel = Kernel::automatic, int K = 0, unsigned common_random_numbers = 0) {
  constexpr int kQmax = 4;
  if (K == 0) K = system.N() == 2 ? 60 : 22;
  const ChainResult chain = solve_chain(system, policy, policy_d, K, kQmax);
  auto o = testing::options(policy, 1e4, 200.0, 16);
  o.policy_d = policy_d;
  o.common_random_numbers = common_random_numbers;
  o.qmax = kQmax;
  const Result r = simulate(system, o, 99, task, kernel);
  EXPECT_TRUE(testing::close(r.EQ, r.EQ_hw, chain.EQ));
  for (int n = 0; n < system.N(); ++n)
    EXPECT_TRUE(
        testing::close(r.ER_server[n], r.ER_server_hw[n], chain.ER[static_cast<std::size_t>(n)]))
        << "server " << n;
  for (int q = 0; q <= kQmax; ++q)
    EXPECT_TRUE(testing::close(r.pmf[q], r.pmf_hw[q], chain.pmf[static_cast<std::size_t>(q)]))
        << "q = " << q;
  // Little's law for the chain; the simulator's E[T] comes from the sojourn-time laws recorded
  // at arrivals (Erlang given the jobs found ahead, docs/sim.md).
  EXPECT_TRUE(testing::close(r.ET, r.ET_hw, chain.EQ / system.total_arrival_rate()));
  // Per type (tracked here): exchangeable types on complete with identical speeds share E[T].
  if (system.identical_speeds() && system.family.kind() == FamilyKind::complete) {
    for (std::size_t t = 0; t < r.ET_type.size(); ++t)
      EXPECT_TRUE(
          testing::close(r.ET_type[t], r.ET_type_hw[t], chain.EQ / system.total_arrival_rate()))
          << "type " << t;
  }
}

// Two servers, every job may use both (the family's only type is all servers: the simulator
// then uses its length buckets for jsq and jiq). Unequal speeds: JSQ ignores them.
TEST(DispatchChain, TwoServersAllCompatible) {
  const auto system =
      testing::make_system(testing::family(FamilyKind::complete, 2, 2), 0.6, {0.8, 1.2});
  for (Policy policy : {Policy::jsq, Policy::jiq, Policy::random, Policy::power_of_d}) {
    SCOPED_TRACE(static_cast<int>(policy));
    compare(system, policy, 1, 10 + static_cast<std::uint64_t>(policy));
  }
}

// Three servers, all compatible (buckets again), JSQ and JIQ.
TEST(DispatchChain, ThreeServersAllCompatible) {
  const auto system =
      testing::make_system(testing::family(FamilyKind::complete, 3, 3), 0.6, {0.7, 1.0, 1.3});
  for (Policy policy : {Policy::jsq, Policy::jiq}) {
    SCOPED_TRACE(static_cast<int>(policy));
    compare(system, policy, 2, 20 + static_cast<std::uint64_t>(policy));
  }
}

// Three servers, pairs from the complete family: drawn in uniformly random order, so that ties
// go to the first server of the pair without a draw (and power_of_d takes the first d).
TEST(DispatchChain, ThreeServersCompletePairs) {
  const auto system =
      testing::make_system(testing::family(FamilyKind::complete, 3, 2), 0.6, {0.7, 1.0, 1.3});
  for (Policy policy : {Policy::jsq, Policy::jiq, Policy::random, Policy::power_of_d}) {
    SCOPED_TRACE(static_cast<int>(policy));
    compare(system, policy, 1, 40 + static_cast<std::uint64_t>(policy));
  }
}

// Identical speeds on complete with d < N: the pooled kernel (queue lengths only, servers observed
// together, docs/sim.md "Pooled dispatching") and the general Markov kernel, both against the
// chain. Pairs of 3 servers, and triples of 4 (power_of_d: 2 of the 3) at a load where the
// truncation at 14 jobs per server is negligible (P(R_n >= 15) <= 0.5^15 under random routing).
TEST(DispatchChain, PooledAndGeneralKernelsOnIdenticalServers) {
  const auto pairs = testing::make_system(testing::family(FamilyKind::complete, 3, 2), 0.6);
  const auto triples = testing::make_system(testing::family(FamilyKind::complete, 4, 3), 0.5);
  for (Kernel kernel : {Kernel::pooled, Kernel::markov}) {
    for (Policy policy : {Policy::jsq, Policy::jiq, Policy::random, Policy::power_of_d}) {
      SCOPED_TRACE(fmt::format("{} kernel {}", name_of(policy), static_cast<int>(kernel)));
      const auto task = 50 + static_cast<std::uint64_t>(policy);
      compare(pairs, policy, 1, task, kernel);
      compare(triples, policy, 2, task, kernel, 14);
    }
  }
}

// Three servers, types of different sizes (explicit family), every policy; power_of_d with d = 2
// samples among the three-server type.
TEST(DispatchChain, ThreeServersMixedTypes) {
  model::FamilyParams p = testing::family(FamilyKind::explicit_types, 3);
  p.types = {{{0}, 0.2}, {{1, 2}, 0.3}, {{0, 1, 2}, 0.5}};
  const auto system = testing::make_system(p, 0.55, {1.0, 0.8, 1.2});
  for (Policy policy : {Policy::jsq, Policy::jiq, Policy::random, Policy::power_of_d}) {
    SCOPED_TRACE(static_cast<int>(policy));
    compare(system, policy, 2, 30 + static_cast<std::uint64_t>(policy));
  }
}

// Coupled streams (common random numbers: the uniformized race, the policy's draws apart and
// afresh per arrival, docs/sim.md) keep every law: unequal speeds (a potential completion per
// server by speed), pairs of complete, mixed types, and power_of_d sampling 2 of 4 servers by
// rejection.
TEST(DispatchChain, CoupledStreamsKeepTheLaws) {
  const unsigned common = static_cast<unsigned>(CommonRandomKey::policy) |
                          static_cast<unsigned>(CommonRandomKey::policy_d);
  const auto two =
      testing::make_system(testing::family(FamilyKind::complete, 2, 2), 0.6, {0.8, 1.2});
  const auto pairs =
      testing::make_system(testing::family(FamilyKind::complete, 3, 2), 0.6, {0.7, 1.0, 1.3});
  const auto four = testing::make_system(testing::family(FamilyKind::complete, 4, 4), 0.5);
  model::FamilyParams p = testing::family(FamilyKind::explicit_types, 3);
  p.types = {{{0}, 0.2}, {{1, 2}, 0.3}, {{0, 1, 2}, 0.5}};
  const auto mixed = testing::make_system(p, 0.55, {1.0, 0.8, 1.2});
  for (Policy policy : {Policy::jsq, Policy::jiq, Policy::random, Policy::power_of_d}) {
    SCOPED_TRACE(name_of(policy));
    const auto task = 70 + static_cast<std::uint64_t>(policy);
    compare(two, policy, 1, task, Kernel::automatic, 0, common);
    // Random routing loads the slowest server to 0.86: the chain needs 40 jobs per server.
    compare(pairs, policy, 1, task, Kernel::automatic, 40, common);
    compare(mixed, policy, 2, task, Kernel::automatic, 0, common);
  }
  compare(four, Policy::power_of_d, 2, 80, Kernel::automatic, 14, common);
}

}  // namespace
}  // namespace qsweep::sim
