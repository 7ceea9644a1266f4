// The cancel-on-start engine against a brute-force CTMC of the queue itself (no product form):
// the state is the list of waiting job types in arrival order, the busy servers and the idle
// servers from the longest idle; a job starts at the longest idle server of its type, a server
// that finishes takes the first waiting job it can serve, else goes to the end of the idle list.
// Arrivals are refused while K jobs are present, and the finite chain is solved by linear level
// reduction. Fixed seeds; random systems with 2..4 servers, 1..4 types and unequal speeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "exact_test_util.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/exact/engine.hpp"

namespace qsweep::exact::test {
namespace {

// Stationary law of the chain truncated at K jobs, and its means.
struct CosChain {
  std::vector<double> pmf;  // P(Q = q), q = 0..K
  double EQ = 0.0, EQ2 = 0.0;
  std::vector<double> EW;                  // mean waiting jobs per type
  std::vector<std::vector<double>> start;  // rate at which type t starts at server m

  CosChain(const std::vector<model::JobType>& types, const std::vector<double>& speeds, double L,
           int K)
      : pmf(static_cast<std::size_t>(K) + 1),
        EW(types.size()),
        start(types.size(), std::vector<double>(speeds.size())) {
    const int N = static_cast<int>(speeds.size());
    // State: busy mask, the idle servers (longest idle first), -1, the waiting types.
    using State = std::vector<int>;
    struct Move {
      State to;
      double rate;
      int type, server;  // a start of `type` at `server`, or -1
    };
    const auto moves = [&](const State& s) {
      const int busy = s[0];
      const auto sep = static_cast<std::size_t>(std::find(s.begin() + 1, s.end(), -1) - s.begin());
      const std::vector<int> idle(s.begin() + 1, s.begin() + static_cast<long>(sep));
      const std::vector<int> waiting(s.begin() + static_cast<long>(sep) + 1, s.end());
      const auto make = [](int b, const std::vector<int>& i, const std::vector<int>& w) {
        State out{b};
        out.insert(out.end(), i.begin(), i.end());
        out.push_back(-1);
        out.insert(out.end(), w.begin(), w.end());
        return out;
      };
      std::vector<Move> out;
      const int jobs =
          std::popcount(static_cast<unsigned>(busy)) + static_cast<int>(waiting.size());
      for (std::size_t t = 0; t < types.size() && jobs < K; ++t) {
        const double rate = L * types[t].p;
        const auto pick = std::find_if(idle.begin(), idle.end(),
                                       [&](int n) { return types[t].servers >> n & 1U; });
        if (pick != idle.end()) {
          std::vector<int> rest = idle;
          rest.erase(rest.begin() + (pick - idle.begin()));
          out.push_back({make(busy | 1 << *pick, rest, waiting), rate, static_cast<int>(t), *pick});
        } else {
          std::vector<int> w = waiting;
          w.push_back(static_cast<int>(t));
          out.push_back({make(busy, idle, w), rate, -1, -1});
        }
      }
      for (int n = 0; n < N; ++n) {
        if ((busy >> n & 1) == 0) continue;
        const double rate = speeds[static_cast<std::size_t>(n)];
        const auto next = std::find_if(waiting.begin(), waiting.end(), [&](int t) {
          return types[static_cast<std::size_t>(t)].servers >> n & 1U;
        });
        if (next != waiting.end()) {
          std::vector<int> w = waiting;
          w.erase(w.begin() + (next - waiting.begin()));
          out.push_back({make(busy, idle, w), rate, *next, n});
        } else {
          std::vector<int> i = idle;
          i.push_back(n);
          out.push_back({make(busy & ~(1 << n), i, waiting), rate, -1, -1});
        }
      }
      return out;
    };

    // Servers no type uses stay idle; starting with them first keeps every state recurrent.
    model::ServerMask used = 0;
    for (const auto& t : types) used |= t.servers;
    State initial{0};
    for (int n = 0; n < N; ++n)
      if ((used >> n & 1U) == 0) initial.push_back(n);
    for (int n = 0; n < N; ++n)
      if (used >> n & 1U) initial.push_back(n);
    initial.push_back(-1);
    std::map<State, std::size_t> index{{initial, 0}};
    std::vector<State> states{initial};
    for (std::size_t i = 0; i < states.size(); ++i)
      for (const Move& m : moves(states[i]))
        if (index.emplace(m.to, states.size()).second) states.push_back(m.to);

    const std::size_t S = states.size();
    std::vector<std::vector<std::pair<std::size_t, double>>> into(S), from(S);
    std::vector<double> out(S, 0.0);
    for (std::size_t i = 0; i < S; ++i)
      for (const Move& m : moves(states[i])) {
        const std::size_t j = index.at(m.to);
        into[j].emplace_back(i, m.rate);
        from[i].emplace_back(j, m.rate);
        out[i] += m.rate;
      }
    // Some idle orders of the start may be transient (pi = 0 there): keep the closed class, the
    // states reachable from an empty state that every state it reaches can reach back.
    const auto reach = [&](std::size_t origin, const auto& edges) {
      std::vector<char> seen(S, 0);
      std::vector<std::size_t> stack{origin};
      seen[origin] = 1;
      while (!stack.empty()) {
        const std::size_t i = stack.back();
        stack.pop_back();
        for (const auto& edge : edges[i])
          if (!seen[edge.first]) {
            seen[edge.first] = 1;
            stack.push_back(edge.first);
          }
      }
      return seen;
    };
    std::vector<char> keep;
    for (std::size_t x = 0; x < S && keep.empty(); ++x) {
      if (states[x][0] != 0 || states[x].back() != -1) continue;  // not empty
      const auto forward = reach(x, from), backward = reach(x, into);
      bool closed = true;
      for (std::size_t i = 0; i < S; ++i) closed = closed && (!forward[i] || backward[i]);
      if (closed) keep = forward;
    }
    if (keep.empty()) {
      ADD_FAILURE() << "no closed class among the empty states";
      return;
    }
    // pi Q = 0 on the closed class by linear level reduction: every move changes Q by one, so
    // with pi_q the probabilities of the states with q jobs, A_q the arrival rates from level q
    // to q + 1, D_q the service rates from q to q - 1 and Lambda_q the total rates out,
    //   pi_K = pi_{K-1} R_{K-1},  R_{q-1} = A_{q-1} M_q^{-1},  M_q = Lambda_q - R_q D_{q+1}
    // (M_K = Lambda_K), and pi_0 M_0 = 0. Every R and pi is made of products and solves of
    // M-matrices with nonnegative right-hand sides: small probabilities keep their relative
    // accuracy (a plain solve of the whole chain loses it at light load).
    std::vector<std::vector<std::size_t>> level(static_cast<std::size_t>(K) + 1);
    std::vector<std::size_t> pos(S);
    for (std::size_t i = 0; i < S; ++i) {
      if (!keep[i]) continue;
      auto& members = level[static_cast<std::size_t>(jobs_of(states[i]))];
      pos[i] = members.size();
      members.push_back(i);
    }
    using Matrix = std::vector<std::vector<double>>;
    const auto between = [&](std::size_t q, std::size_t r) {  // rates from level q to level r
      Matrix m(level[q].size(), std::vector<double>(level[r].size(), 0.0));
      for (std::size_t a = 0; a < level[q].size(); ++a)
        for (const auto& [j, rate] : from[level[q][a]])
          if (keep[j] && static_cast<std::size_t>(jobs_of(states[j])) == r) m[a][pos[j]] += rate;
      return m;
    };
    const auto Kz = static_cast<std::size_t>(K);
    std::vector<Matrix> R(Kz);  // R[q]: level q to q + 1
    Matrix M;                   // M_q, from the top down
    for (std::size_t q = Kz + 1; q-- > 0;) {
      M.assign(level[q].size(), std::vector<double>(level[q].size(), 0.0));
      for (std::size_t a = 0; a < level[q].size(); ++a) M[a][a] = out[level[q][a]];
      if (q < Kz) {
        const Matrix down = between(q + 1, q);
        for (std::size_t a = 0; a < level[q].size(); ++a)
          for (std::size_t c = 0; c < level[q + 1].size(); ++c)
            if (R[q][a][c] != 0.0)
              for (std::size_t b2 = 0; b2 < level[q].size(); ++b2)
                M[a][b2] -= R[q][a][c] * down[c][b2];
      }
      if (q > 0) R[q - 1] = solve_right(between(q - 1, q), M);
    }
    // pi_0 M_0 = 0 with the last column replaced by ones (sum pi_0 = 1), then upwards.
    for (auto& row : M) row.back() = 1.0;
    Matrix unit(1, std::vector<double>(level[0].size(), 0.0));
    unit[0].back() = 1.0;
    std::vector<double> pi(S, 0.0);
    std::vector<double> below = solve_right(unit, M)[0];
    for (std::size_t q = 0;; ++q) {
      for (std::size_t a = 0; a < level[q].size(); ++a) pi[level[q][a]] = below[a];
      if (q == Kz) break;
      std::vector<double> above(level[q + 1].size(), 0.0);
      for (std::size_t a = 0; a < below.size(); ++a)
        for (std::size_t c = 0; c < above.size(); ++c) above[c] += below[a] * R[q][a][c];
      below = std::move(above);
    }
    const double total = std::accumulate(pi.begin(), pi.end(), 0.0);
    for (double& x : pi) x /= total;

    for (std::size_t i = 0; i < S; ++i) {
      const State& s = states[i];
      const auto sep = static_cast<std::size_t>(std::find(s.begin() + 1, s.end(), -1) - s.begin());
      const auto waiting = s.size() - sep - 1;
      const int q = std::popcount(static_cast<unsigned>(s[0])) + static_cast<int>(waiting);
      pmf[static_cast<std::size_t>(q)] += pi[i];
      EQ += q * pi[i];
      EQ2 += static_cast<double>(q) * q * pi[i];
      for (std::size_t k = sep + 1; k < s.size(); ++k) EW[static_cast<std::size_t>(s[k])] += pi[i];
      for (const Move& m : moves(s))
        if (m.type >= 0)
          start[static_cast<std::size_t>(m.type)][static_cast<std::size_t>(m.server)] +=
              pi[i] * m.rate;
    }
  }

