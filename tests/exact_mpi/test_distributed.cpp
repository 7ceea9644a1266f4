// The distributed general engine against the single-rank one (exact::evaluate) on random
// instances: run directly (an MPI singleton, one rank) and, through the launcher tests, on 2 and
// 3 ranks (2 cores: --oversubscribe for Open MPI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../store/mpi_test_environment.hpp"
#include "qsweep/exact/exact.hpp"
#include "qsweep/exact_mpi/general.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/model/model.hpp"
#include "qsweep/model/stability.hpp"

// Registered before main() runs the tests; GoogleTest owns and deletes it.
static ::testing::Environment* const mpi_environment =
    ::testing::AddGlobalTestEnvironment(new qsweep::testing::MpiEnvironment);

namespace qsweep::exact_mpi {
namespace {

namespace fs = std::filesystem;

int launch(int ranks) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // This process is an MPI singleton: its OMPI_/PMI_/PMIX_ variables would confuse a new
  // launcher. Open MPI needs --oversubscribe for more ranks than cores.
  const std::string oversubscribe =
      std::string(QSWEEP_MPI_FAMILY) == "openmpi" ? " --oversubscribe " : " ";
  const std::string log = "distributed_" + std::to_string(ranks) + ".log";
  const std::string command =
      "env $(env | grep -oE '^(OMPI|PMI|PMIX|OPAL|ORTE)[A-Za-z0-9_]*' | sed 's/^/-u /') "
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " QSWEEP_MPIEXEC " -n " +
      std::to_string(ranks) + oversubscribe + self + " --gtest_filter='Distributed.*' > " + log +
      " 2>&1";
  return std::system(command.c_str());
}

TEST(DistributedLauncher, TwoRanks) { EXPECT_EQ(launch(2), 0) << "see distributed_2.log"; }
TEST(DistributedLauncher, ThreeRanks) { EXPECT_EQ(launch(3), 0) << "see distributed_3.log"; }

// Random instance i: N in 12..20, a random 3-regular graph, G(N, p) or explicit random types
// (sizes 1..4, random probabilities, every server covered), speeds in [0.5, 2], a load at which
// the system is stable. The same on every rank (seeded by i).
model::System instance(int i) {
  std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(i));
  const int N = 12 + 2 * (i % 5);  // 12..20, even for the 3-regular graphs
  model::FamilyParams params;
  params.N = N;
  switch (i % 3) {
    case 0:
      params.kind = model::FamilyKind::random_regular;
      params.degree = 3;
      params.graph_seed = rng();
      break;
    case 1:
      params.kind = model::FamilyKind::erdos_renyi;
      params.edge_prob = 0.25;
      params.graph_seed = rng();
      break;
    default: {
      params.kind = model::FamilyKind::explicit_types;
      std::uniform_real_distribution<double> weight(0.2, 1.0);
      std::uniform_int_distribution<int> server(0, N - 1), size(1, 4);
      std::vector<double> w;
      for (int n = 0; n < N + 6; ++n) {
        std::vector<int> servers{n % N};
        for (int extra = size(rng) - 1; extra > 0; --extra) {
          const int s = server(rng);
          if (std::find(servers.begin(), servers.end(), s) == servers.end()) servers.push_back(s);
        }
        std::sort(servers.begin(), servers.end());
        params.types.push_back({servers, 0.0});
        w.push_back(weight(rng));
      }
      double total = 0.0;
      for (double x : w) total += x;
      for (std::size_t t = 0; t < w.size(); ++t) params.types[t].p = w[t] / total;
      break;
    }
  }
  std::uniform_real_distribution<double> speed(0.5, 2.0), load(0.3, 0.9);
  std::vector<double> speeds(static_cast<std::size_t>(N));
  for (double& s : speeds) s = speed(rng);
  double mean = 0.0;
  for (double s : speeds) mean += s / N;
  double lambda = load(rng) * mean;
  model::Family family(params);
  while (!model::check_stability(model::System(family, speeds, lambda)).ok) lambda *= 0.8;
  return model::System(family, speeds, lambda);
}

// Relative difference; 0 for bitwise equal values.
double relative(double a, double b) {
  if (a == b) return 0.0;
  return std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

struct Comparison {
  int values = 0, bitwise = 0;
  double worst = 0.0;
  void add(double single, double distributed, const std::string& what) {
    ++values;
    bitwise += single == distributed ? 1 : 0;
    const double r = relative(single, distributed);
    worst = std::max(worst, r);
    EXPECT_LE(r, 1e-12) << what << ": single " << single << ", distributed " << distributed;
  }
  void add(const std::vector<double>& single, const std::vector<double>& distributed,
           const std::string& what) {
    ASSERT_EQ(single.size(), distributed.size()) << what;
    for (std::size_t i = 0; i < single.size(); ++i)
      add(single[i], distributed[i], what + "[" + std::to_string(i) + "]");
  }
};

TEST(Distributed, EqualsTheSingleRankEngine) {
  exact::Options options;
  options.qmax = 15;
  options.per_type = true;
  options.light_traffic = true;
  options.engine = exact::Engine::general;
  Comparison all;
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE("instance " + std::to_string(i));
    const model::System system = instance(i);
    const exact::Result single = exact::evaluate(system, options);
    Stats stats;
    const exact::Result distributed = evaluate(MPI_COMM_WORLD, system, options, &stats);
    ASSERT_TRUE(single.stable);
    EXPECT_EQ(distributed.engine, single.engine);
    EXPECT_EQ(distributed.unions, single.unions);
    EXPECT_EQ(distributed.warning, single.warning);
    EXPECT_EQ(distributed.type_servers, single.type_servers);
    Comparison one;
    one.add(single.C, distributed.C, "C");
    one.add(single.log_C, distributed.log_C, "log_C");
    one.add(single.EQ, distributed.EQ, "EQ");
    one.add(single.VarQ, distributed.VarQ, "VarQ");
    one.add(single.ET, distributed.ET, "ET");
    one.add(single.scaled_EQ, distributed.scaled_EQ, "scaled_EQ");
    one.add(single.pmf, distributed.pmf, "pmf");
    one.add(single.alpha, distributed.alpha, "alpha");
    one.add(single.EQ_type, distributed.EQ_type, "EQ_type");
    one.add(single.ET_type, distributed.ET_type, "ET_type");
    one.add(single.scaled_EQ_type, distributed.scaled_EQ_type, "scaled_EQ_type");
    one.add(single.ER_server, distributed.ER_server, "ER_server");
    EXPECT_EQ(single.pmf.size(), 16u);
    EXPECT_FALSE(single.EQ_type.empty());
    all.values += one.values;
    all.bitwise += one.bitwise;
    all.worst = std::max(all.worst, one.worst);
  }
  if (testing::world_rank() == 0)
    std::printf("ranks %d: %d values, %d bitwise equal, largest relative difference %.3g\n",
                testing::world_size(), all.values, all.bitwise, all.worst);
}

