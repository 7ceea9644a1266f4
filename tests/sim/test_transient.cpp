// The transient mode (docs/sim.md, "Transient simulation"): E[Q(t)] and the occupancy x_i(t) at
// given times, from a given start, with intervals over the replications, against exact transient
// laws by uniformization (the M/M/1 from empty; power-of-2 on N = 3 servers, a brute-force chain
// of the sorted queue lengths, from a loaded start) and against the mean-field trajectory at
// N = 1000 (order 0 with a tolerance of the known O(1/N) size, and the refined trajectory of
// order 1). Every kernel that runs a dispatching policy with exponential sizes is covered: the
// general markov kernel and the pooled one (both draw their holding times in this mode), the
// redundancy kernel and the event-driven one.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/meanfield/meanfield.hpp"
#include "qsweep/meanfield/refined.hpp"
#include "qsweep/sim/kernel.hpp"
#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;
using testing::family;
using testing::make_system;

constexpr std::uint64_t kSeed = 20270116;

Options transient(Policy policy, std::vector<double> times, int replications, int occupancy_max) {
  Options o;
  o.policy = policy;
  o.observe_times = std::move(times);
  o.replications = replications;
  o.occupancy_max = occupancy_max;
  return o;
}

// A continuous-time chain on states 0..n-1 given by its transitions; the law at each of `times`
// from `start` by uniformization (Poisson weights summed until their tail is below 1e-15).
struct Chain {
  struct Jump {
    int from, to;
    double rate;
  };
  int states = 0;
  std::vector<Jump> jumps;

  std::vector<std::vector<double>> laws(int start, const std::vector<double>& times) const {
    std::vector<double> out_rate(static_cast<std::size_t>(states), 0.0);
    for (const Jump& j : jumps) out_rate[static_cast<std::size_t>(j.from)] += j.rate;
    const double rate = *std::max_element(out_rate.begin(), out_rate.end());
    std::vector<std::vector<double>> result;
    for (const double t : times) {
      std::vector<double> p(static_cast<std::size_t>(states), 0.0), law = p;
      p[static_cast<std::size_t>(start)] = 1.0;
      const double mean = rate * t;
      double weight = std::exp(-mean), total = 0.0;
      for (int n = 0; total < 1.0 - 1e-15 && n < 100'000; ++n) {
        if (n > 0) weight *= mean / n;
        total += weight;
        for (int s = 0; s < states; ++s)
          law[static_cast<std::size_t>(s)] += weight * p[static_cast<std::size_t>(s)];
        // One step of the uniformized chain: p <- p (I + Q / rate).
        std::vector<double> next(p);
        for (const Jump& j : jumps) {
          const double moved = p[static_cast<std::size_t>(j.from)] * j.rate / rate;
          next[static_cast<std::size_t>(j.from)] -= moved;
          next[static_cast<std::size_t>(j.to)] += moved;
        }
        p.swap(next);
      }
      result.push_back(law);
    }
    return result;
  }
};

// The M/M/1 queue (rates lambda, 1) truncated at `buffer` jobs: state = number of jobs.
Chain mm1(double lambda, int buffer) {
  Chain c;
  c.states = buffer + 1;
  for (int q = 0; q < buffer; ++q) {
    c.jumps.push_back({q, q + 1, lambda});
    c.jumps.push_back({q + 1, q, 1.0});
  }
  return c;
}

// E[f(Q(t))] under the M/M/1's law.
template <class F>
double expect(const std::vector<double>& law, F f) {
  double sum = 0.0;
  for (std::size_t q = 0; q < law.size(); ++q) sum += law[q] * f(static_cast<int>(q));
  return sum;
}

