// The general engine's lattice helpers (include/qsweep/exact/general_lattice.hpp) on server sets
// with bits >= 31 set, as the distributed engine (exact_mpi, N up to 40) uses them: set speeds,
// the types inside a set (from the tables and one by one), members, and the per-union kernels on
// a slice of the lattice whose base lies above bit 31, each against a direct computation on the
// 64-bit masks.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "qsweep/exact/general_lattice.hpp"
#include "qsweep/model/family.hpp"

namespace qsweep::exact::detail {
namespace {

constexpr int kN = 40;
constexpr std::uint64_t kAll = (std::uint64_t{1} << kN) - 1;

std::vector<double> speeds() {
  std::vector<double> s(kN);
  for (int n = 0; n < kN; ++n) s[static_cast<std::size_t>(n)] = 0.5 + 0.0137 * n;
  return s;
}

// `count` random types of 1..4 servers, most of them among servers 28..39, with probabilities
// summing to 1.
std::vector<model::JobType> random_types(std::size_t count, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> high(28, kN - 1), any(0, kN - 1), size(1, 4);
  std::uniform_real_distribution<double> weight(0.1, 1.0);
  std::vector<model::JobType> types(count);
  double total = 0.0;
  for (auto& type : types) {
    for (int k = size(rng); k > 0; --k) {
      const int server = k % 3 == 0 ? any(rng) : high(rng);
      type.servers |= model::ServerMask{1} << server;
    }
    type.p = weight(rng);
    total += type.p;
  }
  for (auto& type : types) type.p /= total;
  return types;
}

double direct_speed(std::uint64_t set) {
  const auto s = speeds();
  double mu = 0.0;
  for (int n = 0; n < kN; ++n)
    if ((set >> n) & 1U) mu += s[static_cast<std::size_t>(n)];
  return mu;
}

// Sets to check: random 40-bit masks, the full set, unions of a few types, sets of high servers.
std::vector<Mask> sample_sets(const std::vector<model::JobType>& types, std::mt19937_64& rng) {
  std::vector<Mask> sets{kAll, std::uint64_t{1} << 31, std::uint64_t{1} << 39,
                         kAll & ~((std::uint64_t{1} << 31) - 1)};
  std::uniform_int_distribution<std::size_t> pick(0, types.size() - 1);
  for (int i = 0; i < 2000; ++i) {
    sets.push_back(rng() & kAll);
    Mask u = 0;
    for (int k = 0; k < 1 + i % 6; ++k) u |= types[pick(rng)].servers;
    sets.push_back(u);
  }
  return sets;
}

void check_sets(std::size_t type_count) {
  std::mt19937_64 rng(31 + type_count);
  const auto types = random_types(type_count, rng);
  const double total_rate = 7.5;
  const Lattice lat(types, speeds(), total_rate);
  ASSERT_EQ(lat.N, kN);
  ASSERT_EQ(lat.size, std::uint64_t{1} << kN);
  EXPECT_EQ(lat.inside.tabled(), type_count <= kMaxTableTypes);
  for (const Mask B : sample_sets(types, rng)) {
    // Speeds: the half tables add in another order than the direct sum.
    const double mu = direct_speed(B);
    EXPECT_NEAR(lat.mu(B), mu, 1e-14 * mu) << B;
    // The types inside B, in type order: bitwise the same sum.
    double lam = 0.0;
    std::vector<std::uint64_t> words((type_count + 63) / 64);
    for (std::size_t t = 0; t < type_count; ++t) {
      if ((types[t].servers & ~B) != 0) continue;
      lam += total_rate * types[t].p;
      words[t / 64] |= std::uint64_t{1} << (t % 64);
    }
    EXPECT_EQ(inside_rate(lat, B), lam) << B;
    if (lat.inside.tabled()) {
      for (std::size_t w = 0; w < words.size(); ++w) EXPECT_EQ(lat.inside.inside(B, w), words[w]);
    }
    std::vector<int> members_direct;
    for (int n = 0; n < kN; ++n)
      if ((B >> n) & 1U) members_direct.push_back(n);
    EXPECT_EQ(members(B), members_direct);
  }
}

TEST(Lattice64, SetsPastBit31Tabled) { check_sets(60); }
TEST(Lattice64, SetsPastBit31OneByOne) { check_sets(kMaxTableTypes + 40); }

// The kernels on a slice of 2^8 unions at base X << 32 (X: servers 32..39 all in), as the
// distributed engine runs them on a block: pushes land at (B | mask) - base, reads come from
// there, and the values equal a computation keyed by the full 64-bit masks.
TEST(Lattice64, KernelsOnASliceAboveBit31) {
  std::mt19937_64 rng(7);
  // Types inside servers 0..7 and 32..39, so that every push from the slice stays in it.
  std::vector<model::JobType> types;
  std::uniform_int_distribution<int> server(0, 15);
  double total = 0.0;
  for (int t = 0; t < 12; ++t) {
    model::JobType type;
    for (int k = 0; k < 1 + t % 3; ++k) {
      const int s = server(rng);
      type.servers |= model::ServerMask{1} << (s < 8 ? s : 32 + s - 8);
    }
    type.p = 1.0 + t;
    total += type.p;
    types.push_back(type);
  }
  for (auto& type : types) type.p /= total;
  const Lattice lat(types, speeds(), 0.5);
  const Mask base = Mask{0xff} << 32;
  std::vector<Mask> slice_mask;  // the types' masks, all inside base | 0xff
  for (const auto& type : types) {
    ASSERT_EQ(type.servers & ~(base | 0xff), 0U);
    slice_mask.push_back(type.servers);
  }

  // Forward pushes from every B = base + b: into cells at (B | mask) - base, against a map.
  std::vector<Cell> cell(256);
  std::map<Mask, std::pair<double, double>> expected;
  for (Mask b = 0; b < 256; ++b) {
    const Mask B = base + b;
    const double g = 1.0 + static_cast<double>(b), g1 = 0.5 * static_cast<double>(b);
    push_union(cell.data(), base, B, g, g1, slice_mask.data(), lat.rate.data(), slice_mask.size());
    for (std::size_t t = 0; t < types.size(); ++t) {
      auto& e = expected[B | types[t].servers];
      e.first += lat.rate[t] * g;
      e.second += lat.rate[t] * (g + g1);
    }
  }
  for (const auto& [target, sums] : expected) {
    ASSERT_GE(target, base);
    ASSERT_LT(target - base, 256U);
    EXPECT_DOUBLE_EQ(cell[target - base].g, sums.first) << target;
    EXPECT_DOUBLE_EQ(cell[target - base].g1_or_h, sums.second) << target;
  }

  // forward_union on the union with the largest mask: G = pushed / d(B), d from the full mask.
  const Mask top = base + 255;
  Moments out;
  Cell value{};
  ASSERT_TRUE(forward_union(lat, top, cell[255], value, out));
  double lam_top = 0.0;
  for (std::size_t t = 0; t < types.size(); ++t) lam_top += lat.rate[t];  // all inside
  EXPECT_DOUBLE_EQ(value.g, cell[255].g / (direct_speed(top) - lam_top));

  // Backward terms: H(B | t) read at (B | mask) - base, 0 for the types inside B.
  for (Mask b = 0; b < 256; ++b) cell[b].g1_or_h = 1.0 / (1.0 + static_cast<double>(b));
  for (Mask b = 0; b < 256; b += 17) {
    const Mask B = base + b;
    std::vector<double> h_next(types.size());
    double lam = 0.0, s = 0.0, lam_direct = 0.0, s_direct = 0.0;
    backward_terms(cell.data(), base, B, slice_mask.data(), lat.rate.data(), slice_mask.size(),
                   h_next.data(), lam, s);
    for (std::size_t t = 0; t < types.size(); ++t) {
      const Mask target = B | types[t].servers;
      const double h = target == B ? 0.0 : 1.0 / (1.0 + static_cast<double>(target - base));
      EXPECT_EQ(h_next[t], h) << B << " type " << t;
      if (target == B) lam_direct += lat.rate[t];
      s_direct += lat.rate[t] * h;
    }
    EXPECT_DOUBLE_EQ(lam, lam_direct);
    EXPECT_DOUBLE_EQ(s, s_direct);
    EXPECT_DOUBLE_EQ(lam, inside_rate(lat, B));
  }
}

}  // namespace
}  // namespace qsweep::exact::detail
