// Symmetric exact engines: families on identical servers whose union weights depend only on the
// union size (complete with any d, independent = complete with d = 1, singletons_full). The
// lattice of 2^N unions lumps to the sizes 0..N (docs/exact.md, "Symmetric engines"):
//   F(v) d(v) = sum_{u < v} rate(u -> v) F(u),   d(v) = v mu - lam(v),
// where F(v) sums the weights of all unions of size v and rate(u -> v) is the total arrival rate
// of the types that grow one fixed union of size u to size v. Job types fall into classes
// (d-subsets; singletons and the full set) whose members share every per-type value.
//
// F is astronomically large or small for large N (1/C = e^{N * ...}), so the engine keeps each
// weight as a double times its own binary exponent (in logarithms a product would round to
// eps |ln F| ~ eps N absolute, which is the relative error of F: E[R_n] was off by 1.65e-8 at
// N = 1e6 that way), and works with ratios for the moments:
//   - forward: each size v is a mixture over its predecessors u of the job-count distribution
//     "jobs up to u, one job growing u to v, then a geometric number of jobs inside v"; means and
//     variances are combined by Chan's update (no E[X^2] - E[X]^2 cancellation);
//   - per class c, the mean number of jobs of class c over the same sequences, combined by the
//     same weights: the one job that grows u to v adds 1 to its class, the geometric number of
//     jobs inside v adds lam_c(v) / d(v); over all sizes it is the total of E[Q_S] over the types
//     of c (formerly a backward pass, whose products of F and H cancelled the same e^{+-N});
//   - distribution: the weights of sequences of exactly k jobs, per size, carried from k to k + 1.
// Cost O(#moves) per pass, #moves = O(N d) for complete and O(N) for singletons_full; memory the
// same (complete d = 3 at N = 10^4: 4e4 moves).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/summation.hpp"
#include "qsweep/model/family_registry.hpp"

namespace qsweep::exact::detail {
namespace {

// Arrivals of class `cls` that take a union of size u (the source) to size `to` (to == u: inside).
struct Move {
  int to = 0;
  int cls = 0;
  double rate = 0.0;
};

struct Chain {
  int N = 0;
  double speed = 0.0;
  std::vector<TypeClass> classes;
  std::vector<std::size_t> first;  // moves from size u are moves[first[u] .. first[u + 1])
  std::vector<Move> moves;

  double mu(int u) const { return u * speed; }
  std::size_t begin(int u) const { return first[static_cast<std::size_t>(u)]; }
  std::size_t end(int u) const { return first[static_cast<std::size_t>(u) + 1]; }
  void add(int to, int cls, double rate) {
    if (rate > 0.0) moves.push_back({to, cls, rate});
  }
};

// A sum carried as hi + lo (Knuth's two-sum): the job-count means grow by O(1) per size up to
// O(N), and rounding each step to eps |mean| would add up to eps N relative (1.5e-11 at N = 1e6).
struct Sum2 {
  double hi = 0.0, lo = 0.0;

  void add(double x) {
    const double s = hi + x;
    const double back = s - hi;
    lo += (hi - (s - back)) + (x - back);
    hi = s;
  }
  double value() const { return hi + lo; }
  // this - other, to the rounding of the result
  double minus(const Sum2& other) const { return (hi - other.hi) + (lo - other.lo); }
};

// At most this many classes (complete: 1; singletons_full: 2).
constexpr std::size_t kMaxClasses = 2;
using ClassMeans = std::array<Sum2, kMaxClasses>;

// A positive weight m 2^e with m in [0.5, 1) (or 0): F spans e^{+-N}, and in logarithms each
// product would round to eps |ln F| ~ eps N absolute, the relative error of F. Here a product
// or quotient rounds to eps relative, whatever the size.
struct Weight {
  double m = 0.0;
  std::int64_t e = 0;

