// simulate(): validation, reproducibility, replication streams, warm-up detection, sequential
// replications, serialization; and the building blocks with their own checks (ziggurat
// exponential, sojourn histogram, MSER-5).
#include <gtest/gtest.h>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/serialization/vector.hpp>
#include <cmath>
#include <sstream>

#include "qsweep/common/error.hpp"
#include "qsweep/sim/exponential.hpp"
#include "qsweep/sim/kernel.hpp"
#include "qsweep/sim/simulate.hpp"
#include "sim_test_util.hpp"

namespace qsweep::sim {
namespace {

using model::FamilyKind;

model::System ring(int N, double lambda) {
  return testing::make_system(testing::family(FamilyKind::ring, N), lambda);
}

void expect_input_error(const Options& o, const std::string& fragment) {
  try {
    validate(o);
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

TEST(SimulateApi, InvalidOptionsAreInputErrorsNamingTheOption) {
  Options o;
  o.policy = Policy::power_of_d;
  o.policy_d = 0;
  expect_input_error(o, "policy_d");
  o = Options{};
  o.horizon = 0.0;
  expect_input_error(o, "horizon");
  o = Options{};
  o.warmup = std::nan("");
  expect_input_error(o, "warmup");
  o = Options{};
  o.replications = 1;
  expect_input_error(o, "replications");
  o = Options{};
  o.max_events = 0.0;
  expect_input_error(o, "max_events");
  o = Options{};
  o.target_rel_half_width = -0.1;
  expect_input_error(o, "target_rel_half_width");
  o = Options{};
  o.qmax = -1;
  expect_input_error(o, "qmax");
  o = Options{};
  o.occupancy_max = -2;
  expect_input_error(o, "occupancy_max");
  o = Options{};
  o.policy = Policy::jsq;
  o.identical_replicas = true;
  expect_input_error(o, "identical_replicas");
  o = Options{};
  o.service = {ServiceKind::hyperexponential, 0.5, {}, {}};
  expect_input_error(o, "cv2");
  o.service = {ServiceKind::exponential, 2.0, {}, {}};
  expect_input_error(o, "cv2");
  o.service = {ServiceKind::empirical, 1.0, {1.0, 2.0}, {1.0}};
  expect_input_error(o, "weights");
  o.service = {ServiceKind::empirical, 1.0, {1.0, -2.0}, {0.5, 0.5}};
  expect_input_error(o, "value 2");
  o.service = {ServiceKind::empirical, 1.0, {1.0, 2.0}, {0.5, 0.6}};
  expect_input_error(o, "sum");
  o.service = {ServiceKind::deterministic, 1.0, {1.0}, {1.0}};
  expect_input_error(o, "empirical");
  // simulate() validates too, and a forced Markov kernel must apply.
  EXPECT_THROW(simulate(ring(4, 0.5), o, 1, 1), InputError);
  o = testing::options(Policy::redundancy_cos, 10.0, 0.0, 2);
  EXPECT_THROW(simulate(ring(4, 0.5), o, 1, 1, Kernel::markov), InputError);
}

// Same seed and task: the same Result, bit for bit (no dependence on anything else); another
// task or seed: another sample path.
TEST(SimulateApi, SameSeedSameResultOtherTaskOtherResult) {
  const auto system = ring(6, 0.7);
  auto o = testing::options(Policy::redundancy_coc, 2000.0, -1.0, 4);
  o.qmax = 5;
  const Result a = simulate(system, o, 42, 3);
  EXPECT_EQ(a, simulate(system, o, 42, 3));
  EXPECT_NE(a.EQ, simulate(system, o, 42, 4).EQ);
  EXPECT_NE(a.EQ, simulate(system, o, 43, 3).EQ);
}

// Replications use disjoint Philox streams: their estimates are uncorrelated. With 64
// replications the lag-1 sample correlation of the E[Q] estimates has standard deviation about
// 1/8; |r| < 0.45 is a 3.5-sigma bound.
TEST(SimulateApi, ReplicationsAreIndependent) {
  const auto system = ring(5, 0.8);
  const auto o = testing::options(Policy::redundancy_coc, 500.0, 0.0, 2);
  std::vector<double> x;
  for (std::uint64_t r = 0; r < 64; ++r)
    x.push_back(run_replication(system, o, 11, 2, r, {50.0, 500.0, 0}).mean_Q);
  double mean = 0.0;
  for (double v : x) mean += v / 64.0;
  double cov = 0.0, var = 0.0;
  for (std::size_t i = 0; i < 64; ++i) {
    var += (x[i] - mean) * (x[i] - mean);
    if (i > 0) cov += (x[i] - mean) * (x[i - 1] - mean);
  }
  EXPECT_LT(std::abs(cov / var), 0.45);
  EXPECT_GT(var, 0.0);
}

// The warm-up is detected on the replications themselves (reported; no pilot run), and a given
// one is discarded before it; the kept time is the run minus the truncation, a window start.
TEST(SimulateApi, WarmupIsDetectedAndReported) {
  const auto system = ring(4, 0.9);
  const Result detected = simulate(system, testing::options(Policy::jsq, 5000.0, -1.0, 3), 1, 1);
  EXPECT_TRUE(detected.warmup_detected);
  EXPECT_GE(detected.warmup, 0.0);
  EXPECT_LE(detected.warmup, 2500.0);  // MSER-5 truncates at most half the run
  EXPECT_DOUBLE_EQ(detected.warmup + detected.horizon, 5000.0);
  const Result given = simulate(system, testing::options(Policy::jsq, 5000.0, 123.0, 3), 1, 1);
  EXPECT_FALSE(given.warmup_detected);
  EXPECT_GE(given.warmup, 123.0);
  EXPECT_DOUBLE_EQ(given.warmup + given.horizon, 5123.0);
  EXPECT_EQ(given.replications, 3);
  // The same replications, the given one 123 time units longer: no pilot.
  EXPECT_GT(given.events, detected.events);
  EXPECT_LT(given.events, detected.events * 21 / 20);
}

// Warm-up detection from an empty start wastes little when there is no transient to speak of and
// still covers a real one. M/M/1 at load 0.3 relaxes in a few time units: over 20 pilots of
// 1000 time units the detected warm-up stays a few percent (unrestricted MSER-5 cut up to half
// of such pilots, at random early bursts). JSQ(2) on 1000 servers at lambda = 0.9 fills slowly:
// the warm-up must reach the time at which the mean-field limit (its ODE, integrated here, an
// independent computation) is at 80% of its fixed point. Fixed seeds.
TEST(SimulateApi, WarmupIsShortWithoutTransientAndCoversATransient) {
  const auto mm1 = testing::make_system(testing::family(FamilyKind::independent, 1), 0.3);
  double discarded = 0.0;
  for (std::uint64_t task = 1; task <= 20; ++task) {
    const Result r = simulate(mm1, testing::options(Policy::jsq, 1000.0, -1.0, 2), 3, task);
    EXPECT_LE(r.warmup, 100.0) << "task " << task;
    discarded += r.warmup / 1000.0 / 20.0;
  }
  EXPECT_LE(discarded, 0.02);

  // Mean-field JSQ(2) from empty: x_i' = lambda (x_{i-1}^2 - x_i^2) - (x_i - x_{i+1}), x_0 = 1;
  // Q / N = sum of x_i, fixed point x_i = lambda^(2^i - 1). Euler steps of 1e-3.
  const double lambda = 0.9, dt = 1e-3;
  std::vector<double> x(40, 0.0), dx(40, 0.0);
  x[0] = 1.0;
  double fixed_point = 0.0;
  for (std::size_t i = 1; i + 1 < x.size(); ++i)
    fixed_point += std::pow(lambda, std::pow(2.0, static_cast<double>(i)) - 1.0);
  double t80 = 0.0;
  for (double filled = 0.0; filled < 0.8 * fixed_point; t80 += dt) {
    for (std::size_t i = 1; i + 1 < x.size(); ++i)
      dx[i] = lambda * (x[i - 1] * x[i - 1] - x[i] * x[i]) - (x[i] - x[i + 1]);
    filled = 0.0;
    for (std::size_t i = 1; i + 1 < x.size(); ++i) {
      x[i] += dt * dx[i];
      filled += x[i];
    }
  }
  EXPECT_NEAR(t80, 11.8, 0.2);  // sanity of the integration
  const auto jsq = testing::make_system(testing::family(FamilyKind::complete, 1000), lambda);
  for (std::uint64_t task = 1; task <= 3; ++task) {
    const Result r = simulate(jsq, testing::options(Policy::jsq, 100.0, -1.0, 2), 3, task);
    EXPECT_GE(r.warmup, t80) << "task " << task;
  }
}

// A target relative half-width on E[T] doubles the horizon until it is met, within max_events;
// each round reruns the replications on the same streams, so the result depends only on the
// final horizon.
TEST(SimulateApi, TargetHalfWidthDoublesTheHorizon) {
  const auto system = ring(4, 0.7);
  auto o = testing::options(Policy::redundancy_coc, 1000.0, 50.0, 3);
  o.target_rel_half_width = 0.02;
  o.max_events = 1e9;
  const Result r = simulate(system, o, 1, 1);
  EXPECT_EQ(r.replications, 3);
  EXPECT_LE(r.ET_hw / r.ET, 0.02);
  EXPECT_EQ(r.flags, 0U) << r.warning;
  const double horizon = r.horizon + r.warmup - 50.0;  // the last round's horizon
  EXPECT_GT(horizon, 1000.0);
  EXPECT_EQ(std::exp2(std::round(std::log2(horizon / 1000.0))), horizon / 1000.0);
  // The same result from that horizon in one round; its events are those of the last round.
  auto last = o;
  last.horizon = horizon;
  last.target_rel_half_width = 0.0;
  const Result direct = simulate(system, last, 1, 1);
  EXPECT_EQ(direct.ET, r.ET);
  EXPECT_EQ(direct.ET_hw, r.ET_hw);
  EXPECT_LT(direct.events, r.events);
  EXPECT_LE(r.events, 2 * direct.events);
  // A budget below the next round stops after the first, flagged.
  o.max_events = 1.0;
  const Result spent = simulate(system, o, 1, 1);
  EXPECT_NE(spent.flags & flag_budget_spent, 0U);
  EXPECT_NE(spent.warning.find("max_events 1 spent before"), std::string::npos) << spent.warning;
}

// An unstable system stops with an Error once kMaxJobsInSystem jobs accumulate.
TEST(SimulateApi, UnstableSystemIsAnErrorNotAnExhaustedMachine) {
  const auto system = testing::make_system(testing::family(FamilyKind::independent, 1), 100.0);
  try {
    run_replication(system, testing::options(Policy::jsq, 1e6, 0.0, 2), 1, 1, 0, {0.0, 1e6, 0});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unstable"), std::string::npos) << e.what();
  }
}

// Per-type estimates exist up to kMaxTrackedTypes types and N <= 64, and are empty beyond.
TEST(SimulateApi, PerTypeEstimatesOnlyForFewTypes) {
  const auto few = testing::make_system(testing::family(FamilyKind::complete, 10, 3), 0.3);  // 120
  const auto many =
      testing::make_system(testing::family(FamilyKind::complete, 20, 4), 0.3);  // 4845
  const auto o = testing::options(Policy::redundancy_coc, 50.0, 0.0, 2);
  const Result a = simulate(few, o, 1, 1);
  EXPECT_EQ(a.EQ_type.size(), 120U);
  EXPECT_EQ(a.type_servers.size(), 120U);
  EXPECT_EQ(a.ER_server.size(), 10U);
  const Result b = simulate(many, o, 1, 1);
  EXPECT_TRUE(b.EQ_type.empty());
  EXPECT_TRUE(b.type_servers.empty());
  EXPECT_EQ(b.ER_server.size(), 20U);
}

TEST(SimulateApi, ResultAndOptionsSurviveSerialization) {
  auto o = testing::options(Policy::power_of_d, 300.0, 10.0, 3);
  o.qmax = 3;
  o.occupancy_max = 2;
  o.service = {ServiceKind::empirical, 1.0, {1.0, 2.0}, {0.25, 0.75}};
  Result r = simulate(ring(5, 0.5), o, 1, 1);
  r.ET_type[0] = std::nan("");  // an estimate without observations
  std::stringstream buffer;
  {
    boost::archive::binary_oarchive out(buffer);
    out << o << r;
  }
  Options o2;
  Result r2;
  boost::archive::binary_iarchive in(buffer);
  in >> o2 >> r2;
  EXPECT_EQ(o, o2);
  EXPECT_EQ(r, r2);  // NaN equals NaN here
  r2.ET_type[0] = 1.0;
  EXPECT_FALSE(r == r2);
  r2 = r;
  r2.events += 1;
  EXPECT_FALSE(r == r2);
}

// Per-server values held once for all servers read as N equal values, compare equal to the same
// values held one per server, and survive serialization as they are.
TEST(SimulateApi, ServerValuesHeldOnceForAllServers) {
  const ServerValues once(0.25, 4);
  const ServerValues each(std::vector<double>{0.25, 0.25, 0.25, 0.25});
  EXPECT_EQ(once.size(), 4u);
  for (std::size_t n = 0; n < once.size(); ++n) EXPECT_EQ(once[n], 0.25);
  EXPECT_EQ(once.back(), 0.25);
  EXPECT_EQ(once.to_vector(), each.to_vector());
  Result a, b;
  a.ER_server = once;
  b.ER_server = each;
  EXPECT_EQ(a, b);
  b.ER_server = ServerValues(std::vector<double>{0.25, 0.25, 0.25, 0.5});
  EXPECT_FALSE(a == b);
  b.ER_server = ServerValues(0.25, 5);
  EXPECT_FALSE(a == b);
  a.utilisation = ServerValues(std::nan(""), 3);  // NaN equals NaN here, as for vectors
  a.ER_server.fill(std::nan(""));
  EXPECT_TRUE(std::isnan(a.ER_server[3]));
  std::stringstream buffer;
  {
    boost::archive::binary_oarchive out(buffer);
    out << a;
  }
  Result a2;
  boost::archive::binary_iarchive in(buffer);
  in >> a2;
  EXPECT_EQ(a, a2);
  EXPECT_EQ(a2.ER_server.size(), 4u);
  EXPECT_EQ(a2.utilisation.size(), 3u);
}

// Ziggurat Exp(1): mean, second moment and tail probabilities (including the tail beyond the
// base layer, x > 7.697) against the exact law; 4e6 draws, 4.5-sigma bounds.
TEST(Building, ZigguratExponentialHasTheExponentialLaw) {
  Rng rng(3, 4);
  const int n = 4'000'000;
  const double levels[] = {0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 7.0, 8.0, 10.0};
  std::vector<int> above(std::size(levels), 0);
  double sum = 0.0, sum_sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double x = standard_exponential(rng);
    ASSERT_GE(x, 0.0);
    sum += x;
    sum_sq += x * x;
    for (std::size_t k = 0; k < std::size(levels); ++k) above[k] += x > levels[k];
  }
  EXPECT_NEAR(sum / n, 1.0, 4.5 * 1.0 / std::sqrt(n));
  EXPECT_NEAR(sum_sq / n, 2.0, 4.5 * std::sqrt(20.0) / std::sqrt(n));  // Var(X^2) = 24 - 4
  for (std::size_t k = 0; k < std::size(levels); ++k) {
    const double p = std::exp(-levels[k]);
    EXPECT_NEAR(above[k] / static_cast<double>(n), p, 4.5 * std::sqrt(p * (1 - p) / n) + 1e-7)
        << "P(X > " << levels[k] << ")";
  }
}

TEST(Building, SojournHistogramQuantilesWithinOneBin) {
  SojournHistogram h;
  EXPECT_TRUE(std::isnan(h.quantile(0.5)));
  for (int i = 1; i <= 1000; ++i) h.add(i * 0.01);  // uniform grid on (0, 10]
  EXPECT_EQ(h.total(), 1000.0);
  for (double p : {0.1, 0.5, 0.9, 0.99})
    EXPECT_NEAR(h.quantile(p), 10.0 * p, 10.0 * p / 128.0) << p;
  // Bins are log-spaced with 2^7 per octave and cover the range end to end.
  EXPECT_EQ(SojournHistogram::bin(1.0), 32 << 7);
  EXPECT_EQ(SojournHistogram::lower_edge(SojournHistogram::bin(3.0)), 3.0);
  EXPECT_EQ(SojournHistogram::bin(1e-20), 0);
  EXPECT_EQ(SojournHistogram::bin(1e20), SojournHistogram::kBins - 1);
  SojournHistogram g;
  g.add(5.0);
  h.merge(g);
  EXPECT_EQ(h.total(), 1001.0);
}

// MSER-5 on a synthetic trace: a linear ramp over the first 200 windows, then a constant with
// alternating noise; the truncation lands at the end of the ramp (within a batch).
// Erlang laws go into the histogram by their probabilities: the count up to a bin edge is the
// mixture's CDF there, checked through quantile() (which returns that edge) against boost's
// regularised incomplete gamma function, an independent computation. The 2500-phase law lies
// far from 0, where the Poisson terms must be computed from their mode.
TEST(Building, ErlangLawsFillTheHistogramByTheirProbabilities) {
  SojournHistogram h;
  h.add_erlang(1.7, {0.0, 2.0, 0.0, 1.5, 0.0, 0.0, 0.5});
  std::vector<double> far(2501, 0.0);
  far[2500] = 1.0;
  h.add_erlang(3.0, far);
  EXPECT_NEAR(h.total(), 5.0, 1e-12);
  const auto cdf = [](double x) {
    using boost::math::gamma_p;
    return 2.0 * gamma_p(1, 1.7 * x) + 1.5 * gamma_p(3, 1.7 * x) + 0.5 * gamma_p(6, 1.7 * x) +
           gamma_p(2500, 3.0 * x);
  };
  for (double x : {0.01, 0.3, 1.0, 2.5, 7.0, 810.0, 833.0, 850.0}) {
    const double edge = SojournHistogram::lower_edge(SojournHistogram::bin(x));
    EXPECT_NEAR(h.quantile(cdf(edge) / 5.0), edge, 1e-6 * edge) << x;
  }
}

TEST(Building, Mser5FindsTheEndOfATransient) {
  std::vector<double> trace;
  for (int i = 0; i < 1000; ++i)
    trace.push_back((i < 200 ? i / 200.0 : 1.0) + (i % 2 ? 0.01 : -0.01));
  const double warmup = mser5_warmup(trace, 2.0, true);  // window length 2 time units
  EXPECT_GE(warmup, 2.0 * 150);
  EXPECT_LE(warmup, 2.0 * 205);
  // Stationary from the start: no truncation needed beyond noise.
  std::vector<double> flat(1000, 3.0);
  EXPECT_EQ(mser5_warmup(flat, 1.0, true), 0.0);
  // An early burst is no initialisation bias from empty: not cut (MSER-5 alone would cut it).
  std::vector<double> burst = flat;
  for (int i = 0; i < 1000; ++i) burst[static_cast<std::size_t>(i)] += (i % 2 ? 0.5 : -0.5);
  for (int i = 100; i < 150; ++i) burst[static_cast<std::size_t>(i)] += 4.0;
  EXPECT_EQ(mser5_warmup(burst, 1.0, true), 0.0);
  // From another start the bias may go either way: a high start is cut.
  EXPECT_GE(mser5_warmup(burst, 1.0, false), 150.0);
  // The same stretch below the rest is cut.
  for (int i = 100; i < 150; ++i) burst[static_cast<std::size_t>(i)] -= 8.0;
  EXPECT_GE(mser5_warmup(burst, 1.0, true), 150.0);
  EXPECT_EQ(mser5_warmup({1.0, 2.0}, 1.0, true), 0.0);  // too short to judge
}

}  // namespace
}  // namespace qsweep::sim
