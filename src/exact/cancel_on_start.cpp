// Cancel-on-start exact engine: FCFS redundancy where a job starts at the first of its servers
// that can take it, the one idle longest if several are idle (Visschers, Adan and Weiss 2012;
// Ayesta, Bodas and Verloop 2018), from its product form summed over server sets (docs/exact.md,
// "Cancel-on-start").
//
// State: the busy servers and the waiting jobs in arrival order, and the idle servers from the
// longest idle. Walking the sequence with A = the busy servers so far, a busy server multiplies
// the weight by 1 / mu(A) (A with it), a waiting job of type t by rate_t / mu(A) (S_t lies inside
// A); the idle servers I_1, I_2, ... by 1 / lam_C(I_1..I_k) for every prefix, where lam_C(I) is
// the rate of the types that meet I. With lam(A) = rate of the types inside A and
// d(A) = mu(A) - lam(A) > 0 (stability: the condition of cancel-on-completion), the waiting jobs
// of each stretch sum to a geometric series, and with z marking every job:
//   B(A) d(A)   = sum_{m in A} B(A - m),                       B(empty) = 1   (busy orders)
//   W1(A) d(A)  = lam(A) B(A) + sum W1(A - m)        (weighted by the waiting jobs)
//   W2(A) d(A)  = 2 lam(A) W1(A) + sum W2(A - m)     (by waiting x (waiting - 1))
//   D(I) lam_C(I) = sum_{m in I} D(I - m),                     D(empty) = 1   (idle orders)
//   Z = sum_A B(A) D(A^c),  E[Q] Z = sum_A D(A^c) (|A| B + W1),
//   E[Q(Q-1)] Z = sum_A D(A^c) (|A|(|A|-1) B + 2 |A| W1 + W2).
// P(Q = k): V_k(A) mu(A) = sum_{m in A} V_{k-1}(A - m) + lam(A) V_{k-1}(A), weight sum_A V_k
// D(A^c).
//
// Per type (the type of a job in service is not in the state): E[Q_t] = E[W_t] + sum_m
// theta_tm / mu_m (Little at each server: service at m takes 1/mu_m whatever the type), with
// theta_tm the rate at which type-t jobs start at server m. With the continuations
//   K(A) = D(A^c) + sum_{m not in A} K(A + m) / d(A + m)           (of a busy prefix A)
//   M(X) = B(X^c) + sum_{m not in X} M(X + m) / lam_C(X + m)       (of an idle prefix X)
// (K(empty) = M(empty) = Z):
//   E[W_t] Z = rate_t sum_{A >= S_t} B(A) K(A) / d(A);
//   arrivals (m is the longest idle server of S_t): theta_tm Z = rate_t sum_{P inside S_t^c} D(P)
//     M(P + m) / lam_C(P + m);
//   services (m finishes and its first compatible waiting job has type t): theta_tm Z = mu_m rate_t
//     sum_{A >= S_t} F_m(A) K(A) / (e_m(A) d(A)), e_m(A) = mu(A) - lam(A - m), where F_m(A) is the
//     weight of the busy prefixes ending at A with no waiting job compatible with m since m became
//     busy: F_m(A) = B(A - m) + sum_{m' in A, m' != m} F_m(A - m') / e_m(A - m').
// Every sum has positive terms; the only subtractions are d, e_m (the input's stability slack)
// and the final Var = E[Q(Q-1)] + E[Q] - E[Q]^2.
//
// Memory: six doubles per server set: lam, lam_C, D, B, and two arrays X (W1, then V, then K)
// and Y (W2, then M, then F_m). Time O(2^N (N + #types)) for the means, O(qmax N 2^N) for the
// distribution, O(N^2 2^N + sum_t |S_t| 2^(N - |S_t|)) for the per-type means.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"
#include "qsweep/exact/speed_sums.hpp"
#include "qsweep/exact/summation.hpp"

