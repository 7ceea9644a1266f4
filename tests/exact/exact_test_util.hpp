#pragma once
// Shared helpers for the exact engine tests: building systems and an independent brute-force
// evaluation of the product form (paper eq. 3) by enumerating every job-type sequence.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "qsweep/exact/exact.hpp"
#include "qsweep/model/family.hpp"
#include "qsweep/model/model.hpp"

namespace qsweep::exact::test {

inline model::FamilyParams family_params(model::FamilyKind kind, int N) {
  model::FamilyParams p;
  p.kind = kind;
  p.N = N;
  return p;
}

inline model::FamilyParams complete_params(int N, int d) {
  auto p = family_params(model::FamilyKind::complete, N);
  p.d = d;
  return p;
}

inline model::FamilyParams singletons_full_params(int N, double eps) {
  auto p = family_params(model::FamilyKind::singletons_full, N);
  p.eps = eps;
  return p;
}

// Explicit family from 0-based server lists and probabilities.
inline model::FamilyParams explicit_params(
    int N, const std::vector<std::pair<std::vector<int>, double>>& types) {
  auto p = family_params(model::FamilyKind::explicit_types, N);
  for (const auto& [servers, prob] : types) p.types.push_back({servers, prob});
  return p;
}

inline model::System make_system(const model::FamilyParams& params, double lambda,
                                 std::vector<double> speeds = {}) {
  if (speeds.empty()) speeds.assign(static_cast<std::size_t>(params.N), 1.0);
  return model::System(model::Family(params), std::move(speeds), lambda);
}

inline Result run(const model::System& system, int qmax, Engine engine = Engine::automatic) {
  Options options;
  options.qmax = qmax;
  options.engine = engine;
  return evaluate(system, options);
}

// Relative difference, for positive quantities.
inline double rel_diff(double a, double b) {
  return std::abs(a - b) / std::max(std::abs(a), std::abs(b));
}

// Neumaier sum, so that the reference is as accurate as the engine.
class Sum {
 public:
  void add(double x) {
    const double t = s_ + x;
    c_ += std::abs(s_) >= std::abs(x) ? (s_ - t) + x : (x - t) + s_;
    s_ = t;
  }
  double value() const { return s_ + c_; }

 private:
  double s_ = 0.0, c_ = 0.0;
};

// Sums eq. (3) without C over all sequences (c_1..c_M) of types with M <= max_len.
struct BruteForce {
  std::vector<Sum> weight;   // by length M
  Sum jobs2;                 // sum of weight * M^2
  std::vector<Sum> of_type;  // per type: sum of weight * (number of jobs of that type)
  std::map<std::vector<int>, Sum> by_counts;  // by count vector (jobs per type), if asked for

  BruteForce(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
             double total_rate, int max_len, bool with_counts = false)
      : weight(static_cast<std::size_t>(max_len) + 1),
        of_type(types.size()),
        types_(types),
        speeds_(speeds),
        L_(total_rate),
        max_len_(max_len),
        with_counts_(with_counts),
        counts_(types.size(), 0) {
    visit(0, 0, 1.0);
  }

  double mu(model::ServerMask set) const {
    double m = 0.0;
    for (; set != 0; set &= set - 1) m += speeds_[static_cast<std::size_t>(std::countr_zero(set))];
    return m;
  }

 private:
  void visit(model::ServerMask uni, int len, double w) {
    weight[static_cast<std::size_t>(len)].add(w);
    jobs2.add(w * len * len);
    for (std::size_t t = 0; t < types_.size(); ++t) of_type[t].add(w * counts_[t]);
    if (with_counts_) by_counts[counts_].add(w);
    if (len == max_len_) return;
    for (std::size_t t = 0; t < types_.size(); ++t) {
      const model::ServerMask next = uni | types_[t].servers;
      ++counts_[t];
      visit(next, len + 1, w * L_ * types_[t].p / mu(next));
      --counts_[t];
    }
  }

  const std::vector<model::JobType>& types_;
  const std::vector<double>& speeds_;
  double L_;
  int max_len_;
  bool with_counts_;
  std::vector<int> counts_;
};

struct Instance {
  model::FamilyParams params;
  std::vector<double> speeds;
};

// A random explicit family on N <= 6 servers with min_types..max_types distinct random server
// sets (fewer if N is too small), random probabilities and speeds in [0.5, 2].
inline Instance random_instance(std::mt19937_64& gen, int min_types = 1, int max_types = 5) {
  int min_N = 1;
  while ((1 << min_N) - 1 < min_types) ++min_N;
  std::uniform_int_distribution<int> n_dist(min_N, 6);
  const int N = n_dist(gen);
  const int most = std::min((1 << N) - 1, max_types);
  const int T = std::uniform_int_distribution<int>(min_types, most)(gen);
  std::set<std::uint32_t> masks;
  std::uniform_int_distribution<std::uint32_t> mask_dist(1, (1u << N) - 1);
  while (static_cast<int>(masks.size()) < T) masks.insert(mask_dist(gen));
  std::uniform_real_distribution<double> unit(0.1, 1.0);
  std::vector<double> p;
  for (int t = 0; t < T; ++t) p.push_back(unit(gen));
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  std::vector<std::pair<std::vector<int>, double>> types;
  std::size_t t = 0;
  for (std::uint32_t m : masks) {
    std::vector<int> servers;
    for (int n = 0; n < N; ++n)
      if (m >> n & 1u) servers.push_back(n);
    types.emplace_back(servers, p[t++] / total);
  }
  std::uniform_real_distribution<double> speed(0.5, 2.0);
  std::vector<double> speeds(static_cast<std::size_t>(N));
  for (double& s : speeds) s = speed(gen);
  return {explicit_params(N, types), speeds};
}

// Largest stable total arrival rate: min over server sets U of mu(U) / P(type inside U),
// by enumerating all U (independent of the model layer's min-cut check).
inline double max_stable_rate(const std::vector<model::JobType>& types,
                              const std::vector<double>& speeds) {
  const auto N = speeds.size();
  double best = std::numeric_limits<double>::infinity();
  for (std::uint64_t U = 1; U < (std::uint64_t{1} << N); ++U) {
    double mu = 0.0, mass = 0.0;
    for (std::size_t n = 0; n < N; ++n)
      if (U >> n & 1u) mu += speeds[n];
    for (const auto& t : types)
      if ((t.servers & ~U) == 0) mass += t.p;
    if (mass > 0) best = std::min(best, mu / mass);
  }
  return best;
}

}  // namespace qsweep::exact::test