// E[Q(t)] = every time, x_i(t) = P(Q(t) >= i) for one server, from empty: every kernel that runs
// one server with exponential sizes.
TEST(Transient, MM1FromEmptyByUniformization) {
  const double lambda = 0.8;
  const std::vector<double> times = {0.25, 1.0, 2.0, 5.0, 10.0, 20.0};
  const Chain chain = mm1(lambda, 120);
  const auto laws = chain.laws(0, times);
  const auto system = make_system(family(FamilyKind::independent, 1), lambda);
  struct Case {
    Policy policy;
    Kernel kernel;
    const char* what;
  };
  for (const Case c : {Case{Policy::jsq, Kernel::markov, "dispatching markov"},
                       Case{Policy::redundancy_coc, Kernel::markov, "redundancy markov"},
                       Case{Policy::random, Kernel::event_driven, "event-driven"}}) {
    SCOPED_TRACE(c.what);
    const Result r = simulate(system, transient(c.policy, times, 20'000, 3), kSeed, 1, c.kernel);
    ASSERT_EQ(r.EQ_t.size(), times.size());
    ASSERT_EQ(r.occupancy_t.size(), 3 * times.size());
    for (std::size_t j = 0; j < times.size(); ++j) {
      const auto& law = laws[j];
      EXPECT_TRUE(testing::close(r.EQ_t[j], r.EQ_t_hw[j], expect(law, [](int q) { return q; })))
          << "t = " << times[j];
      for (int i = 1; i <= 3; ++i)
        EXPECT_TRUE(testing::close(r.occupancy_t[3 * j + (i - 1)],
                                   r.occupancy_t_hw[3 * j + (i - 1)],
                                   expect(law, [i](int q) { return q >= i ? 1.0 : 0.0; })))
            << "t = " << times[j] << ", i = " << i;
    }
    // Sharp enough that a clock of expected holding times (no event before t = 1.25 from empty)
    // or a time off by a tenth would show.
    EXPECT_LT(2.0 * r.EQ_t_hw[1], 0.05 * r.EQ_t[1]);
    EXPECT_TRUE(std::isnan(r.EQ) && std::isnan(r.ET) && r.T_quantile.empty());
    EXPECT_EQ(r.warmup, 0.0);
    EXPECT_EQ(r.flags, 0U);
  }
}

// Power-of-2 on 3 servers: the chain of the sorted queue lengths (a <= b <= c, each at most
// `buffer`): an arrival samples 2 of the 3 servers and joins the shorter, so the shortest queue
// grows with probability 2/3 and the middle one with 1/3; each busy server completes at rate 1.
struct PowerOfTwoOnThree {
  int buffer;
  std::map<std::array<int, 3>, int> index;
  std::vector<std::array<int, 3>> state;
  Chain chain;

  PowerOfTwoOnThree(double lambda, int buffer_) : buffer(buffer_) {
    for (int a = 0; a <= buffer; ++a)
      for (int b = a; b <= buffer; ++b)
        for (int c = b; c <= buffer; ++c) {
          index[{a, b, c}] = static_cast<int>(state.size());
          state.push_back({a, b, c});
        }
    chain.states = static_cast<int>(state.size());
    const auto at = [this](std::array<int, 3> s) {
      std::sort(s.begin(), s.end());
      return index.at(s);
    };
    for (std::size_t k = 0; k < state.size(); ++k) {
      const auto s = state[k];
      const int from = static_cast<int>(k);
      for (const auto& [position, p] : {std::pair{0, 2.0 / 3.0}, std::pair{1, 1.0 / 3.0}}) {
        if (s[static_cast<std::size_t>(position)] == buffer) continue;  // dropped (below 1e-12)
        auto t = s;
        ++t[static_cast<std::size_t>(position)];
        chain.jumps.push_back({from, at(t), 3.0 * lambda * p});
      }
      for (std::size_t n = 0; n < 3; ++n) {
        if (s[n] == 0) continue;
        auto t = s;
        --t[n];
        chain.jumps.push_back({from, at(t), 1.0});
      }
    }
  }
};

TEST(Transient, PowerOfTwoOnThreeServersByUniformization) {
  const double lambda = 0.7;
  const std::vector<double> times = {0.0, 0.5, 1.0, 2.0, 4.0, 8.0};
  const PowerOfTwoOnThree chain(lambda, 30);
  // Start: one server each with 0, 2 and 4 jobs.
  const auto laws = chain.chain.laws(chain.index.at({0, 2, 4}), times);
  std::vector<double> exact_Q, exact_x;
  for (const auto& law : laws) {
    double Q = 0.0;
    std::array<double, 4> x{};
    for (std::size_t k = 0; k < law.size(); ++k) {
      const auto& s = chain.state[k];
      Q += law[k] * (s[0] + s[1] + s[2]);
      for (int i = 1; i <= 4; ++i)
        x[static_cast<std::size_t>(i - 1)] +=
            law[k] * ((s[0] >= i) + (s[1] >= i) + (s[2] >= i)) / 3.0;
    }
    exact_Q.push_back(Q);
    exact_x.insert(exact_x.end(), x.begin(), x.end());
  }
  struct Case {
    FamilyKind kind;
    int d;
    Policy policy;
    Kernel kernel;
    const char* what;
  };
  // power_of_d (2 of the 3) on the one type of all servers: the general markov kernel; JSQ on the
  // pairs of complete N = 3: the pooled kernel; power_of_d, event-driven.
  for (const Case c :
       {Case{FamilyKind::complete, 3, Policy::power_of_d, Kernel::automatic,
             "power_of_d, general markov kernel"},
        Case{FamilyKind::complete, 2, Policy::jsq, Kernel::pooled, "jsq on pairs, pooled"},
        Case{FamilyKind::complete, 3, Policy::power_of_d, Kernel::event_driven,
             "power_of_d, event-driven"}}) {
    SCOPED_TRACE(c.what);
    const auto system = make_system(family(c.kind, 3, c.d), lambda);
    Options o = transient(c.policy, times, 20'000, 4);
    o.policy_d = 2;
    o.start = Start::counts;
    o.initial_counts = {1, 0, 1, 0, 1};
    const Result r = simulate(system, o, kSeed, 2, c.kernel);
    for (std::size_t j = 0; j < times.size(); ++j) {
      EXPECT_TRUE(testing::close(r.EQ_t[j], r.EQ_t_hw[j], exact_Q[j])) << "t = " << times[j];
      for (std::size_t i = 0; i < 4; ++i)
        EXPECT_TRUE(testing::close(r.occupancy_t[4 * j + i], r.occupancy_t_hw[4 * j + i],
                                   exact_x[4 * j + i]))
            << "t = " << times[j] << ", i = " << i + 1;
    }
    EXPECT_EQ(r.EQ_t[0], 6.0);  // the start, in every replication
    EXPECT_EQ(r.EQ_t_hw[0], 0.0);
  }
}

// Power-of-2 over N = 1000 servers at lambda = 0.9 from empty against the mean field: per server
// E[Q(t)] / N and x_i(t) against the order-0 trajectory within 2 half-widths plus the O(1/N) term's
// own size (max_t |V_i(t)| / N from the refined trajectory, times 1.5), and against the refined
// trajectory x(t) + V(t) / N within 2 half-widths plus 20 / N^2.
TEST(Transient, PowerOfTwoAtLargeNFollowsTheMeanFieldTrajectory) {
  constexpr int N = 1000;
  const double lambda = 0.9;
  constexpr int kLevels = 5;
  meanfield::Options mf;
  mf.policy = meanfield::Policy::power_of_d;
  mf.policy_d = 2;
  mf.lambda = lambda;
  mf.horizon = 10.0;
  mf.time_points = 11;
  mf.occupancy_max = kLevels;
  const meanfield::Result limit = meanfield::solve(mf);
  constexpr int L = 30;
  const meanfield::RefinedTrajectory refined =
      meanfield::refined_trajectory(2, lambda, L, std::vector<double>(L, 0.0), limit.times, 1e-3);

  // JSQ(2) on the pairs of complete N (the pooled kernel), observed at the trajectory's times.
  const auto system = make_system(family(FamilyKind::complete, N, 2), lambda);
  const Result r = simulate(system, transient(Policy::jsq, limit.times, 200, kLevels), kSeed, 3);
  for (std::size_t j = 0; j < limit.times.size(); ++j) {
    SCOPED_TRACE("t = " + std::to_string(limit.times[j]));
    double x_sum = 0.0, V_sum = 0.0, V_max = 0.0;
    for (int i = 0; i < L; ++i) {
      x_sum += refined.x[j * L + static_cast<std::size_t>(i)];
      V_sum += refined.V[j * L + static_cast<std::size_t>(i)];
    }
    for (std::size_t jj = 0; jj < limit.times.size(); ++jj) {
      double s = 0.0;
      for (int i = 0; i < L; ++i) s += refined.V[jj * L + static_cast<std::size_t>(i)];
      V_max = std::max(V_max, std::abs(s));
    }
    const double per_server = r.EQ_t[j] / N, hw = r.EQ_t_hw[j] / N;
    EXPECT_NEAR(per_server, x_sum, 2.0 * hw + 1.5 * V_max / N);
    EXPECT_NEAR(per_server, x_sum + V_sum / N, 2.0 * hw + 20.0 / (1.0 * N * N));
    for (int i = 0; i < kLevels; ++i) {
      const std::size_t k = j * kLevels + static_cast<std::size_t>(i);
      const double x = refined.x[j * L + static_cast<std::size_t>(i)];
      const double V = refined.V[j * L + static_cast<std::size_t>(i)];
      // The method's order-0 rows (ldp's integrator) and the refined trajectory's x (RK4).
      EXPECT_NEAR(limit.trajectory[k], x, 1e-6) << "i = " << i + 1;
      EXPECT_NEAR(r.occupancy_t[k], x, 2.0 * r.occupancy_t_hw[k] + 1.5 * std::abs(V) / N + 1e-4)
          << "i = " << i + 1;
      EXPECT_NEAR(r.occupancy_t[k], x + V / N, 2.0 * r.occupancy_t_hw[k] + 20.0 / (1.0 * N * N))
          << "i = " << i + 1;
    }
  }
}

TEST(Transient, Validation) {
  const auto refused = [](Options o, const std::string& expected) {
    try {
      validate(o);
      ADD_FAILURE() << "accepted; expected " << expected;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  Options o = transient(Policy::jsq, {1.0, 2.0}, 4, 0);
  validate(o);
  Options bad = o;
  bad.observe_times = {2.0, 1.0};
  refused(bad, "observe_times: value 2 is 1, not above the one before it (2)");
  bad.observe_times = {0.0};
  refused(bad, "observe_times: the last time is 0");
  bad = o;
  bad.warmup = 10.0;
  refused(bad, "warmup applies to steady-state runs, not with observe_times");
  bad = o;
  bad.target_rel_half_width = 0.01;
  refused(bad, "target_rel_half_width applies to steady-state runs");
}

}  // namespace
}  // namespace qsweep::sim