namespace qsweep::exact::detail {
namespace {

using Mask = std::uint32_t;

// Calls f(bit) for every set bit of `set`, lowest first.
template <class F>
void for_each_bit(Mask set, const F& f) {
  for (; set != 0; set &= set - 1) f(set & (~set + 1));
}

// Calls f(sub) for every subset of `set`, `set` first and 0 last.
template <class F>
void for_each_subset(Mask set, const F& f) {
  for (Mask sub = set;; sub = (sub - 1) & set) {
    f(sub);
    if (sub == 0) break;
  }
}

struct Servers {  // the servers some type uses, renumbered 0..N-1
  std::vector<int> original;
  std::vector<double> speed;
  std::vector<Mask> mask;  // per type
  std::vector<double> rate;
};

Servers used_servers(const std::vector<model::JobType>& types, const std::vector<double>& speeds,
                     double total_rate) {
  model::ServerMask used = 0;
  for (const auto& type : types) used |= type.servers;
  Servers s;
  std::vector<int> index(speeds.size(), -1);
  for (std::size_t n = 0; n < speeds.size(); ++n) {
    if ((used >> n & 1U) == 0) continue;
    index[n] = static_cast<int>(s.original.size());
    s.original.push_back(static_cast<int>(n));
    s.speed.push_back(speeds[n]);
  }
  for (const auto& type : types) {
    Mask m = 0;
    for (model::ServerMask rest = type.servers; rest != 0; rest &= rest - 1)
      m |= Mask{1} << index[static_cast<std::size_t>(std::countr_zero(rest))];
    s.mask.push_back(m);
    s.rate.push_back(total_rate * type.p);
  }
  return s;
}

}  // namespace

Moments cancel_on_start_engine(const std::vector<model::JobType>& types,
                               const std::vector<double>& speeds, double total_rate, int qmax,
                               bool per_type) {
  const Servers s = used_servers(types, speeds, total_rate);
  const int N = static_cast<int>(s.speed.size());
  const std::uint64_t size = std::uint64_t{1} << N;
  const Mask full = static_cast<Mask>(size - 1);
  const std::size_t T = s.mask.size();
  const SpeedSums mu(s.speed);
  Moments out;
  out.unions = size;

  // Rates of the types inside each set (lam) and meeting it (lam_C).
  std::vector<double> lam(size), meet(size);
  for (std::uint64_t a = 0; a < size; ++a) {
    const auto A = static_cast<Mask>(a);
    double inside = 0.0, meeting = 0.0;
    for (std::size_t t = 0; t < T; ++t) {
      inside += (s.mask[t] & ~A) == 0 ? s.rate[t] : 0.0;
      meeting += (s.mask[t] & A) != 0 ? s.rate[t] : 0.0;
    }
    lam[a] = inside;
    meet[a] = meeting;
  }
  for (std::uint64_t a = 1; a < size; ++a) {
    const double m = mu(static_cast<Mask>(a)), d = m - lam[a];
    if (!(d > 0.0)) {
      for_each_bit(static_cast<Mask>(a), [&](Mask bit) {
        out.violating_set.push_back(s.original[static_cast<std::size_t>(std::countr_zero(bit))]);
      });
      out.slack = d;
      return out;
    }
    if (m + lam[a] > out.condition * d) out.condition = (m + lam[a]) / d;
  }
  const auto d = [&](Mask A) { return mu(A) - lam[A]; };

  std::vector<double> D(size);  // idle orders
  D[0] = 1.0;
  for (std::uint64_t i = 1; i < size; ++i) {
    const auto I = static_cast<Mask>(i);
    double sum = 0.0;
    for_each_bit(I, [&](Mask bit) { sum += D[I ^ bit]; });
    D[i] = sum / meet[i];
  }

  // Busy orders with their waiting jobs, and the moments.
  std::vector<double> B(size), X(size), Y(size);  // X, Y: W1, W2 here
  B[0] = 1.0;
  CompensatedSum z, q1, q2;
  z.add(D[full]);
  for (std::uint64_t a = 1; a < size; ++a) {
    const auto A = static_cast<Mask>(a);
    double s0 = 0.0, s1 = 0.0, s2 = 0.0;
    for_each_bit(A, [&](Mask bit) {
      s0 += B[A ^ bit];
      s1 += X[A ^ bit];
      s2 += Y[A ^ bit];
    });
    const double slack = d(A);
    const double b = s0 / slack, w1 = (lam[a] * b + s1) / slack,
                 w2 = (2.0 * lam[a] * w1 + s2) / slack;
    B[a] = b;
    X[a] = w1;
    Y[a] = w2;
    const double k = std::popcount(A), idle = D[full & ~A];
    z.add(b * idle);
    q1.add((k * b + w1) * idle);
    q2.add((k * (k - 1.0) * b + 2.0 * k * w1 + w2) * idle);
  }
  const double Z = z.value();
  if (!std::isfinite(Z) || !std::isfinite(q2.value()))
    throw InputError(
        fmt::format("exact: P(Q = 0) is below 1e-308 for this N = {} cancel-on-start "
                    "system, out of the engine's double range; use a load further "
                    "from overload",
                    N));
  // Weights relative to the empty system's (sum of its idle orders D(all)): P(Q = 0) = 1 / f.
  const double empty = D[full];
  out.log_f = std::log(Z) - std::log(empty);
  out.EQ = q1.value() / Z;
  out.VarQ = q2.value() / Z + out.EQ - out.EQ * out.EQ;  // E[Q(Q-1)] + E[Q] - E[Q]^2

  // Distribution, in place in X: V_k(A) reads V_{k-1} at A and its subsets (smaller masks, not
  // yet overwritten in decreasing order); rescaled every step as in the general engine.
  out.log_weight.assign(static_cast<std::size_t>(qmax) + 1, 0.0);
  if (qmax > 0) {
    std::fill(X.begin(), X.end(), 0.0);
    X[0] = 1.0;
    double log_scale = 0.0, carry = 1.0;
    for (int k = 1; k <= qmax; ++k) {
      CompensatedSum total;
      double largest = 0.0;
      for (std::uint64_t a = size - 1; a > 0; --a) {
        const auto A = static_cast<Mask>(a);
        double sum = lam[a] * X[a];
        for_each_bit(A, [&](Mask bit) { sum += X[A ^ bit]; });
        const double v = carry * sum / mu(A);
        X[a] = v;
        total.add(v * D[full & ~A]);
        largest = std::max(largest, v);
      }
      X[0] = 0.0;
      out.log_weight[static_cast<std::size_t>(k)] =
          log_scale + std::log(total.value()) - std::log(empty);
      carry = 1.0 / largest;
      log_scale += std::log(largest);
    }
  }
  if (!per_type) return out;

  // M (idle continuations) in Y, then the arrivals that start at once.
  std::vector<double> in_service(T), flow(T), waiting(T);
  Y[full] = 1.0;  // B(empty)
  for (std::uint64_t x = size - 1; x-- > 0;) {
    const auto Xs = static_cast<Mask>(x);
    double sum = B[full & ~Xs];
    for_each_bit(full & ~Xs, [&](Mask bit) { sum += Y[Xs | bit] / meet[Xs | bit]; });
    Y[x] = sum;
  }
  for (std::size_t t = 0; t < T; ++t) {
    CompensatedSum served, started;
    for_each_subset(full & ~s.mask[t], [&](Mask P) {
      double w_mu = 0.0, w = 0.0;
      for_each_bit(s.mask[t], [&](Mask bit) {
        const double x = Y[P | bit] / meet[P | bit];
        w += x;
        w_mu += x / s.speed[static_cast<std::size_t>(std::countr_zero(bit))];
      });
      served.add(D[P] * w_mu);
      started.add(D[P] * w);
    });
    in_service[t] = served.value();
    flow[t] = started.value();
  }

  // K (busy continuations) in X; the waiting jobs.
  X[full] = 1.0;  // D(empty)
  for (std::uint64_t a = size - 1; a-- > 0;) {
    const auto A = static_cast<Mask>(a);
    double sum = D[full & ~A];
    for_each_bit(full & ~A, [&](Mask bit) { sum += X[A | bit] / d(A | bit); });
    X[a] = sum;
  }
  for (std::size_t t = 0; t < T; ++t) {
    CompensatedSum sum;
    for_each_subset(full & ~s.mask[t], [&](Mask sub) {
      const Mask A = s.mask[t] | sub;
      sum.add(B[A] * X[A] / d(A));
    });
    waiting[t] = sum.value();
  }

  // Jobs that wait and start when a server finishes: F_m in Y, one server at a time.
  std::vector<CompensatedSum> served(T), started(T);
  for (int n = 0; n < N; ++n) {
    const Mask own = Mask{1} << n;
    const auto e = [&](Mask A) { return mu(A) - lam[A ^ own]; };  // A holds n
    for (std::uint64_t a = own; a < size; a = (a + 1) | own) {
      const auto A = static_cast<Mask>(a);
      double sum = B[A ^ own];
      for_each_bit(A ^ own, [&](Mask bit) { sum += Y[A ^ bit] / e(A ^ bit); });
      Y[a] = sum;
    }
    for (std::size_t t = 0; t < T; ++t) {
      if ((s.mask[t] & own) == 0) continue;
      CompensatedSum sum;
      for_each_subset(full & ~s.mask[t], [&](Mask sub) {
        const Mask A = s.mask[t] | sub;
        sum.add(Y[A] * X[A] / (e(A) * d(A)));
      });
      served[t].add(sum.value());
      started[t].add(sum.value() * s.speed[static_cast<std::size_t>(n)]);
    }
  }

  for (std::size_t t = 0; t < T; ++t) {
    const double r = s.rate[t];
    out.EW_type.push_back(r * waiting[t] / Z);
    out.EQ_type.push_back(r * (waiting[t] + in_service[t] + served[t].value()) / Z);
    out.type_flow.push_back((flow[t] + started[t].value()) / Z);
  }
  return out;
}

}  // namespace qsweep::exact::detail