  // X with X M = B (Gaussian elimination with partial pivoting on M^T).
  static std::vector<std::vector<double>> solve_right(std::vector<std::vector<double>> B,
                                                      const std::vector<std::vector<double>>& M) {
    const std::size_t n = M.size();
    std::vector<std::vector<double>> T(n, std::vector<double>(n));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) T[i][j] = M[j][i];
    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    for (std::size_t c = 0; c < n; ++c) {
      std::size_t p = c;
      for (std::size_t r = c + 1; r < n; ++r)
        if (std::abs(T[r][c]) > std::abs(T[p][c])) p = r;
      std::swap(T[c], T[p]);
      std::swap(perm[c], perm[p]);
      for (std::size_t r = c + 1; r < n; ++r) {
        const double f = T[r][c] /= T[c][c];
        if (f != 0.0)
          for (std::size_t k = c + 1; k < n; ++k) T[r][k] -= f * T[c][k];
      }
    }
    for (auto& row : B) {  // T x = row (transposed system), then x is the row of X
      std::vector<double> x(n);
      for (std::size_t i = 0; i < n; ++i) {
        double sum = row[perm[i]];
        for (std::size_t k = 0; k < i; ++k) sum -= T[i][k] * x[k];
        x[i] = sum;
      }
      for (std::size_t i = n; i-- > 0;) {
        for (std::size_t k = i + 1; k < n; ++k) x[i] -= T[i][k] * x[k];
        x[i] /= T[i][i];
      }
      row = std::move(x);
    }
    return B;
  }

