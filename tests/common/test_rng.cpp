#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "qsweep/common/rng.hpp"

namespace qsweep {
namespace {

TEST(Rng, SameKeySameStreamDifferentKeyDifferentStream) {
  Rng a(7, 11, 0), b(7, 11, 0), c(7, 12, 0), d(7, 11, 1);
  int differ_task = 0, differ_rep = 0;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differ_task += x != c.next_u64();
    differ_rep += x != d.next_u64();
  }
  EXPECT_EQ(differ_task, 100);
  EXPECT_EQ(differ_rep, 100);
}

TEST(Rng, UniformMeanAndVarianceWithinSamplingError) {
  // 1e6 draws: the sample mean has standard error sqrt(1/12/1e6) = 2.9e-4; allow 5 sigma.
  Rng rng(1, 2, 3);
  const int n = 1'000'000;
  double sum = 0.0, sum2 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum2 += u * u;
  }
  EXPECT_NEAR(sum / n, 0.5, 5 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sum2 / n - (sum / n) * (sum / n), 1.0 / 12, 1e-3);
}

TEST(Rng, BelowIsUniformChiSquare) {
  // 7 cells, 7e5 draws: chi-square with 6 degrees of freedom; 22.46 is its 0.999 quantile.
  Rng rng(5, 6);
  std::vector<double> counts(7, 0.0);
  const int n = 700'000;
  for (int i = 0; i < n; ++i) counts[rng.below(7)] += 1;
  double chi2 = 0.0;
  for (double c : counts) chi2 += (c - n / 7.0) * (c - n / 7.0) / (n / 7.0);
  EXPECT_LT(chi2, 22.46);
}

TEST(Rng, ExponentialMean) {
  Rng rng(9, 9);
  const int n = 400'000;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += rng.exponential(2.0);
  // mean 1/2, standard error 0.5 / sqrt(n); allow 5 sigma.
  EXPECT_NEAR(sum / n, 0.5, 5 * 0.5 / std::sqrt(n));
}

}  // namespace
}  // namespace qsweep
