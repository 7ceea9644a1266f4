// The joint pmf of the per-type counts (Q_S)_S (Options::joint_qmax, joint_bin) against an
// independent enumeration of job-type sequences on random instances, the paper's wedge formulas
// (eqs. 26-28), the engine's own total pmf and per-type means (marginals), and its own unbinned
// grid (binning). Fixed seeds; the instances are the same on every run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "exact_test_util.hpp"
#include "qsweep/common/error.hpp"

namespace qsweep::exact::test {
namespace {

Result run_joint(const model::System& system, int joint_qmax, int joint_bin = 1, int qmax = 0) {
  Options options;
  options.qmax = qmax;
  options.joint_qmax = joint_qmax;
  options.joint_bin = joint_bin;
  return evaluate(system, options);
}

// Flat index of the counts n in an unbinned joint pmf (last type fastest).
std::size_t cell(const Result& r, const std::vector<int>& n) {
  std::size_t index = 0;
  for (std::size_t t = 0; t < n.size(); ++t)
    index = index * static_cast<std::size_t>(r.joint_shape[t]) + static_cast<std::size_t>(n[t]);
  return index;
}

// Calls f(n) for every count vector of `types` entries in 0..qmax.
void for_each_cell(std::size_t types, int qmax,
                   const std::function<void(const std::vector<int>&)>& f) {
  std::vector<int> n(types, 0);
  while (true) {
    f(n);
    std::size_t t = types;
    while (t > 0 && n[t - 1] == qmax) n[--t] = 0;
    if (t == 0) return;
    ++n[t - 1];
  }
}

int total(const std::vector<int>& n) { return std::accumulate(n.begin(), n.end(), 0); }

// Every count vector with at most max_len jobs: P(n) / C equals the enumeration to 1e-12
// relative, at any stable load (the ratios do not depend on the truncation), on 40 random
// instances with 2 or 3 types (N <= 6, random sets, probabilities, speeds, loads up to 98% of
// the stability limit).
TEST(ExactJoint, MatchesEnumerationOfSequences) {
  std::mt19937_64 gen(20240917);
  std::uniform_real_distribution<double> load(0.05, 0.98);
  for (int trial = 0; trial < 40; ++trial) {
    const Instance inst = random_instance(gen, 2, 3);
    const auto types = model::Family(inst.params).enumerate();
    const double L = load(gen) * max_stable_rate(types, inst.speeds);
    const auto system = make_system(inst.params, L / inst.params.N, inst.speeds);
    const int len = types.size() == 2 ? 16 : 10;  // 1.3e5 / 8.9e4 sequences
    const Result r = run_joint(system, len);
    ASSERT_TRUE(r.stable) << trial;
    ASSERT_EQ(r.joint_shape, std::vector<std::int64_t>(types.size(), len + 1)) << trial;
    // Eq. (3) without C summed by count vector over every sequence of at most len jobs, prefix
    // unions formed job by job (nothing shared with the engine's recursion on counts).
    const BruteForce bf(types, inst.speeds, L, len, true);
    for (const auto& [n, weight] : bf.by_counts)
      EXPECT_LT(rel_diff(r.joint_pmf[cell(r, n)] / r.C, weight.value()), 1e-12)
          << "trial " << trial << " counts " << ::testing::PrintToString(n);
  }
}

// Paper eqs. (26)-(28): the wedge, three servers of speed 1, types {1,2} (p = 7/12) and {2,3}
// (5/12), edge rates l1 = 3 lambda 7/12 and l2 = 3 lambda 5/12. Eq. (27) as printed agrees with
// the engine (and with a derivation: a sequence starting with k jobs of one type, then the other
// type, weighs (l/2)^k (l/3)^(rest)). C is eq. (28), not the engine's.
TEST(ExactJoint, WedgeMatchesPaperEquations26To28) {
  const auto params = explicit_params(3, {{{0, 1}, 7.0 / 12}, {{1, 2}, 5.0 / 12}});
  for (double lambda : {0.9, 0.9999}) {
    const double l1 = 3 * lambda * 7 / 12, l2 = 3 * lambda * 5 / 12;
    const double C = 3 * (2 - l1) * (2 - l2) * (1 - lambda) / (l1 * l2 + 12 * (1 - lambda));
    const int M = 60;
    const Result r = run_joint(make_system(params, lambda), M);
    // 1 - lambda loses 12 digits at 0.9999 in both computations.
    const double tol = lambda == 0.9 ? 1e-12 : 1e-10;
    EXPECT_LT(rel_diff(r.C, C), tol) << lambda;
    auto binomial = [](int n, int k) {
      double b = 1.0;
      for (int i = 1; i <= k; ++i) b = b * (n - k + i) / i;
      return b;
    };
    for (int q = 0; q <= M; ++q) {
      for (int q2 = 0; q2 <= M; ++q2) {
        double expected;
        if (q == 0 || q2 == 0) {  // eq. (26)
          expected = C * std::pow(q2 == 0 ? l1 / 2 : l2 / 2, q + q2);
        } else {  // eq. (27)
          double bracket = 0.0;
          for (int k = 1; k <= q; ++k)
            bracket += binomial(q + q2 - k - 1, q2 - 1) * std::pow(1.5, k);
          for (int k = 1; k <= q2; ++k)
            bracket += binomial(q + q2 - k - 1, q - 1) * std::pow(1.5, k);
          expected = C * std::pow(l1 / 3, q) * std::pow(l2 / 3, q2) * bracket;
        }
        EXPECT_LT(rel_diff(r.joint_pmf[cell(r, {q, q2})], expected), tol)
            << "lambda " << lambda << " (q, q') = (" << q << ", " << q2 << ")";
      }
    }
  }
}

struct Case {
  const char* name;
  model::System system;
};

std::vector<Case> marginal_cases(double load) {
  std::mt19937_64 gen(99);
  const Instance three = random_instance(gen, 3, 3);
  const auto types = model::Family(three.params).enumerate();
  const double L = load * max_stable_rate(types, three.speeds);
  return {
      {"wedge", make_system(explicit_params(3, {{{0, 1}, 7.0 / 12}, {{1, 2}, 5.0 / 12}}), load)},
      {"complete N=3 d=2 (symmetric engine)", make_system(complete_params(3, 2), load)},
      {"random, three types", make_system(three.params, L / three.params.N, three.speeds)},
      {"one type on all servers", make_system(complete_params(3, 3), load)},
  };
}

// Summing the joint pmf over the cells with q jobs gives the engine's P(Q = q) (its own pass over
// unions), for every q <= joint_qmax (those cells are all in the grid), to 1e-12 relative.
// The joint mass lies between P(Q <= joint_qmax) and P(Q <= types x joint_qmax).
TEST(ExactJoint, MarginalsGiveTheTotalPmf) {
  const int M = 40;
  for (const auto& c : marginal_cases(0.9)) {
    const std::size_t k = static_cast<std::size_t>(c.system.family.num_types());
    const Result r = run_joint(c.system, M, 1, static_cast<int>(k) * M);
    std::vector<Sum> by_total(k * M + 1);
    Sum grid;
    for_each_cell(k, M, [&](const std::vector<int>& n) {
      by_total[static_cast<std::size_t>(total(n))].add(r.joint_pmf[cell(r, n)]);
      grid.add(r.joint_pmf[cell(r, n)]);
    });
    for (int q = 0; q <= M; ++q)
      EXPECT_LT(rel_diff(by_total[static_cast<std::size_t>(q)].value(),
                         r.pmf[static_cast<std::size_t>(q)]),
                1e-12)
          << c.name << " q " << q;
    EXPECT_LT(rel_diff(r.joint_mass, grid.value()), 1e-15) << c.name;
    const double below = std::accumulate(r.pmf.begin(), r.pmf.begin() + M + 1, 0.0);
    const double all = std::accumulate(r.pmf.begin(), r.pmf.end(), 0.0);
    EXPECT_GE(r.joint_mass, below * (1 - 1e-13)) << c.name;
    EXPECT_LE(r.joint_mass, all * (1 + 1e-13)) << c.name;
    EXPECT_LT(r.joint_mass, 1.0) << c.name << ": rho = 0.9 leaves mass beyond the grid";
  }
}

// At load 0.5 the grid 0..150 (0..90 with three types) holds all but ~1e-30 of the mass: the
// mass is 1 and the per-type means from the joint pmf equal the engine's E[Q_S] (adjoint pass)
// to 1e-12.
TEST(ExactJoint, MarginalsGiveThePerTypeMeans) {
  const int M = 150;
  for (const auto& c : marginal_cases(0.5)) {
    const std::size_t k = static_cast<std::size_t>(c.system.family.num_types());
    const Result r = run_joint(c.system, k == 3 ? 90 : M);
    const int qmax = static_cast<int>(r.joint_shape[0]) - 1;
    std::vector<Sum> mean(k);
    for_each_cell(k, qmax, [&](const std::vector<int>& n) {
      for (std::size_t t = 0; t < k; ++t) mean[t].add(n[t] * r.joint_pmf[cell(r, n)]);
    });
    for (std::size_t t = 0; t < k; ++t)
      EXPECT_LT(rel_diff(mean[t].value(), r.EQ_type[t]), 1e-12) << c.name << " type " << t;
    EXPECT_NEAR(r.joint_mass, 1.0, 1e-14) << c.name;
  }
}

// A binned grid is the unbinned grid summed over blocks of joint_bin counts per axis (the last
// block shorter when joint_bin does not divide joint_qmax + 1), for one, two and three types.
TEST(ExactJoint, BinsAreSumsOfTheUnbinnedGrid) {
  const int M = 22, width = 5;  // 23 counts per axis: bins of 5, 5, 5, 5, 3
  for (const auto& c : marginal_cases(0.8)) {
    const std::size_t k = static_cast<std::size_t>(c.system.family.num_types());
    const Result fine = run_joint(c.system, M);
    const Result binned = run_joint(c.system, M, width);
    ASSERT_EQ(binned.joint_shape, std::vector<std::int64_t>(k, 5)) << c.name;
    std::vector<Sum> expected(binned.joint_pmf.size());
    for_each_cell(k, M, [&](const std::vector<int>& n) {
      std::vector<int> b(n.size());
      for (std::size_t t = 0; t < n.size(); ++t) b[t] = n[t] / width;
      expected[cell(binned, b)].add(fine.joint_pmf[cell(fine, n)]);
    });
    for (std::size_t i = 0; i < expected.size(); ++i)
      EXPECT_LT(rel_diff(binned.joint_pmf[i], expected[i].value()), 1e-13)
          << c.name << " bin " << i;
    EXPECT_LT(rel_diff(binned.joint_mass, fine.joint_mass), 1e-14) << c.name;
  }
  // One bin holding the whole grid.
  const model::System wedge = marginal_cases(0.8)[0].system;
  const Result one = run_joint(wedge, M, M + 1);
  EXPECT_EQ(one.joint_pmf.size(), 1u);
  EXPECT_LT(rel_diff(one.joint_pmf[0], run_joint(wedge, M).joint_mass), 1e-14);
}

// Subnormal cells (docs/exact.md, "Joint pmf"): at lambda = 0.9999 a quarter of the wedge's cells
// fall through the subnormal range on their way to 0 (2.1e8 of 9e8 at joint_qmax = 29999), and
// arithmetic on subnormals costs about a hundred times as much as on normal doubles on many x86
// CPUs (not on every one: the cost does not show on the AMD EPYC of the docs' benchmarks). The
// joint pass flushes them to 0: no cell of the grid is subnormal, the cells that are kept equal
// the recursion written here without the flush, and the caller's floating-point mode is back
// afterwards. The recursion here: P(a, c) = (r_a P(a - 1, c) + r_c P(a, c - 1)) / mu(U), every
// term positive, so flushing predecessors to 0 changes a cell by < 2.3e-308 / (1 - 0.5) at most
// in absolute terms. At lambda = 0.5 the grid of 1000 x 1000 cells (the most bins allowed)
// reaches far below the subnormal range (the cells with n jobs sum to C 0.5^n).
TEST(ExactJoint, SubnormalCellsAreFlushedToZero) {
  const double lambda = 0.5, L = 3 * lambda;
  const auto wedge =
      make_system(explicit_params(3, {{{0, 1}, 7.0 / 12}, {{1, 2}, 5.0 / 12}}), lambda);
  const int M = 999;
  const Result r = run_joint(wedge, M);
  ASSERT_EQ(r.joint_pmf.size(), static_cast<std::size_t>((M + 1) * (M + 1)));
  // Without the flush, here in double, the same order (first type slowest).
  const double ra = L * 7 / 12, rc = L * 5 / 12;
  std::vector<double> previous(M + 1, 0.0), current(M + 1, 0.0);
  std::size_t subnormal_here = 0, zero = 0, compared = 0;
  double worst = 0.0;
  for (int a = 0; a <= M; ++a) {
    for (int c = 0; c <= M; ++c) {
      const double mu = a > 0 && c > 0 ? 3.0 : 2.0;
      const double v =
          a == 0 && c == 0
              ? r.C
              : ((a > 0 ? ra * previous[c] : 0.0) + (c > 0 ? rc * current[c - 1] : 0.0)) / mu;
      current[c] = v;
      const double got = r.joint_pmf[static_cast<std::size_t>(a) * (M + 1) + c];
      EXPECT_NE(std::fpclassify(got), FP_SUBNORMAL) << a << ", " << c;
      if (std::fpclassify(v) == FP_SUBNORMAL) ++subnormal_here;
      if (got == 0.0) {
        ++zero;
        EXPECT_LT(v, 2.3e-308 / 0.5) << a << ", " << c;
      } else if (v > 1e-290) {  // far from the flushed cells' influence
        worst = std::max(worst, rel_diff(got, v));
        ++compared;
      }
    }
    std::swap(previous, current);
  }
  EXPECT_GT(subnormal_here, 10'000u) << "the case must pass through the subnormal range";
  EXPECT_GT(compared, 100'000u);
  EXPECT_LT(worst, 1e-12);
  EXPECT_GT(zero, subnormal_here);
  // The floating-point mode is restored: a subnormal result is still subnormal here.
  volatile double small = 1e-300;
  EXPECT_EQ(std::fpclassify(small * 1e-10), FP_SUBNORMAL);
}

TEST(ExactJoint, OffByDefaultAndValidated) {
  const auto wedge = make_system(explicit_params(3, {{{0, 1}, 0.5}, {{1, 2}, 0.5}}), 0.5);
  const Result off = evaluate(wedge, Options{});
  EXPECT_TRUE(off.joint_pmf.empty());
  EXPECT_TRUE(off.joint_shape.empty());

  auto problem = [](const model::System& system, int joint_qmax, int joint_bin) {
    Options options;
    options.joint_qmax = joint_qmax;
    options.joint_bin = joint_bin;
    const Validation v = validate(system, options);
    if (!v.ok()) {
      EXPECT_THROW(evaluate(system, options), InputError);
    }
    return v.ok() ? std::string() : v.option + ": " + v.problem + "; expected " + v.expected;
  };
  EXPECT_EQ(problem(wedge, 10, 3), "");
  const auto ring = make_system(family_params(model::FamilyKind::ring, 4), 0.5);
  EXPECT_EQ(problem(ring, 10, 1)
                .rfind("joint_qmax: the joint pmf has one axis per job type and "
                       "family ring with N = 4 has 4 types; expected a family "
                       "with at most 3 job types",
                       0),
            0u)
      << problem(ring, 10, 1);
  EXPECT_NE(problem(wedge, 10, 0).find("joint_bin: joint_bin = 0 is out of range"),
            std::string::npos);
  EXPECT_NE(problem(wedge, 10, 12)
                .find("joint_bin = 12 is out of range; expected 1 <= joint_bin <= "
                      "joint_qmax + 1 = 11"),
            std::string::npos);
  EXPECT_NE(problem(wedge, -1, 4).find("joint_bin: joint_bin = 4 without joint_qmax"),
            std::string::npos);
  EXPECT_NE(
      problem(wedge, -2, 1).find("joint_qmax: joint_qmax = -2 is out of range; expected -1 (off)"),
      std::string::npos);
  EXPECT_NE(
      problem(wedge, 200'000, 1000).find("joint_qmax: joint_qmax = 200000 with 2 types is a grid"),
      std::string::npos);
  EXPECT_NE(problem(wedge, 9999, 1)
                .find("joint_qmax: joint_qmax = 9999 with joint_bin = 1 gives 1e+08 bins"),
            std::string::npos);
  EXPECT_NE(problem(make_system(complete_params(100, 100), 0.5), 10, 1).find("N = 100"),
            std::string::npos);
}

TEST(ExactJoint, ValidateNamesTheEngineAndTheOptionAtFault) {
  const auto complete = make_system(complete_params(40, 2), 0.5);
  EXPECT_EQ(validate(complete, Options{}).engine, Engine::symmetric);
  Options general;
  general.engine = Engine::general;
  const Validation big = validate(complete, general);
  EXPECT_EQ(big.option, "N");
  EXPECT_NE(big.problem.find("N = 40 is too large for the general exact engine"),
            std::string::npos);
  const auto ring = make_system(family_params(model::FamilyKind::ring, 6), 0.5);
  EXPECT_EQ(validate(ring, Options{}).engine, Engine::general);
  Options symmetric;
  symmetric.engine = Engine::symmetric;
  EXPECT_EQ(validate(ring, symmetric).option, "engine");
  Options bad_qmax;
  bad_qmax.qmax = -1;
  EXPECT_EQ(validate(ring, bad_qmax).option, "qmax");
}

}  // namespace
}  // namespace qsweep::exact::test