  static int jobs_of(const std::vector<int>& s) {
    const auto sep = static_cast<std::size_t>(std::find(s.begin() + 1, s.end(), -1) - s.begin());
    return std::popcount(static_cast<unsigned>(s[0])) + static_cast<int>(s.size() - sep - 1);
  }

  // E[Q_t] = E[W_t] + sum_m start_tm / mu_m (Little at each server).
  double EQ_type(std::size_t t, const std::vector<double>& speeds) const {
    double sum = EW[t];
    for (std::size_t n = 0; n < speeds.size(); ++n) sum += start[t][n] / speeds[n];
    return sum;
  }
};

// A random explicit family on 2..4 servers: 1..4 distinct random server sets (a server may be
// left unused), probabilities in [0.1, 1] normalised, speeds in [0.5, 2].
Instance small_instance(std::mt19937_64& gen) {
  const int N = std::uniform_int_distribution<int>(2, 4)(gen);
  const int T = std::uniform_int_distribution<int>(1, std::min(4, (1 << N) - 1))(gen);
  std::set<std::uint32_t> masks;
  std::uniform_int_distribution<std::uint32_t> mask_dist(1, (1U << N) - 1);
  while (static_cast<int>(masks.size()) < T) masks.insert(mask_dist(gen));
  std::uniform_real_distribution<double> unit(0.1, 1.0), speed(0.5, 2.0);
  std::vector<double> p;
  for (int t = 0; t < T; ++t) p.push_back(unit(gen));
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  std::vector<std::pair<std::vector<int>, double>> types;
  std::size_t t = 0;
  for (std::uint32_t m : masks) {
    std::vector<int> servers;
    for (int n = 0; n < N; ++n)
      if (m >> n & 1U) servers.push_back(n);
    types.emplace_back(servers, p[t++] / total);
  }
  std::vector<double> speeds(static_cast<std::size_t>(N));
  for (double& s : speeds) s = speed(gen);
  return {explicit_params(N, types), speeds};
}

Result run_cos(const model::System& system, int qmax, bool per_type = true) {
  Options options;
  options.policy = Policy::redundancy_cos;
  options.qmax = qmax;
  options.per_type = per_type;
  return evaluate(system, options);
}

constexpr int kTruncation = 7;  // jobs; keeps the chains below ~1500 states

// Refusing arrivals at K jobs keeps the product form (every state's balance holds), so the
// truncated chain is the stationary law conditioned on Q <= K: its P(Q = q) equals the engine's
// pmf renormalised over 0..K, at any stable load, with no truncation error.
TEST(ExactCancelOnStart, TruncatedChainIsTheProductFormConditionedAtAnyLoad) {
  std::mt19937_64 gen(16033);
  std::uniform_real_distribution<double> load(0.1, 0.9);
  double worst = 0.0;
  for (int trial = 0; trial < 25; ++trial) {
    const Instance inst = small_instance(gen);
    const model::Family family(inst.params);
    const auto types = family.enumerate();
    const double L = load(gen) * max_stable_rate(types, inst.speeds);
    const auto system = make_system(inst.params, L / inst.params.N, inst.speeds);
    const Result r = run_cos(system, kTruncation, false);
    ASSERT_TRUE(r.stable) << trial;
    const CosChain chain(types, inst.speeds, L, kTruncation);
    const double kept = std::accumulate(r.pmf.begin(), r.pmf.end(), 0.0);
    for (int q = 0; q <= kTruncation; ++q) {
      const auto k = static_cast<std::size_t>(q);
      const double err = rel_diff(r.pmf[k] / kept, chain.pmf[k]);
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-10) << "trial " << trial << " q " << q;
    }
  }
  std::printf("cancel-on-start, truncated pmf: max relative error %.3g over 25 systems\n", worst);
}

