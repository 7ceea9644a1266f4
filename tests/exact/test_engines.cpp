// General vs symmetric engine wherever both apply, engine choice, instability and bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "exact_test_util.hpp"
#include "qsweep/common/error.hpp"

namespace qsweep::exact::test {
namespace {

using model::FamilyKind;

void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol,
                  const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_LT(rel_diff(a[i], b[i]), tol) << what << " [" << i << "]";
}

void expect_engines_agree(const model::FamilyParams& params, double rho, int qmax) {
  const auto system = make_system(params, rho);
  const Result general = run(system, qmax, Engine::general);
  const Result symmetric = run(system, qmax, Engine::symmetric);
  const std::string what = fmt::format("{} N={} d={} eps={} rho={}", qsweep::name_of(params.kind),
                                       params.N, params.d, params.eps, rho);
  ASSERT_TRUE(general.stable && symmetric.stable) << what;
  EXPECT_EQ(general.engine, "general");
  const double tol = 1e-11;
  EXPECT_LT(rel_diff(general.C, symmetric.C), tol) << what;
  EXPECT_LT(rel_diff(general.EQ, symmetric.EQ), tol) << what;
  EXPECT_LT(rel_diff(general.VarQ, symmetric.VarQ), 1e-10) << what;
  EXPECT_LT(rel_diff(general.ET, symmetric.ET), tol) << what;
  expect_close(general.pmf, symmetric.pmf, tol, what + " pmf");
  expect_close(general.alpha, symmetric.alpha, tol, what + " alpha");
  expect_close(general.EQ_type, symmetric.EQ_type, tol, what + " EQ_type");
  expect_close(general.ET_type, symmetric.ET_type, tol, what + " ET_type");
  expect_close(general.scaled_EQ_type, symmetric.scaled_EQ_type, tol, what + " scaled");
  expect_close(general.ER_server, symmetric.ER_server, tol, what + " ER");
  EXPECT_EQ(general.type_servers, symmetric.type_servers);
  EXPECT_EQ(general.locally_stable, symmetric.locally_stable);
}

TEST(ExactEngines, GeneralAndSymmetricAgreeOnComplete) {
  for (int N = 1; N <= 10; ++N)
    for (int d = 1; d <= N; ++d)
      for (double rho : {0.3, 0.95}) expect_engines_agree(complete_params(N, d), rho, 25);
  expect_engines_agree(complete_params(14, 3), 0.9, 60);
  expect_engines_agree(family_params(FamilyKind::independent, 7), 0.6, 25);
}

TEST(ExactEngines, GeneralAndSymmetricAgreeOnSingletonsFull) {
  for (int N = 2; N <= 12; ++N)
    for (double eps : {0.05, 0.5, 0.95})
      for (double rho : {0.3, 0.95}) expect_engines_agree(singletons_full_params(N, eps), rho, 25);
}

TEST(ExactEngines, AutomaticChoice) {
  EXPECT_EQ(run(make_system(complete_params(6, 2), 0.5), 0).engine, "symmetric-complete");
  EXPECT_EQ(run(make_system(family_params(FamilyKind::independent, 6), 0.5), 0).engine,
            "symmetric-complete");
  EXPECT_EQ(run(make_system(singletons_full_params(6, 0.5), 0.5), 0).engine,
            "symmetric-singletons-full");
  EXPECT_EQ(run(make_system(complete_params(3, 2), 0.5, {1.0, 1.0, 2.0}), 0).engine, "general");
  EXPECT_EQ(run(make_system(family_params(FamilyKind::ring, 5), 0.5), 0).engine, "general");
}

// Symmetric per-type values: every type of a class has the class value; classes are listed.
TEST(ExactEngines, SymmetricClassesAndLargeFamilies) {
  Result res = run(make_system(singletons_full_params(5, 0.5), 0.8), 0);
  ASSERT_EQ(res.type_classes.size(), 2u);
  EXPECT_EQ(res.type_classes[0].name, "singletons");
  EXPECT_EQ(res.type_classes[1].size, 5);
  ASSERT_EQ(res.EQ_type.size(), 6u);
  for (int n = 0; n < 5; ++n)
    EXPECT_EQ(res.EQ_type[static_cast<std::size_t>(n)], res.type_classes[0].EQ);
  EXPECT_EQ(res.EQ_type[5], res.type_classes[1].EQ);
  // Complete d = 3 at N = 1000 has 1.7e8 types: classes only, per server listed.
  res = run(make_system(complete_params(1000, 3), 0.9), 10);
  EXPECT_TRUE(res.EQ_type.empty());
  ASSERT_EQ(res.type_classes.size(), 1u);
  EXPECT_NEAR(res.type_classes[0].count, 166167000.0, 1e-3);
  // Little: E[Q] = sum over types of E[Q_S]; per server E[R_n] = E[Q] d / N.
  EXPECT_LT(rel_diff(res.type_classes[0].EQ * res.type_classes[0].count, res.EQ), 1e-11);
  ASSERT_EQ(res.ER_server.size(), 1000u);
  EXPECT_LT(rel_diff(res.ER_server[17], res.EQ * 3 / 1000), 1e-11);
  double mass = 0;
  for (double p : res.pmf) mass += p;
  EXPECT_LT(mass, 1.0);
}

// With qmax large the distribution carries all the mass and reproduces the moments.
TEST(ExactEngines, DistributionCarriesTheMoments) {
  for (Engine engine : {Engine::general, Engine::symmetric}) {
    const Result res = run(make_system(complete_params(8, 2), 0.6), 400, engine);
    double mass = 0, mean = 0, second = 0;
    for (std::size_t q = 0; q < res.pmf.size(); ++q) {
      mass += res.pmf[q];
      mean += static_cast<double>(q) * res.pmf[q];
      second += static_cast<double>(q * q) * res.pmf[q];
    }
    EXPECT_NEAR(mass, 1.0, 1e-13);
    EXPECT_LT(rel_diff(mean, res.EQ), 1e-12);
    EXPECT_LT(rel_diff(second - mean * mean, res.VarQ), 1e-11);
  }
}

TEST(ExactEngines, OptionsSwitchOutputsOff) {
  Options options;
  options.qmax = 5;
  options.light_traffic = false;
  options.per_type = false;
  for (Engine engine : {Engine::general, Engine::symmetric}) {
    options.engine = engine;
    const Result res = evaluate(make_system(complete_params(5, 2), 0.5), options);
    EXPECT_EQ(res.pmf.size(), 6u);
    EXPECT_TRUE(res.alpha.empty());
    EXPECT_TRUE(res.EQ_type.empty() && res.ER_server.empty() && res.type_classes.empty());
    EXPECT_GT(res.EQ, 0.0);
  }
}

// Instability is a result, not an exception: total overload and a locally overloaded subset.
TEST(ExactEngines, UnstableInputGivesTypedResult) {
  for (Engine engine : {Engine::general, Engine::symmetric}) {
    const Result res = run(make_system(complete_params(4, 2), 1.0), 10, engine);
    EXPECT_FALSE(res.stable);
    EXPECT_NE(res.unstable_reason.find("servers {1,2,3,4}"), std::string::npos)
        << res.unstable_reason;
    EXPECT_TRUE(res.pmf.empty());
  }
  // rho = 0.6 overall, but server 1 alone gets 0.9 * 1.2 > 1.
  const Result res = run(make_system(explicit_params(2, {{{0}, 0.9}, {{0, 1}, 0.1}}), 0.6), 0);
  EXPECT_FALSE(res.stable);
  EXPECT_NE(res.unstable_reason.find("servers {1}"), std::string::npos) << res.unstable_reason;
  EXPECT_FALSE(res.locally_stable);
}

TEST(ExactEngines, BadParametersThrowInputError) {
  const auto small = make_system(complete_params(4, 2), 0.5);
  Options options;
  options.qmax = -1;
  EXPECT_THROW(evaluate(small, options), InputError);
  const auto ring = make_system(family_params(FamilyKind::ring, 40), 0.5);
  EXPECT_THROW(run(ring, 0), InputError);
  EXPECT_THROW(run(ring, 0, Engine::symmetric), InputError);
  EXPECT_THROW(run(make_system(complete_params(40, 2), 0.5), 0, Engine::general), InputError);
  try {
    run(ring, 0);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("N = 40"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace qsweep::exact::test
