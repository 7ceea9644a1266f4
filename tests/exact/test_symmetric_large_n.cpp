// The symmetric engine at large N (10^4 .. 10^6 servers) against a reference written here in
// another way: the generating function of the state weights in marks z_c on the jobs of each
// class c, F(v) (mu(v) - sum_c z_c lam_c(v)) = sum_{moves u -> v} z_{c(move)} rate F(u), and its
// derivatives in z_c at z = 1 (forward-mode differentiation), in long double with a separate
// binary exponent per size (the weights span e^{+-N}, beyond long double's range at N = 10^6), the
// transition rates from products of binomials in long double (exact integers here). The total of
// E[Q_S] over the types of class c is f'_c / f; E[Q] their sum; every server holds by symmetry
// E[R_n] = sum_c size_c (total of class c) / N. The engine works with logarithms and
// mixtures (src/exact/symmetric.cpp): no step is shared.
//
// Tolerances: E[Q], E[T], E[R_n] and the class totals to 1e-13 relative (the reference's own
// rounding is at most about N x 5.4e-20, below 1e-13 up to N = 10^6). Before the engine kept its
// weights with binary exponents and its means as two-double sums, E[R_n] of complete d = 2 at
// lambda = 0.9 was 4e-10 off at N = 10^5 and 1.65e-8 at 10^6 (a backward pass through
// e^{ln F + ln H - ln f}), and E[Q] of singletons_full 1.5e-11 at 10^6 (rounding of growing means).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "exact_test_util.hpp"

namespace qsweep::exact::test {
namespace {

struct Move {
  int to;
  int cls;
  long double rate;
};

// F(u) and its derivatives d/dz_c, all times 2^exponent.
struct Scaled {
  long double f = 0, df[2] = {0, 0};
  long exponent = 0;
};

// A sum of rate x Scaled terms, and per class c the part over the moves of class c, sum of
// rate F, aligned to the largest exponent met.
struct Accumulator {
  long double s = 0, direct[2] = {0, 0}, ds[2] = {0, 0};
  long exponent = 0;
  bool empty = true;