// C, E[Q], Var[Q], E[T], the pmf and every E[Q_S], E[T_S] at light load, where truncation
// changes nothing at 1e-10: Q is below an M/M/1 queue with ratio r = L / min_n mu_n (a busy server
// finishes at rate >= min mu_n), so P(Q > K) <= r^(K+1), and the chain is the stationary law
// conditioned on Q <= K (test above): every mean moves by at most
// (E[Q; Q > K] + E[X] P(Q > K)) / P(Q <= K), E[Q; Q > K] <= (K + 1/(1 - r)) r^(K+1).
TEST(ExactCancelOnStart, MeansMatchTheChainAtLightLoad) {
  std::mt19937_64 gen(16034);
  std::uniform_real_distribution<double> ratio(0.002, 0.006);
  double worst = 0.0;
  for (int trial = 0; trial < 25; ++trial) {
    const Instance inst = small_instance(gen);
    const model::Family family(inst.params);
    const auto types = family.enumerate();
    const double r_dom = ratio(gen);
    const double L = r_dom * *std::min_element(inst.speeds.begin(), inst.speeds.end());
    const auto system = make_system(inst.params, L / inst.params.N, inst.speeds);
    const Result r = run_cos(system, 3);
    ASSERT_TRUE(r.stable) << trial;
    const CosChain chain(types, inst.speeds, L, kTruncation);
    const double tail = std::pow(r_dom, kTruncation + 1);
    const double tail_first = (kTruncation + 1.0 / (1.0 - r_dom)) * tail;
    const auto check = [&](double exact, double brute, double bound, const char* what) {
      ASSERT_LT(bound, 1e-11 * exact) << trial << " " << what;  // truncation is negligible
      const double err = rel_diff(exact, brute);
      worst = std::max(worst, err);
      EXPECT_LT(err, 1e-10) << "trial " << trial << " " << what;
    };
    check(r.C, chain.pmf[0], 2 * tail, "C");
    for (std::size_t q = 1; q <= 3; ++q) check(r.pmf[q], chain.pmf[q], 2 * tail * r.pmf[q], "pmf");
    check(r.EQ, chain.EQ, 2 * (tail_first + r.EQ * tail), "EQ");
    check(r.ET, chain.EQ / L, 2 * (tail_first + r.EQ * tail) / L, "ET");
    const double second = r.VarQ + r.EQ * r.EQ;
    check(second, chain.EQ2, 2 * (kTruncation + 1.0) * tail_first / (1 - r_dom), "E[Q^2]");
    ASSERT_EQ(r.EQ_type.size(), types.size());
    for (std::size_t t = 0; t < types.size(); ++t) {
      const double brute = chain.EQ_type(t, inst.speeds);
      check(r.EQ_type[t], brute, 2 * tail_first, "EQ_type");
      check(r.ET_type[t], brute / (L * types[t].p), 2 * tail_first / (L * types[t].p), "ET_type");
    }
    EXPECT_TRUE(r.ER_server.empty());
  }
  std::printf("cancel-on-start, light-load means: max relative error %.3g over 25 systems\n",
              worst);
}

