// The general engine's backward pass with AVX2 (where the CPU has it) and with the build's
// baseline vector instructions gives the same doubles, bit for bit (src/exact/general.cpp): no
// fused multiply-add, no reassociation crept into the wide code.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "exact_test_util.hpp"
#include "qsweep/exact/engine.hpp"

namespace qsweep::exact {
namespace {

using test::complete_params;
using test::family_params;
using test::make_system;

std::vector<std::uint64_t> bits(const std::vector<double>& values) {
  std::vector<std::uint64_t> out;
  for (const double v : values) out.push_back(std::bit_cast<std::uint64_t>(v));
  return out;
}

void expect_same_doubles(const model::FamilyParams& params, double lambda,
                         std::vector<double> speeds, int qmax, bool per_type) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (!__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU: one path only";
#else
  GTEST_SKIP() << "not x86-64: one path only";
#endif
  const auto system = make_system(params, lambda, std::move(speeds));
  const auto types = system.family.enumerate();
  const double rate = system.total_arrival_rate();
  const auto wide = detail::general_engine(types, system.speeds, rate, qmax, per_type);
  const auto baseline =
      detail::general_engine_baseline_vectors(types, system.speeds, rate, qmax, per_type);
  ASSERT_TRUE(wide.violating_set.empty());
  EXPECT_EQ(std::bit_cast<std::uint64_t>(wide.log_f), std::bit_cast<std::uint64_t>(baseline.log_f));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(wide.EQ), std::bit_cast<std::uint64_t>(baseline.EQ));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(wide.VarQ), std::bit_cast<std::uint64_t>(baseline.VarQ));
  EXPECT_EQ(std::bit_cast<std::uint64_t>(wide.condition),
            std::bit_cast<std::uint64_t>(baseline.condition));
  EXPECT_EQ(bits(wide.EQ_type), bits(baseline.EQ_type));
  EXPECT_EQ(bits(wide.log_weight), bits(baseline.log_weight));
  EXPECT_EQ(wide.unions, baseline.unions);
  EXPECT_EQ(wide.EQ_type.size(), per_type ? types.size() : 0U);
  EXPECT_EQ(wide.log_weight.size(), static_cast<std::size_t>(qmax) + 1);
}

std::vector<double> linear_speeds(int N) {
  std::vector<double> speeds;
  for (int n = 0; n < N; ++n) speeds.push_back(1.0 + 0.03 * n);
  return speeds;
}

// random 3-regular, N = 16: 24 types.
model::FamilyParams regular16() {
  auto params = family_params(model::FamilyKind::random_regular, 16);
  params.degree = 3;
  return params;
}

TEST(WideVectors, RandomRegularIsBitwiseTheSame) {
  expect_same_doubles(regular16(), 0.9, {}, 0, true);
  expect_same_doubles(regular16(), 0.9, linear_speeds(16), 20, true);
  expect_same_doubles(regular16(), 0.9, {}, 0, false);
}

TEST(WideVectors, ManyTypesAreBitwiseTheSame) {  // 91 and 120 types: two words of the tables
  expect_same_doubles(complete_params(14, 2), 0.8, linear_speeds(14), 0, true);
  expect_same_doubles(complete_params(16, 2), 0.7, {}, 8, true);
}

TEST(WideVectors, FewTypesAreBitwiseTheSame) {  // 9 types: shorter than the vector loops
  expect_same_doubles(family_params(model::FamilyKind::ring, 9), 0.95, linear_speeds(9), 0, true);
  expect_same_doubles(family_params(model::FamilyKind::ring, 9), 0.95, {}, 30, true);
}

}  // namespace
}  // namespace qsweep::exact