  static Weight of(double x, std::int64_t e = 0) {
    int shift = 0;
    const double m = std::frexp(x, &shift);
    return {m, e + shift};
  }
  Weight times(double x) const { return of(m * x, e); }
  double log() const { return std::log(m) + static_cast<double>(e) * std::numbers::ln2; }
};

// The sequences ending at a size (or all): their total weight, and the mean and variance of
// their job count (Chan's pairwise update: the variance is a sum of non-negative terms, no
// E[X^2] - E[X]^2), and the mean of each class's job count, combined by the same weights.
class SizeMixture {
 public:
  void add(const Weight& weight, const Sum2& mean, double variance, const ClassMeans& class_means) {
    if (weight.m == 0.0) return;
    double w = 1.0;
    if (weight_ == 0.0) {
      exponent_ = weight.e;
      weight_ = weight.m;
      mean_ = mean;
      m2_ = weight.m * variance;
      class_means_ = class_means;
      return;
    }
    if (weight.e > exponent_) {
      const double shrink =
          std::ldexp(1.0, static_cast<int>(std::max<std::int64_t>(exponent_ - weight.e, -2000)));
      weight_ *= shrink;
      m2_ *= shrink;
      exponent_ = weight.e;
      w = weight.m;
    } else {
      w = std::ldexp(weight.m,
                     static_cast<int>(std::max<std::int64_t>(weight.e - exponent_, -2000)));
    }
    const double total = weight_ + w;
    const double delta = mean.minus(mean_);
    mean_.add(delta * (w / total));
    m2_ += w * variance + delta * delta * (weight_ * w / total);
    for (std::size_t c = 0; c < kMaxClasses; ++c)
      class_means_[c].add(class_means[c].minus(class_means_[c]) * (w / total));
    weight_ = total;
  }
  bool empty() const { return weight_ == 0.0; }
  Weight weight() const { return Weight::of(weight_, exponent_); }
  const Sum2& mean() const { return mean_; }
  double variance() const { return m2_ / weight_; }
  const ClassMeans& class_means() const { return class_means_; }