// Identities at any load: every type enters service at its arrival rate (arrivals that start at
// once plus waiting jobs taken by a server that finishes), the per-type means (Little at each
// server) add up to E[Q] of the forward pass, and E[Q], Var[Q] equal the moments of the pmf.
TEST(ExactCancelOnStart, FlowsAndSumsAgreeAtAnyLoad) {
  std::mt19937_64 gen(16035);
  std::uniform_real_distribution<double> load(0.1, 0.95);
  for (int trial = 0; trial < 40; ++trial) {
    const Instance inst = trial < 20 ? small_instance(gen) : random_instance(gen);
    const model::Family family(inst.params);
    const auto types = family.enumerate();
    const double L = load(gen) * max_stable_rate(types, inst.speeds);
    const auto m = detail::cancel_on_start_engine(types, inst.speeds, L, 0, true);
    ASSERT_TRUE(m.violating_set.empty());
    double sum = 0.0;
    for (std::size_t t = 0; t < types.size(); ++t) {
      EXPECT_NEAR(m.type_flow[t], 1.0, 1e-12) << trial << " type " << t;
      EXPECT_LE(m.EW_type[t], m.EQ_type[t]);
      sum += m.EQ_type[t];
    }
    EXPECT_LT(rel_diff(sum, m.EQ), 1e-12) << trial;
  }
  // Moments of the pmf (qmax large enough that the tail is below 1e-15).
  std::mt19937_64 gen2(16036);
  for (int trial = 0; trial < 5; ++trial) {
    const Instance inst = small_instance(gen2);
    const model::Family family(inst.params);
    const auto types = family.enumerate();
    const double L = 0.7 * max_stable_rate(types, inst.speeds);
    const auto system = make_system(inst.params, L / inst.params.N, inst.speeds);
    const Result r = run_cos(system, 400, false);
    Sum mass, first, second;
    for (std::size_t q = 0; q < r.pmf.size(); ++q) {
      mass.add(r.pmf[q]);
      first.add(static_cast<double>(q) * r.pmf[q]);
      second.add(static_cast<double>(q * q) * r.pmf[q]);
    }
    EXPECT_NEAR(mass.value(), 1.0, 1e-12) << trial;
    EXPECT_LT(rel_diff(first.value(), r.EQ), 1e-11) << trial;
    EXPECT_LT(rel_diff(second.value() - first.value() * first.value(), r.VarQ), 1e-10) << trial;
  }
}