// Every block size, down to one union per block (block_bits = N), and per_type off.
TEST(Distributed, AnyBlockSize) {
  const model::System system = instance(0);  // N = 12
  const auto types = system.family.enumerate();
  const auto single =
      exact::detail::general_engine(types, system.speeds, system.total_arrival_rate(), 8, false);
  for (int bits : {0, 1, 3, 5, 12}) {
    SCOPED_TRACE("block_bits " + std::to_string(bits));
    Stats stats;
    const auto distributed = general_engine(MPI_COMM_WORLD, types, system.speeds,
                                            system.total_arrival_rate(), 8, false, &stats, bits);
    EXPECT_EQ(stats.block_bits, bits);
    EXPECT_EQ(distributed.unions, single.unions);
    EXPECT_TRUE(distributed.EQ_type.empty());
    EXPECT_LE(relative(distributed.log_f, single.log_f), 1e-12);
    EXPECT_LE(relative(distributed.EQ, single.EQ), 1e-12);
    EXPECT_LE(relative(distributed.VarQ, single.VarQ), 1e-12);
    ASSERT_EQ(distributed.log_weight.size(), single.log_weight.size());
    for (std::size_t q = 0; q < single.log_weight.size(); ++q)
      EXPECT_LE(std::abs(distributed.log_weight[q] - single.log_weight[q]), 1e-12) << q;
    // Each layer's blocks go to other ranks only when there are other ranks.
    double bytes = 0.0;
    for (double b : stats.forward_bytes) bytes += b;
    if (testing::world_size() == 1) {
      EXPECT_EQ(bytes, 0.0);
    }
  }
}

// The StopCheck is asked before each layer of both passes and each step of the distribution, on
// every rank; answering "go on" leaves the results as they are, and one rank's "stop" (the last
// rank's, at its k-th question) makes every rank throw Stopped at that same question.
TEST(Distributed, AStopCheckBetweenLayersStopsEveryRank) {
  const model::System system = instance(0);  // N = 12
  const auto types = system.family.enumerate();
  const double rate = system.total_arrival_rate();
  constexpr int kQmax = 8, kBits = 3;  // 4 layers of blocks
  const auto plain =
      general_engine(MPI_COMM_WORLD, types, system.speeds, rate, kQmax, true, nullptr, kBits);
  int asked = 0;
  const auto checked = general_engine(MPI_COMM_WORLD, types, system.speeds, rate, kQmax, true,
                                      nullptr, kBits, [&] { return ++asked < 0; });
  EXPECT_EQ(asked, 2 * (kBits + 1) + kQmax);
  EXPECT_EQ(checked.EQ, plain.EQ);
  EXPECT_EQ(checked.log_weight, plain.log_weight);
  EXPECT_EQ(checked.EQ_type, plain.EQ_type);

  const bool last = testing::world_rank() == testing::world_size() - 1;
  for (const int stop_at : {1, kBits + 2, 2 * (kBits + 1) + kQmax}) {
    SCOPED_TRACE("stop at question " + std::to_string(stop_at));
    asked = 0;
    EXPECT_THROW(general_engine(MPI_COMM_WORLD, types, system.speeds, rate, kQmax, true, nullptr,
                                kBits, [&] { return ++asked == stop_at && last; }),
                 Stopped);
    EXPECT_EQ(asked, stop_at);
  }
}

// An overloaded input (the stability check bypassed): every rank stops and names a union B with
// mu(B) <= lam(B), checked here from the speeds and the types inside B.
TEST(Distributed, OverloadStopsEveryRank) {
  const model::System system = instance(3);  // N = 18
  const auto types = system.family.enumerate();
  const double total_rate = 5.0 * system.total_arrival_rate();
  const auto single = exact::detail::general_engine(types, system.speeds, total_rate, 4, true);
  const auto distributed =
      general_engine(MPI_COMM_WORLD, types, system.speeds, total_rate, 4, true);
  ASSERT_FALSE(single.violating_set.empty());
  ASSERT_FALSE(distributed.violating_set.empty());
  model::ServerMask set = 0;
  double mu = 0.0, lam = 0.0;
  for (int n : distributed.violating_set) {
    set |= model::ServerMask{1} << n;
    mu += system.speeds[static_cast<std::size_t>(n)];
  }
  for (const auto& type : types)
    if ((type.servers & ~set) == 0) lam += total_rate * type.p;
  EXPECT_LE(mu - lam, 1e-12 * (mu + lam));
  EXPECT_LE(distributed.slack, 0.0);
}

}  // namespace
}  // namespace qsweep::exact_mpi