 private:
  std::int64_t exponent_ = 0;
  double weight_ = 0.0, m2_ = 0.0;
  Sum2 mean_;
  ClassMeans class_means_{};
};

// ln C(a, k): a short exact product for small k (accurate to a few ulps), lgamma otherwise.
double log_binomial(int a, int k) {
  if (k < 0 || k > a) return kLogZero;
  k = std::min(k, a - k);
  if (k <= 30) {
    double product = 1.0;
    for (int i = 1; i <= k; ++i) product *= static_cast<double>(a - k + i) / i;
    return std::log(product);
  }
  return std::lgamma(a + 1.0) - std::lgamma(k + 1.0) - std::lgamma(a - k + 1.0);
}

// A new d-subset meets a union of size u in d - j servers and adds j new ones with probability
// C(u, d - j) C(N - u, j) / C(N, d) (hypergeometric).
Chain complete_chain(int N, int d, double speed, double L) {
  constexpr std::size_t kMaxMoves = 100'000'000;
  if (static_cast<double>(N + 1) * (d + 1) > 2.0 * kMaxMoves)
    throw InputError(
        fmt::format("symmetric exact engine: complete family with N = {}, d = {} needs about "
                    "N * d = {:.3g} transitions; at most {} are supported",
                    N, d, static_cast<double>(N) * d, kMaxMoves));
  Chain chain{N, speed, {}, {}, {}};
  const double log_count = log_binomial(N, d);
  chain.classes.push_back(
      {d == 1 ? "singletons" : "d-subsets", d, std::exp(log_count), std::exp(-log_count)});
  for (int u = 0; u <= N; ++u) {
    chain.first.push_back(chain.moves.size());
    for (int j = std::max(0, d - u); j <= std::min(d, N - u); ++j) {
      const double log_h = log_binomial(u, d - j) + log_binomial(N - u, j) - log_count;
      chain.add(u + j, 0, L * std::exp(log_h));
    }
  }
  chain.first.push_back(chain.moves.size());
  return chain;
}

// Singletons p1 = (N - 1 - eps) / (N (N - 1)) each and the full set pF = eps / (N - 1).
Chain singletons_full_chain(int N, double eps, double speed, double L) {
  Chain chain{N, speed, {}, {}, {}};
  const double p1 = (N - 1 - eps) / (N * (N - 1.0)), p_full = eps / (N - 1);
  chain.classes.push_back({"singletons", 1, static_cast<double>(N), p1});
  chain.classes.push_back({"full set", N, 1.0, p_full});
  for (int u = 0; u <= N; ++u) {
    chain.first.push_back(chain.moves.size());
    chain.add(u, 0, L * u * p1);
    if (u < N) chain.add(u + 1, 0, L * (N - u) * p1);
    chain.add(N, 1, L * p_full);
  }
  chain.first.push_back(chain.moves.size());
  return chain;
}

Chain build_chain(const model::System& system) {
  const auto& family = system.family;
  const double L = system.total_arrival_rate(), speed = system.speeds.front();
  switch (family.kind()) {
    case model::FamilyKind::independent:
      return complete_chain(system.N(), 1, speed, L);
    case model::FamilyKind::complete:
      return complete_chain(system.N(), family.params().d, speed, L);
    case model::FamilyKind::singletons_full:
      return singletons_full_chain(system.N(), family.params().eps, speed, L);
    default:  // a family marked size-symmetric in the registry without its chain here
      throw std::logic_error(
          fmt::format("the symmetric engine has no chain for family {}", name_of(family.kind())));
  }
}

std::vector<int> first_servers(int count) {
  std::vector<int> set(static_cast<std::size_t>(count));
  std::iota(set.begin(), set.end(), 0);
  return set;
}

}  // namespace

bool symmetric_applies(const model::System& system) {
  return system.identical_speeds() && system.family.info().size_symmetric;
}

const char* symmetric_engine_name(const model::System& system) {
  return system.family.kind() == model::FamilyKind::singletons_full ? "symmetric-singletons-full"
                                                                    : "symmetric-complete";
}

Moments symmetric_engine(const model::System& system, int qmax, bool per_type) {
  const Chain chain = build_chain(system);
  const int N = chain.N;
  const auto n_sizes = static_cast<std::size_t>(N) + 1;
  Moments out;

  // Forward: F(u), and the means and variance of the job counts over the sequences ending at u.
  std::vector<double> d(n_sizes, 0.0);
  std::vector<SizeMixture> into(n_sizes);  // predecessors of each size, as job-count mixtures
  SizeMixture all;
  if (chain.classes.size() > kMaxClasses)
    throw std::logic_error("the symmetric engine has more classes than kMaxClasses");
  for (int u = 0; u <= N; ++u) {
    const auto su = static_cast<std::size_t>(u);
    if (u > 0 && into[su].empty()) continue;  // no union of this size
    double lam = 0.0;
    std::array<double, kMaxClasses> lam_class{};  // arrival rate inside u per class
    for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
      if (chain.moves[m].to == u) {
        lam += chain.moves[m].rate;
        lam_class[static_cast<std::size_t>(chain.moves[m].cls)] += chain.moves[m].rate;
      }
    }
    Weight F = Weight::of(1.0);
    Sum2 mean;
    double variance = 0.0;
    ClassMeans class_mean{};
    if (u > 0) {
      d[su] = chain.mu(u) - lam;
      if (!(d[su] > 0.0)) {
        out.violating_set = first_servers(u);
        out.slack = d[su];
        return out;
      }
      out.condition = std::max(out.condition, (chain.mu(u) + lam) / d[su]);
      F = into[su].weight().times(1.0 / d[su]);
      // One job grows the union to u, then Geometric(lam / mu) jobs fall inside it.
      mean = into[su].mean();
      mean.add(1.0 + lam / d[su]);
      variance = into[su].variance() + lam * chain.mu(u) / (d[su] * d[su]);
      class_mean = into[su].class_means();
      for (std::size_t c = 0; c < kMaxClasses; ++c) class_mean[c].add(lam_class[c] / d[su]);
    }
    all.add(F, mean, variance, class_mean);
    ++out.unions;
    for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
      const Move& move = chain.moves[m];
      if (move.to == u) continue;
      ClassMeans grown = class_mean;
      grown[static_cast<std::size_t>(move.cls)].add(1.0);
      into[static_cast<std::size_t>(move.to)].add(F.times(move.rate), mean, variance, grown);
    }
  }
  out.log_f = all.weight().log();
  out.EQ = all.mean().value();
  out.VarQ = all.variance();

  if (per_type) {
    out.classes = chain.classes;
    for (std::size_t c = 0; c < out.classes.size(); ++c)
      out.classes[c].EQ = all.class_means()[c].value() / out.classes[c].count;
  }

  // Distribution: as in the general engine, with sizes for unions.
  out.log_weight.assign(static_cast<std::size_t>(qmax) + 1, 0.0);
  std::vector<double> cur(n_sizes, 0.0), next(n_sizes, 0.0);
  cur[0] = 1.0;
  double log_scale = 0.0, carry = 1.0;
  for (int k = 1; k <= qmax; ++k) {
    for (int u = 0; u <= N; ++u) {
      const double w = cur[static_cast<std::size_t>(u)];
      if (w == 0.0) continue;
      cur[static_cast<std::size_t>(u)] = 0.0;
      for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
        next[static_cast<std::size_t>(chain.moves[m].to)] += chain.moves[m].rate * (w * carry);
      }
    }
    CompensatedSum sum;
    double largest = 0.0;
    for (int v = 1; v <= N; ++v) {
      double& w = next[static_cast<std::size_t>(v)];
      if (w == 0.0) continue;
      w /= chain.mu(v);
      sum.add(w);
      largest = std::max(largest, w);
    }
    out.log_weight[static_cast<std::size_t>(k)] = log_scale + std::log(sum.value());
    carry = 1.0 / largest;
    log_scale += std::log(largest);
    std::swap(cur, next);
  }
  return out;
}

}  // namespace qsweep::exact::detail