// Classical queues: one type on all N identical servers is M/M/N (Erlang C); singletons are
// independent M/M/1 queues.
TEST(ExactCancelOnStart, ClassicalQueues) {
  for (int N : {1, 2, 3, 5}) {
    const double a = 0.8 * N;  // offered load L / mu
    const auto system =
        make_system(explicit_params(N, {{[N] {
                                           std::vector<int> all(static_cast<std::size_t>(N));
                                           std::iota(all.begin(), all.end(), 0);
                                           return all;
                                         }(),
                                         1.0}}),
                    a / N);
    const Result r = run_cos(system, 6);
    double partial = 0.0, term = 1.0;
    for (int k = 0; k < N; ++k) {
      partial += term;
      term *= a / (k + 1);
    }
    const double rho = a / N;  // term = a^N / N!
    const double P0 = 1.0 / (partial + term / (1 - rho));
    const double wait = P0 * term * rho / ((1 - rho) * (1 - rho));  // E[number waiting]
    EXPECT_LT(rel_diff(r.C, P0), 1e-13) << N;
    EXPECT_LT(rel_diff(r.EQ, wait + a), 1e-13) << N;
    EXPECT_LT(rel_diff(r.EQ_type[0], wait + a), 1e-13) << N;
    double pk = P0;
    for (int q = 0; q <= 6; ++q) {
      EXPECT_LT(rel_diff(r.pmf[static_cast<std::size_t>(q)], pk), 1e-13) << N << " q " << q;
      pk *= a / std::min(q + 1, N);
    }
  }
  const std::vector<double> speeds{0.7, 1.3, 2.0};
  const auto system =
      make_system(explicit_params(3, {{{0}, 0.2}, {{1}, 0.3}, {{2}, 0.5}}), 0.4, speeds);
  const Result r = run_cos(system, 0);
  double total = 0.0;
  for (std::size_t n = 0; n < 3; ++n) {
    const double rho = 1.2 * r.type_p[n] / speeds[n];
    EXPECT_LT(rel_diff(r.EQ_type[n], rho / (1 - rho)), 1e-13) << n;
    total += rho / (1 - rho);
  }
  EXPECT_LT(rel_diff(r.EQ, total), 1e-13);
}

TEST(ExactCancelOnStart, ValidationNamesTheOption) {
  const auto system = make_system(complete_params(4, 2), 0.5);
  Options o;
  o.policy = Policy::redundancy_cos;
  EXPECT_TRUE(validate(system, o).ok());
  o.engine = Engine::symmetric;
  EXPECT_EQ(validate(system, o).option, "engine");
  o.engine = Engine::automatic;
  o.joint_qmax = 5;
  EXPECT_EQ(validate(system, o).option, "joint_qmax");
  EXPECT_THROW(evaluate(system, o), InputError);
  o.joint_qmax = -1;
  const auto big = make_system(complete_params(kMaxCancelOnStartServers + 1, 2), 0.5);
  EXPECT_EQ(validate(big, o).option, "N");
  // Unstable input: a typed result naming the set, as for cancel-on-completion.
  const Result r = run_cos(make_system(explicit_params(2, {{{0}, 0.9}, {{0, 1}, 0.1}}), 0.6), 0);
  EXPECT_FALSE(r.stable);
  EXPECT_NE(r.unstable_reason.find("1"), std::string::npos);
}

}  // namespace
}  // namespace qsweep::exact::test
