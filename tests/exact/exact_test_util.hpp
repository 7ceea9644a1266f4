#pragma once
// Shared helpers for the exact engine tests: building systems and an independent brute-force
// evaluation of the product form (paper eq. 3) by enumerating every job-type sequence.
#include <bit>
#include <cmath>
#include <cstdint>
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
inline model::FamilyParams explicit_params(int N, const std::vector<std::pair<std::vector<int>, double>>& types) {
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
inline double rel_diff(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), std::abs(b)); }

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
  std::vector<Sum> weight;                 // by length M
  Sum jobs2;                    // sum of weight * M^2
  std::vector<Sum> of_type;     // per type: sum of weight * (number of jobs of that type)

  BruteForce(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
             double total_rate, int max_len)
      : weight(static_cast<std::size_t>(max_len) + 1),
        of_type(types.size()),
        types_(types), speeds_(speeds), L_(total_rate), max_len_(max_len),
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
  std::vector<int> counts_;
};

}  // namespace qsweep::exact::test