  // Adds (s, direct, ds) x 2^exponent.
  void add(const Accumulator& x) {
    if (x.empty) return;
    long double scale = 1;
    if (empty) {
      exponent = x.exponent;
      empty = false;
    } else if (x.exponent > exponent) {
      const long double shrink = std::ldexp(1.0L, static_cast<int>(exponent - x.exponent));
      s *= shrink;
      for (int c = 0; c < 2; ++c) {
        direct[c] *= shrink;
        ds[c] *= shrink;
      }
      exponent = x.exponent;
    } else {
      scale = std::ldexp(1.0L, static_cast<int>(x.exponent - exponent));
    }
    s += x.s * scale;
    for (int c = 0; c < 2; ++c) {
      direct[c] += x.direct[c] * scale;
      ds[c] += x.ds[c] * scale;
    }
  }
  void add(const Scaled& x, long double rate, int cls) {
    Accumulator term;
    term.s = rate * x.f;
    term.direct[cls] = term.s;
    for (int c = 0; c < 2; ++c) term.ds[c] = rate * x.df[c];
    term.exponent = x.exponent;
    term.empty = false;
    add(term);
  }
};

long double binomial(long n, long k) {
  if (k < 0 || k > n) return 0;
  long double product = 1;  // C(n - k + i, i) after step i: an integer at every step
  for (long i = 1; i <= k; ++i) product = product * static_cast<long double>(n - k + i) / i;
  return product;
}

struct Reference {
  double EQ = 0, ER_server = 0;
  std::array<double, 2> class_total{};
};

// family: complete (d) or singletons_full (eps); unit speeds; L = N lambda.
Reference reference(bool complete, int N, int d, double eps, double lambda) {
  const long double L = static_cast<long double>(N) * lambda;
  const long double all = complete ? binomial(N, d) : 0;
  const long double p1 = (N - 1 - static_cast<long double>(eps)) / (N * (N - 1.0L));
  const long double p_full = eps / (N - 1.0L);
  auto moves = [&](int u) {
    std::vector<Move> out;
    if (complete) {
      for (int j = 0; j <= d; ++j)
        if (u + j <= N)
          out.push_back({u + j, 0, L * binomial(u, d - j) * binomial(N - u, j) / all});
    } else {
      out.push_back({u, 0, L * u * p1});
      if (u < N) out.push_back({u + 1, 0, L * (N - u) * p1});
      out.push_back({N, 1, L * p_full});
    }
    return out;
  };
  // Sizes ahead are held in a ring (complete jumps by at most d, singletons_full by 1), except
  // the jumps of the full set to N.
  const int ring = (complete ? d : 1) + 1;
  std::vector<Accumulator> ahead(static_cast<std::size_t>(ring));
  Accumulator to_full, total;
  for (int u = 0; u <= N; ++u) {
    Accumulator& in = ahead[static_cast<std::size_t>(u % ring)];
    if (u == N) in.add(to_full);
    const std::vector<Move> from = moves(u);
    Scaled F;
    if (u == 0) {
      F.f = 1;
    } else {
      if (in.empty) continue;
      long double lam = 0, lam_class[2] = {0, 0};
      for (const Move& m : from)
        if (m.to == u) {
          lam += m.rate;
          lam_class[m.cls] += m.rate;
        }
      const long double slack = u - lam;
      F.f = in.s / slack;
      for (int c = 0; c < 2; ++c) F.df[c] = (in.ds[c] + in.direct[c] + lam_class[c] * F.f) / slack;
      int shift = 0;
      (void)std::frexp(F.f, &shift);
      F.f = std::ldexp(F.f, -shift);
      for (long double& g : F.df) g = std::ldexp(g, -shift);
      F.exponent = in.exponent + shift;
    }
    in = Accumulator{};
    total.add(F, 1, 0);
    for (const Move& m : from) {
      if (m.to == u) continue;
      (m.to - u < ring ? ahead[static_cast<std::size_t>(m.to % ring)] : to_full)
          .add(F, m.rate, m.cls);
    }
  }
  Reference r;
  for (std::size_t c = 0; c < 2; ++c) r.class_total[c] = static_cast<double>(total.ds[c] / total.s);
  r.EQ = static_cast<double>((total.ds[0] + total.ds[1]) / total.s);
  const long double per_server =
      complete ? d * (total.ds[0] / total.s) / N : (total.ds[0] + N * total.ds[1]) / total.s / N;
  r.ER_server = static_cast<double>(per_server);
  return r;
}

Result run_per_type(const model::System& system) {
  Options options;
  options.light_traffic = false;
  return evaluate(system, options);
}

void expect_matches(const Result& r, const Reference& ref, double lambda, int N, double tol,
                    const std::string& what) {
  ASSERT_TRUE(r.stable) << what;
  EXPECT_LT(rel_diff(r.EQ, ref.EQ), tol) << what << " E[Q] " << r.EQ << " vs " << ref.EQ;
  EXPECT_LT(rel_diff(r.ET, ref.EQ / (N * lambda)), tol) << what << " E[T]";
  ASSERT_EQ(r.ER_server.size(), static_cast<std::size_t>(N)) << what;
  EXPECT_LT(rel_diff(r.ER_server.front(), ref.ER_server), tol)
      << what << " E[R_n] " << r.ER_server.front() << " vs " << ref.ER_server;
  EXPECT_EQ(r.ER_server.front(), r.ER_server.back()) << what;
  for (std::size_t c = 0; c < r.type_classes.size(); ++c)
    EXPECT_LT(rel_diff(r.type_classes[c].EQ * r.type_classes[c].count, ref.class_total.at(c)), tol)
        << what << " class " << c;
}

// The reference against closed forms where there are some: independent queues (complete d = 1),
// E[Q] = N lambda / (1 - lambda); the full set alone (singletons_full, eps = N - 1: p_full = 1),
// an M/M/1 queue of rate N: E[Q] = lambda / (1 - lambda).
TEST(SymmetricLargeN, ReferenceMeetsClosedForms) {
  const Reference independent = reference(true, 1000, 1, 0.0, 0.9);
  EXPECT_LT(rel_diff(independent.EQ, 1000 * 0.9 / 0.1), 1e-15);
  EXPECT_LT(rel_diff(independent.ER_server, 0.9 / 0.1), 1e-15);
  const Reference full = reference(false, 50, 0, 49.0, 0.7);
  EXPECT_LT(rel_diff(full.EQ, 0.7 / 0.3), 1e-15);
  EXPECT_LT(full.class_total[0], 1e-15);
}

TEST(SymmetricLargeN, CompleteAgreesWithTheReference) {
  struct Case {
    int N, d;
    double lambda, tol;
  };
  for (const Case c : {Case{10'000, 3, 0.9, 1e-13}, Case{100'000, 2, 0.9, 1e-13},
                       Case{100'000, 2, 0.99, 1e-13}, Case{1'000'000, 2, 0.9, 1e-13}}) {
    const Result r = run_per_type(make_system(complete_params(c.N, c.d), c.lambda));
    EXPECT_EQ(r.engine, "symmetric-complete");
    expect_matches(r, reference(true, c.N, c.d, 0.0, c.lambda), c.lambda, c.N, c.tol,
                   "complete N = " + std::to_string(c.N) + " d = " + std::to_string(c.d) +
                       " lambda = " + std::to_string(c.lambda));
  }
}

TEST(SymmetricLargeN, SingletonsFullAgreesWithTheReference) {
  for (const int N : {10'000, 1'000'000})
    for (const double eps : {0.05, 0.5, 0.95}) {
      if (N > 10'000 && eps != 0.05) continue;  // one at 10^6: 0.7 s each
      const Result r = run_per_type(make_system(singletons_full_params(N, eps), 0.9));
      EXPECT_EQ(r.engine, "symmetric-singletons-full");
      ASSERT_EQ(r.type_classes.size(), 2u);
      expect_matches(r, reference(false, N, 0, eps, 0.9), 0.9, N, 1e-13,
                     "singletons_full N = " + std::to_string(N) + " eps = " + std::to_string(eps));
    }
}

}  // namespace
}  // namespace qsweep::exact::test
