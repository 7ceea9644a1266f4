// Symmetric exact engines: families on identical servers whose union weights depend only on the
// union size (complete with any d, independent = complete with d = 1, singletons_full). The
// lattice of 2^N unions lumps to the sizes 0..N (docs/exact.md, "Symmetric engines"):
//   F(v) d(v) = sum_{u < v} rate(u -> v) F(u),   d(v) = v mu - lam(v),
// where F(v) sums the weights of all unions of size v and rate(u -> v) is the total arrival rate
// of the types that grow one fixed union of size u to size v. Job types fall into classes
// (d-subsets; singletons and the full set) whose members share every per-type value.
//
// F is astronomically large or small for large N (1/C = e^{N * ...}), so the engine works with
// logarithms of weights, and with ratios for the moments:
//   - forward: each size v is a mixture over its predecessors u of the job-count distribution
//     "jobs up to u, one job growing u to v, then a geometric number of jobs inside v"; means and
//     variances are combined by Chan's update (no E[X^2] - E[X]^2 cancellation);
//   - backward: H(u) = (1 + s(u)) / d(u), s(u) = sum_{v > u} rate(u -> v) H(v), and the total of
//     E[Q_S] over the types of a class c is sum_u F(u) sum_{moves of c from u} rate H(to) / f;
//   - distribution: the weights of sequences of exactly k jobs, per size, carried from k to k + 1.
// Cost O(#moves) per pass, #moves = O(N d) for complete and O(N) for singletons_full; memory the
// same (complete d = 3 at N = 10^4: 4e4 moves).
#include <fmt/format.h>

#include <cmath>
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
  double log_rate = 0.0;
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
    if (rate > 0.0) moves.push_back({to, cls, rate, std::log(rate)});
  }
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

  // Forward: ln F(u), and mean and variance of the job count over the sequences ending at size u.
  std::vector<double> log_F(n_sizes, kLogZero), d(n_sizes, 0.0);
  std::vector<Mixture> into(n_sizes);  // predecessors of each size, as job-count mixtures
  Mixture all;
  for (int u = 0; u <= N; ++u) {
    const auto su = static_cast<std::size_t>(u);
    if (u > 0 && into[su].empty()) continue;  // no union of this size
    double lam = 0.0;
    for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
      if (chain.moves[m].to == u) lam += chain.moves[m].rate;
    }
    double mean = 0.0, variance = 0.0;
    if (u == 0) {
      log_F[0] = 0.0;
    } else {
      d[su] = chain.mu(u) - lam;
      if (!(d[su] > 0.0)) {
        out.violating_set = first_servers(u);
        out.slack = d[su];
        return out;
      }
      out.condition = std::max(out.condition, (chain.mu(u) + lam) / d[su]);
      log_F[su] = into[su].log_weight() - std::log(d[su]);
      // One job grows the union to u, then Geometric(lam / mu) jobs fall inside it.
      mean = into[su].mean() + 1.0 + lam / d[su];
      variance = into[su].variance() + lam * chain.mu(u) / (d[su] * d[su]);
    }
    all.add(log_F[su], mean, variance);
    ++out.unions;
    for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
      const Move& move = chain.moves[m];
      if (move.to != u)
        into[static_cast<std::size_t>(move.to)].add(log_F[su] + move.log_rate, mean, variance);
    }
  }
  out.log_f = all.log_weight();
  out.EQ = all.mean();
  out.VarQ = all.variance();

  if (per_type) {
    std::vector<double> log_H(n_sizes, kLogZero);
    for (int u = N; u >= 1; --u) {
      const auto su = static_cast<std::size_t>(u);
      if (log_F[su] == kLogZero) continue;
      LogSum s;
      for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
        const Move& move = chain.moves[m];
        if (move.to != u) s.add_log(move.log_rate + log_H[static_cast<std::size_t>(move.to)]);
      }
      log_H[su] = log1p_exp(s.log()) - std::log(d[su]);
    }
    std::vector<CompensatedSum> class_total(chain.classes.size());
    for (int u = 0; u <= N; ++u) {
      const auto su = static_cast<std::size_t>(u);
      if (log_F[su] == kLogZero) continue;
      for (std::size_t m = chain.begin(u); m < chain.end(u); ++m) {
        const Move& move = chain.moves[m];
        class_total[static_cast<std::size_t>(move.cls)].add(std::exp(
            log_F[su] + move.log_rate + log_H[static_cast<std::size_t>(move.to)] - out.log_f));
      }
    }
    out.classes = chain.classes;
    for (std::size_t c = 0; c < out.classes.size(); ++c) {
      out.classes[c].EQ = class_total[c].value() / out.classes[c].count;
    }
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
